#!/usr/bin/env bash
# tests/gpu/run.sh OUT [DIST]: the trainer's GPU checks and a side-by-side
# benchmark, in one call of at most 8 minutes on a GPU machine that has
# python3 with torch 2.11.0+cu130 and Lightning (docs/gpu.md). DIST is what
# `make gpu-dist` lays out (bin/: digits-train, trainer_test, gpu_bench; lib/:
# the Debian libraries they need beside LibTorch); LibTorch and CUDA come
# from that python's torch. Everything is written into OUT:
#   env.txt        the GPU, the drivers, `digits-train --version`
#   gtest.txt      trainer_test's Gpu*, GradScaler* and StepLog* tests
#   digits.txt     digits-train's val_acc per device and precision (goal:
#                  each GPU run within 0.5 point of the CPU run), the
#                  DeviceStatsMonitor columns, one run resumed GPU -> CPU
#                  -> GPU, and ddp over NCCL with one rank
#   bench.jsonl    steps/s: trialshim, a bare LibTorch loop, Lightning
#   summary.txt    every check's verdict and the benchmark's ratios
# Exit status: 0 when every check passed.
set -u
out=$(realpath -m "${1:?usage: tests/gpu/run.sh OUT [DIST]}")
here=$(cd "$(dirname "$0")/../.." && pwd)
dist=$(realpath -m "${2:-$here/gpu-dist}")
mkdir -p "$out"
cd "$here"
summary=$out/summary.txt
: >"$summary"
failed=0
say() { echo "$*" | tee -a "$summary"; }
check() {  # check NAME COMMAND...: runs it, records PASS/FAIL
  local name=$1; shift
  if "$@"; then say "PASS $name"; else say "FAIL $name"; failed=1; fi
}

py=${PYTHON:-python3}
torch_dir=$($py -c 'import os, torch; print(os.path.dirname(torch.__file__))') || {
  say "FAIL no python torch"; exit 1; }
