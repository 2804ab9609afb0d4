#!/bin/sh
# Data-parallel throughput and all-reduce cost: 1 rank vs 2 ranks of
# ddp_worker (tests/trainer/ddp_worker.cc: a 64-128-64-10 MLP, the digits
# shape, on 1797 synthetic samples, SGD) started by `trialshim launch` on
# 127.0.0.1, one intra-op thread per rank. Prints samples/s and the time per
# step spent in AllReduceGradients (with overlap this is only the wait for
# what backward did not already finish). Usage:
#   bench/ddp_bench.sh [BUILD_DIR] [STEPS] [GLOBAL_BATCH]
set -eu
build=${1:-build}
steps=${2:-400}
batch=${3:-64}
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
