#!/usr/bin/env bash
# Whole-process `trialshim job` on lightning-hydra-template-sized trees:
# examples/digits/conf-lightning with hparams_search=digits_optuna (12
# groups, 23 files) and the template's own configs/ with
# hparams_search=mnist_optuna experiment=example
# (tests/data/optuna_sweeper/trees/template). Each run composes the config,
# reads the Optuna sweeper's search space, writes the spec and checks it as
# `trialshim check` does (a second composition). The goal: well under 100 ms.
#
# Usage: bench/job_bench.sh [path/to/trialshim]   (default build/bin/trialshim)
# Env:   RUNS (default 200), WARMUP (default 10).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:-$ROOT/build/bin/trialshim}")
RUNS=${RUNS:-200}
WARMUP=${WARMUP:-10}
[[ -x $BIN ]] || { echo "no executable $BIN (build it first)" >&2; exit 2; }

WHERE=(--image us-docker.pkg.dev/p/r/t:1 --output-dir gs://b/p)
DIGITS=("$BIN" job --config-path "$ROOT/examples/digits/conf-lightning"
  --config-name config "${WHERE[@]}" hparams_search=digits_optuna
  -- "$ROOT/build/bin/app_task")
TEMPLATE=("$BIN" job --config-path "$ROOT/tests/data/optuna_sweeper/trees/template/configs"
  --config-name train "${WHERE[@]}" hparams_search=mnist_optuna experiment=example
  -- python3 "$ROOT/tests/data/optuna_sweeper/trees/template/src/train.py")

for name in DIGITS TEMPLATE; do
  declare -n cmd=$name
  "${cmd[@]}" >/dev/null || { echo "$name: trialshim job failed; not timing" >&2; exit 1; }
done

echo "machine: $(nproc) cores, $(uname -srm), load $(cut -d' ' -f1 /proc/loadavg); runs: $RUNS"
for name in DIGITS TEMPLATE; do
  declare -n cmd=$name
  for ((i = 0; i < WARMUP; i++)); do "${cmd[@]}" >/dev/null; done
  walls=()
  for ((i = 0; i < RUNS; i++)); do
    start=$(date +%s%N)
    "${cmd[@]}" >/dev/null
    end=$(date +%s%N)
    walls+=($(((end - start) / 1000)))
  done
  sorted=($(printf '%s\n' "${walls[@]}" | sort -n))
  median=${sorted[$((RUNS / 2))]}
  p90=${sorted[$((RUNS * 9 / 10))]}
  cpu=""
  if command -v perf >/dev/null && perf stat -x, -e task-clock /bin/true 2>/dev/null >/dev/null; then
    cpu=$(perf stat -r "$RUNS" -x, -e task-clock "${cmd[@]}" 2>&1 >/dev/null | tail -1 | cut -d, -f1)
  fi
  printf '%-9s wall median %6.2f ms  p90 %6.2f ms  cpu %s ms\n' "$name" \
    "$(echo "$median / 1000" | bc -l)" "$(echo "$p90 / 1000" | bc -l)" "${cpu:-?}"
done