libs=$dist/lib:$torch_dir/lib
for d in "$torch_dir"/../nvidia/*/lib "$torch_dir"/../nvidia/cu13/lib; do
  [[ -d $d ]] && libs=$libs:$d
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bin=$dist/bin
work=$(mktemp -d)
# The tests read their data from the checkout the build was made in: on
# this machine, that is this checkout.
src=$(cat "$dist/source_dir")
if [[ -n $src && ! -e $src ]]; then
  mkdir -p "$(dirname "$src")" && ln -s "$here" "$src"
fi

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  $py -c 'import torch; print("python torch", torch.__version__, torch.version.cuda)'
  "$bin/digits-train" --version
  ldd "$bin/digits-train" | grep -E 'torch|cuda|not found'
} >"$out/env.txt" 2>&1
check "digits-train sees the GPU" grep -q "CUDA device(s): 0 " "$out/env.txt"

timeout 240 "$bin/trainer_test" \
  --gtest_filter='GpuTest.*:GradScalerTest.*:StepLogTest.*' >"$out/gtest.txt" 2>&1
check "trainer_test Gpu*, GradScaler*, StepLog* (gtest.txt)" \
  eval "grep -q '^\[  PASSED  \]' '$out/gtest.txt' && ! grep -q -E 'FAILED|SKIPPED' '$out/gtest.txt'"

# digits-train's default config (30 epochs, seed 42), on each device and
# precision: the reported val_acc.
digits() {  # digits NAME ARGS...
  local name=$1; shift
  timeout 120 "$bin/digits-train" hydra.run.dir="$work/$name" \
    trainer.enable_progress_bar=false "$@" >"$work/$name.log" 2>&1
  grep -o 'val_acc=[0-9.]*' "$work/$name.log" | tail -1 | cut -d= -f2
}
digits_txt=$out/digits.txt
printf 'run\tval_acc\n' >"$digits_txt"
cpu=$(digits cpu trainer.accelerator=cpu)
printf 'cpu 32-true\t%s\n' "$cpu" >>"$digits_txt"
for p in 32-true bf16-mixed 16-mixed; do
  # DeviceStatsMonitor rides along: the CUDA allocator's figures.
  acc=$(digits "gpu-$p" trainer.accelerator=gpu trainer.precision=$p \
          +callbacks.device_stats._target_=lightning.pytorch.callbacks.DeviceStatsMonitor)
  printf 'gpu %s\t%s\n' "$p" "$acc" >>"$digits_txt"
  grep -E 'rror' "$work/gpu-$p.log" | head -3 >>"$digits_txt"
  check "digits gpu $p val_acc $acc within 0.5 point of the CPU's $cpu" \
    $py -c "import sys; sys.exit(not abs(float('${acc:-0}') - float('${cpu:-9}')) <= 0.005)"
done
grep -E 'skipped|WARN' "$work/gpu-16-mixed.log" | head -3 >>"$digits_txt"
echo "== DeviceStatsMonitor's columns (gpu 32-true)" >>"$digits_txt"
head -1 "$work/gpu-32-true/metrics.csv" | tr ',' '\n' | grep DeviceStats >>"$digits_txt"
check "DeviceStatsMonitor logs the CUDA allocator (digits.txt)" \
  grep -q 'DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.current' "$digits_txt"

# One run, resumed across devices: 10 epochs on the GPU, to 20 on the CPU,
# to 30 on the GPU.
resumed=0
for leg in "gpu 10" "cpu 20" "gpu 30"; do
  set -- $leg
  echo "== resume: $1 to epoch $2" >>"$digits_txt"
  timeout 120 "$bin/digits-train" hydra.run.dir="$work/resume" \
    trainer.enable_progress_bar=false trainer.accelerator=$1 \
    trainer.max_epochs=$2 >"$work/leg.log" 2>&1
  grep -E 'Resumed|LibTorch|rror' "$work/leg.log" >>"$digits_txt"
  grep -E 'Epoch [0-9]+:' "$work/leg.log" | tail -1 >>"$digits_txt"
  grep -q 'Resumed from' "$work/leg.log" && resumed=$((resumed + 1))
done
check "resume GPU -> CPU -> GPU (digits.txt)" test $resumed = 2

echo "== ddp over NCCL, one rank" >>"$digits_txt"
WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
  MASTER_PORT=29517 timeout 120 "$bin/digits-train" \
  hydra.run.dir="$work/nccl" trainer.enable_progress_bar=false \
  trainer.strategy=ddp trainer.max_epochs=3 >"$work/nccl.log" 2>&1
grep -E 'ddp|rror|Epoch 2:' "$work/nccl.log" >>"$digits_txt"
check "ddp over NCCL, one rank (digits.txt)" grep -q 'rank 0 of 1 (nccl)' "$work/nccl.log"

# Steps per second, the three runners alternated per configuration.
: >"$out/bench.jsonl"
for cfg in "small 32-true 3000" "large 32-true 600" "large bf16-mixed 1500" \
           "large 16-mixed 1500"; do
  set -- $cfg
  for runner in bare trainer lightning; do
    if [[ $runner == lightning ]]; then
      timeout 150 $py bench/gpu_lightning.py "$1" "$2" "$3" 50 2>/dev/null | tail -1
    else
      timeout 120 "$bin/gpu_bench" $runner "$1" "$2" "$3" 50 2>/dev/null | tail -1
    fi
  done >>"$out/bench.jsonl"
done
$py - "$out/bench.jsonl" >>"$summary" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in rows:
    by.setdefault((r["model"], r["precision"]), {})[r["runner"].split()[0]] = r["steps_per_s"]
for (model, prec), v in by.items():
    t, b, l = v.get("trialshim"), v.get("libtorch-loop"), v.get("lightning")
    line = f"bench {model} {prec}: trialshim {t} steps/s, bare loop {b}, lightning {l}"
    if t and b: line += f"; trialshim/bare {t / b:.3f} (goal >= 0.97)"
    if t and l: line += f"; trialshim/lightning {t / l:.2f}" + (" (goal >= 2)" if model == "small" else "")
    print(line)
PY
rm -rf "$work"
say "done: $([[ $failed == 0 ]] && echo all checks passed || echo some checks FAILED)"
exit $failed
