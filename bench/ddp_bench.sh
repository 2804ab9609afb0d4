#!/bin/sh
# Data-parallel throughput and all-reduce cost, 1 rank vs 2 ranks on
# 127.0.0.1, one intra-op thread per rank, ranks started by
# `trialshim launch`:
#   1. ddp_worker (tests/trainer/ddp_worker.cc: a 64-128-64-10 MLP, the
#      digits shape, on 1797 synthetic samples, SGD): samples/s and the time
#      per step spent in AllReduceGradients (with overlap only the wait for
#      what backward did not already finish).
#   2. digits-train with trainer.strategy=ddp: the same global batch on one
#      rank and split over two; training samples/s of the whole job (the
#      median epoch, validation and checkpoints off) and ms per optimizer
#      step, plus one process without ddp for reference.
# Usage:
#   bench/ddp_bench.sh [BUILD_DIR] [STEPS] [GLOBAL_BATCH] [DIGITS_EPOCHS]
set -eu
build=${1:-build}
steps=${2:-400}
batch=${3:-64}
epochs=${4:-12}
bin=$build/bin
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # nproc overlap
  "$bin/trialshim" launch --nproc "$1" -- "$bin/ddp_worker" --out "$out" \
    --bench 1 --steps "$steps" --global-batch "$batch" --samples 1797 \
    --overlap "$2" | sed -n 's/^\[rank 0\] //p'
}
echo "# $(nproc) cores, $steps steps, global batch $batch"
for rep in 1 2 3; do
  echo "rep $rep: 1 rank:            $(run 1 1)"
  echo "rep $rep: 2 ranks, overlap:  $(run 2 1)"
  echo "rep $rep: 2 ranks, after bw: $(run 2 0)"
done

# digits-train: prints "samples/s ms/step" of the median epoch (the first
# is dropped: start-up). A rank's log counts its own samples, so the job's
# rate is rank 0's times the number of ranks.
digits() {  # launch-nproc (0: no launch, no ddp) per-rank-batch
  n=$1
  per=$2
  set -- "$bin/digits-train" "hydra.run.dir=$out/digits$n" \
    "trainer.max_epochs=$epochs" "trainer.enable_progress_bar=false" \
    "trainer.enable_checkpointing=false" \
    "trainer.check_val_every_n_epoch=100000" "trainer.num_threads=1" \
    "model.dropout=0" "data.batch_size=$per" "hypertune.monitor=null"
  if [ "$n" -gt 0 ]; then
    set -- "$bin/trialshim" launch --nproc "$n" -- "$@" trainer.strategy=ddp
  fi
  rm -rf "$out/digits$n"
  "$@" 2>&1 | grep -v '^\[rank [1-9]' |
    sed -n 's/^.*Epoch \([0-9]*\): step \([0-9]*\) .*(\([0-9.]*\)s, train \([0-9]*\) samples\/s)$/\1 \2 \3 \4/p' |
    awk -v n="$n" 'NR > 1 { k = (n > 1 ? n : 1)
                              print $4 * k, $3 * 1000 * ($1 + 1) / $2 }' |
    sort -n |
    awk '{ r[NR] = $1; ms[NR] = $2 }
      END { m = int((NR + 1) / 2); printf "%d samples/s, %.3f ms/step", r[m], ms[m] }'
}
echo "# digits-train, $epochs epochs, global batch $batch"
for rep in 1 2 3; do
  echo "rep $rep: no ddp:      $(digits 0 "$batch")"
  echo "rep $rep: ddp, 1 rank:  $(digits 1 "$batch")"
  echo "rep $rep: ddp, 2 ranks: $(digits 2 $((batch / 2)))"
done
