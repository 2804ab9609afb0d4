# trialshim: `make demo` and `make test` work on a fresh Debian 12 machine.
# They install the missing Debian packages (apt-get, as root; otherwise they
# print the exact command), configure CMake (Release), build, then run.

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
WITH_TORCH ?= ON
# WERROR=ON makes warnings errors in every build below (.ci/run sets it);
# unset, each build directory keeps what it was configured with.
WERROR ?=
WERROR_FLAG := $(if $(WERROR),-DTRIALSHIM_WERROR=$(WERROR))

# Build dependencies (Debian 12 package names): what `make demo` installs.
# GoogleTest is here because configuring with the tests (the default) finds it.
BUILD_DEPS := build-essential cmake pkg-config libyaml-cpp-dev libcli11-dev \
        libre2-dev nlohmann-json3-dev libeigen3-dev libgtest-dev libgmock-dev
# The tests run Python trainers (examples/vertex/train.py) as real child
# processes; the schema tests check JSON Schemas with python3-jsonschema.
DEPS := $(BUILD_DEPS) python3 python3-torch python3-omegaconf python3-jsonschema
# Fault injection in the tests (EIO on a chosen file: strace -e inject).
DEPS += strace
# The anchors' venv (make anchors), and the test of what it says without PyPI.
DEPS += python3-venv
# The report test renders report.html in headless Chromium.
DEPS += chromium
# The trainer and digits example: LibTorch, spdlog (which brings fmt), and
# protobuf + protoc for the TensorBoardLogger's event files (the tests also
# run protoc to decode them).
TORCH_DEPS := libtorch-dev libopenblas0-pthread libgloo-dev libspdlog-dev \
              zlib1g-dev libprotobuf-dev protobuf-compiler
# Only for the side-by-side benchmarks (search_bench.py compares with
# Optuna's TPE).
BENCH_DEPS := hyperfine python3-optuna

ifeq ($(WITH_TORCH),ON)
DEPS += $(TORCH_DEPS)
BUILD_DEPS += $(TORCH_DEPS)
endif

# The anchors (tests/anchors/): real Hydra 1.3.2, omegaconf 2.3.0,
# hydra-optuna-sweeper, cloudml-hypertune, Lightning 2.2.5 and TensorBoard
# from PyPI, in a venv over Debian's python3-torch. Only the tests labelled `anchors` use
# them; nothing trialshim builds or runs does.
ANCHORS_DIR ?= $(BUILD_DIR)/anchors

.PHONY: all deps demo-deps configure build test demo bench bench-deps clean format anchors test-anchors

all: build

# Installs only what is missing, so a ready machine pays nothing.
define install_missing
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing: $$missing"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	  else \
	    echo "Missing packages. Run:  sudo apt-get install -y $$missing"; exit 1; \
	  fi; \
	fi
endef

deps:
	$(call install_missing,$(DEPS))

demo-deps:
	$(call install_missing,$(BUILD_DEPS))

# Configuring every time is cheap when nothing changed, and recovers from a
# half-finished earlier configure.
CONFIGURE = cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
  -DTRIALSHIM_WITH_TORCH=$(WITH_TORCH) $(WERROR_FLAG) $(CMAKE_FLAGS)

build: deps
	$(CONFIGURE)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# A test that hangs fails after TEST_TIMEOUT seconds instead of taking CI's
# whole budget (the slowest, real Hydra running the recorded multiruns, takes
# about 35 s on a quiet 2-core machine).
TEST_TIMEOUT ?= 600
CTEST = ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS)

# Everything but the anchors' tests: no PyPI needed.
test: build
	cd $(BUILD_DIR) && $(CTEST) -LE anchors

# The anchors' venv, built once (a no-op while requirements.txt is unchanged).
anchors: deps
	tests/anchors/make_venv.sh $(ANCHORS_DIR)

# The tests that compare with the anchors live; here they fail rather than
# skip without the venv.
test-anchors: build anchors
	cd $(BUILD_DIR) && TRIALSHIM_REQUIRE_ANCHORS=1 \
	  TRIALSHIM_ANCHORS_PYTHON=$(abspath $(ANCHORS_DIR))/bin/python \
	  $(CTEST) -L anchors

