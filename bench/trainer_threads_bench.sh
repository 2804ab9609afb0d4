#!/usr/bin/env bash
# Threads against batch size: steady-state training samples/s of
# digits-train and of the bare LibTorch loop at trainer.num_threads 1 and 2
# (LibTorch's pool and OpenBLAS's together), for batch 64, 256 and 1024.
#
#   bench/trainer_threads_bench.sh [build-dir] [runs] [epochs]
#
# Runs are interleaved (every configuration once per round) so that a
# change in machine load hits all of them alike; prints min / median / max
# of `runs` rounds and the load average before and after.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
runs="${2:-3}"
epochs="${3:-15}"
bin="$build/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

# Harmonic mean of the per-epoch rates after epoch 0 (equal epochs).
trainer_rate() {
  rm -rf run
  "$bin/digits-train" hydra.run.dir=run trainer.enable_progress_bar=false \
    trainer.enable_checkpointing=false trainer.max_epochs="$epochs" \
    trainer.num_threads="$1" data.batch_size="$2" 2>&1 |
    grep -oE 'train [0-9]+ samples/s' | tail -n +2 |
    awk '{s += 1 / $2; n++} END {printf "%.0f\n", n / s}'
}
bare_rate() {
  "$bin/trainer_bare_loop" "$1" "$epochs" "$2" |
    sed -E 's/.*"samples_per_s": ([0-9.]+).*/\1/' | awk '{printf "%.0f\n", $1}'
}
stats() { sort -n | awk '{a[NR]=$1} END {m = NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%d / %d / %d", a[1], m, a[NR]}'; }

echo "machine: $(nproc) cores, load before $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
  for batch in 64 256 1024; do
    for threads in 1 2; do
      trainer_rate "$threads" "$batch" >> "trainer-$batch-$threads.txt"
      bare_rate "$threads" "$batch" >> "bare-$batch-$threads.txt"
    done
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
echo "samples/s, min / median / max of $runs runs, $epochs epochs"
for batch in 64 256 1024; do
  for threads in 1 2; do
    echo "batch=$batch threads=$threads" \
      "trainer: $(stats < "trainer-$batch-$threads.txt")" \
      "bare: $(stats < "bare-$batch-$threads.txt")"
  done
done
