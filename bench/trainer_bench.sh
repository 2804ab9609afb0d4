#!/usr/bin/env bash
# Trainer throughput and whole-process time against plain PyTorch (Python)
# and a bare LibTorch loop, on digits-train's default config (30 epochs,
# batch 64, Adam, cosine warmup), with 1 and 2 threads.
#
#   bench/trainer_bench.sh [build-dir] [runs]
#
# Needs bin/digits-train and bin/trainer_bare_loop (-DTRIALSHIM_BUILD_
# BENCHMARKS=ON), /usr/bin/python3 with python3-torch, and hyperfine.
# Steady-state samples/s counts the training phase of epochs 1..29 (epoch
# 0 pays warm-up); each figure is the median of `runs` interleaved runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
runs="${2:-5}"
bin="$build/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# The trainer logs "train R samples/s" per epoch over equal epochs: the
# aggregate rate over epochs 1.. is the harmonic mean of R.
trainer_rate() {
  rm -rf run
  "$bin/digits-train" hydra.run.dir=run trainer.enable_progress_bar=false \
    trainer.num_threads="$1" 2>&1 |
    grep -oE 'train [0-9]+ samples/s' | tail -n +2 |
    awk '{s += 1 / $2; n++} END {printf "%.0f\n", n / s}'
}
json_rate() { sed -E 's/.*"samples_per_s": ([0-9.]+).*/\1/'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for threads in 1 2; do
  : > py.txt; : > bare.txt; : > trainer.txt
  for _ in $(seq "$runs"); do
    /usr/bin/python3 "$root/bench/digits_torch.py" "$threads" | json_rate >> py.txt
    "$bin/trainer_bare_loop" "$threads" | json_rate >> bare.txt
    trainer_rate "$threads" >> trainer.txt
  done
  py=$(median < py.txt); bare=$(median < bare.txt); tr=$(median < trainer.txt)
  echo "threads=$threads samples/s (median of $runs): python=$py bare=$bare trainer=$tr" \
       "trainer/python=$(awk "BEGIN {printf \"%.2f\", $tr / $py}")" \
       "trainer/bare=$(awk "BEGIN {printf \"%.3f\", $tr / $bare}")"
done

# Whole process: start-up, data, 30 epochs with validation; the trainer also
# writes .hydra/, metrics.csv, checkpoints and model.pt.
for threads in 1 2; do
  hyperfine --warmup 1 --runs "$runs" --export-json "hf$threads.json" \
    -n "python threads=$threads" "/usr/bin/python3 $root/bench/digits_torch.py $threads" \
    -n "digits-train threads=$threads" \
    "rm -rf run; $bin/digits-train hydra.run.dir=run trainer.enable_progress_bar=false trainer.num_threads=$threads" \
    2>&1 | grep -E 'Time|±|digits|python' || true
done