# One tuning trial the way Vertex AI runs it: trialshim in `command:`, the
# trial's values appended as --key=value, the metric file printed at the end.
# It builds only the two programs it runs (the test suite is most of a full
# build) and installs only the build dependencies.
DEMO_OUT ?= $(BUILD_DIR)/demo
DEMO_TARGETS := trialshim digits-train
demo: demo-deps
	$(CONFIGURE)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS)
	rm -rf $(DEMO_OUT) && mkdir -p $(DEMO_OUT)
	CLOUD_ML_TRIAL_ID=7 CLOUD_ML_HP_METRIC_FILE=$(DEMO_OUT)/output.metrics \
	AIP_MODEL_DIR=$(DEMO_OUT)/model AIP_CHECKPOINT_DIR=$(DEMO_OUT)/checkpoints \
	  $(BUILD_DIR)/bin/trialshim -- $(BUILD_DIR)/bin/digits-train \
	  hydra.run.dir=$(DEMO_OUT)/run --optimizer.lr=0.003 --data.batch_size=64
	@echo "--- $(DEMO_OUT)/output.metrics (what Vertex AI reads):"
	@cat $(DEMO_OUT)/output.metrics

bench-deps:
	$(call install_missing,$(BENCH_DEPS))

# Every benchmark in bench/ (figures and how to read them: bench/README.md).
bench: build bench-deps
	bench/startup_bench.sh $(BUILD_DIR)/bin/trialshim
	bench/compose_bench.sh $(BUILD_DIR)/bin/trialshim
	bench/job_bench.sh $(BUILD_DIR)/bin/trialshim
	bench/sweep_bench.sh $(BUILD_DIR)/bin/trialshim
	bench/search_bench.py --build $(BUILD_DIR)
ifeq ($(WITH_TORCH),ON)
	bench/trainer_bench.sh $(BUILD_DIR)
	bench/ddp_bench.sh $(BUILD_DIR)
endif

# The trainer against PyPI's CUDA LibTorch (cmake/cuda-libtorch.txt, the
# torch the GPU machines carry; docs/gpu.md): `make gpu` builds it in
# build-gpu/ (the one download: the pinned wheels, ~760 MB), `make
# test-gpu` runs the trainer's whole CPU suite against it, and `make
# gpu-dist` lays out what tests/gpu/run.sh runs on a GPU machine.
GPU_BUILD_DIR ?= build-gpu
GPU_DIST ?= gpu-dist
GPU_TARGETS := trainer_test distributed_test ddp_worker digits-train \
               gpu_bench trialshim
.PHONY: gpu test-gpu gpu-dist
gpu: deps
	$(call install_missing,python3-pip)
	cmake/cuda_libtorch.sh $(GPU_BUILD_DIR)/libtorch
	cmake -S . -B $(GPU_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DTRIALSHIM_LIBTORCH=$(abspath $(GPU_BUILD_DIR))/libtorch $(WERROR_FLAG) $(CMAKE_FLAGS)
	cmake --build $(GPU_BUILD_DIR) -j $(JOBS) --target $(GPU_TARGETS)

test-gpu: gpu
	$(GPU_BUILD_DIR)/bin/trainer_test --gtest_brief=1
	$(GPU_BUILD_DIR)/bin/distributed_test --gtest_brief=1

gpu-dist: gpu
	tests/gpu/dist.sh $(GPU_BUILD_DIR) $(GPU_DIST)

# Hardening (tests/fuzz/README.md). `make fuzz FUZZ_SECONDS=N` builds the
# libFuzzer targets with clang (ASan+UBSan) and runs each for N seconds from
# a scratch copy of its seed corpus; it fails if any target crashes.
# `make test-sanitize` runs the GoogleTest suite (without LibTorch) under
# ASan+UBSan, asserts on (-O1 keeps it fast).
FUZZ_SECONDS ?= 60
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_DEPS := clang libclang-rt-14-dev
SANITIZE_BUILD_DIR ?= build-sanitize
.PHONY: fuzz test-sanitize

fuzz: deps
	$(call install_missing,$(FUZZ_DEPS))
	cmake -S . -B $(FUZZ_BUILD_DIR) -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=Release -DTRIALSHIM_FUZZ=ON -DTRIALSHIM_WITH_TORCH=$(WITH_TORCH) \
	  -DTRIALSHIM_BUILD_TESTS=OFF -DTRIALSHIM_BUILD_BENCHMARKS=OFF $(WERROR_FLAG)
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzzers
	tests/fuzz/run.sh $(FUZZ_BUILD_DIR)/bin $(FUZZ_SECONDS)

test-sanitize: deps
	cmake -S . -B $(SANITIZE_BUILD_DIR) -DTRIALSHIM_SANITIZE=ON \
	  -DTRIALSHIM_WITH_TORCH=OFF -DTRIALSHIM_BUILD_BENCHMARKS=OFF \
	  -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" $(WERROR_FLAG)
	cmake --build $(SANITIZE_BUILD_DIR) -j $(JOBS)
	cd $(SANITIZE_BUILD_DIR) && $(CTEST) -LE anchors

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR)
