#!/usr/bin/env bash
# trialshim sweep: what giving a trial a working directory of its own costs
# when the working directory holds many entries (issue 33.1).
#
#   bench/workdir_bench.sh [TRIALSHIM]   (default: build/bin/trialshim)
#
# N trials (one at a time) of a trivial command (sh writing one metric
# line), run from a directory of ENTRIES empty files, with
# --private-workdir overlay (one overlay mount per trial) and links (one
# symbolic link per entry per trial); each against the same sweep from an
# empty directory. The difference per trial is the start-up cost of the
# private working directory at that size.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SHIM=$(realpath "${1:-build/bin/trialshim}")
N=${N:-4}
ENTRIES=${ENTRIES:-100000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/empty" "$work/full"
minimal_job "$work/job.yaml" workdir \
  'echo "{\"score\": \"1\"}" > "$CLOUD_ML_HP_METRIC_FILE"'
(cd "$work/full" && seq -f 'e%.0f' 1 "$ENTRIES" | xargs touch)

per_trial() {  # per_trial DIR VIEW OUT: wall ms per trial
  local t0 t1
  t0=$(now)
  (cd "$1" && "$SHIM" sweep "$work/job.yaml" --max-trials "$N" \
     --private-workdir "$2" --out "$work/$3" > /dev/null 2>&1)
  t1=$(now)
  echo "($t1 - $t0) * 1000 / $N" | bc -l
}

printf '%d trials, one at a time, %d entries (load average %s)\n' "$N" \
  "$ENTRIES" "$(cut -d' ' -f1 /proc/loadavg)"
printf '            empty dir ms/trial  %d entries ms/trial\n' "$ENTRIES"
for view in overlay links; do
  e=$(per_trial "$work/empty" "$view" "$view-empty")
  f=$(per_trial "$work/full" "$view" "$view-full")
  printf '  %-8s  %18.1f  %19.1f\n' "$view" "$e" "$f"
done
