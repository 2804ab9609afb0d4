#!/usr/bin/env bash
# trialshim sweep: the runner's own cost per trial, and how well it keeps two
# cores busy.
#
#   bench/sweep_bench.sh [TRIALSHIM]   (default: build/bin/trialshim)
#
# 1. Overhead: N trials of a trivial command (sh writing one metric line) run
#    one at a time by `trialshim sweep`, against the same command run N times
#    from a shell loop. The difference per trial is what the runner adds
#    (fork/exec, environment, reading the metric file, rewriting
#    trials.json/csv/report.html on every state change).
# 2. Parallel efficiency: 4 CPU-bound trials (~1 s each) with --parallel 2
#    on 2 cores, against the ideal of 2 x one trial's time.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SHIM=${1:-build/bin/trialshim}
N=${N:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

job() {  # job NAME MAX PARALLEL SCRIPT
  minimal_job "$work/$1.yaml" "$1" "$4" "$2" "$3"
}

metric='printf "{\"score\": \"1.0\", \"trial\": \"%s\"}\n" "$CLOUD_ML_TRIAL_ID" > "$CLOUD_ML_HP_METRIC_FILE"'
job trivial "$N" 1 "$metric"

# Bare: the same command, N times, from a shell loop. CPU time (user+sys of
# the whole process tree, from bash's `time`) is steadier than wall time on
# a loaded machine.
TIMEFORMAT='%U %S'
bare_loop() {
  for i in $(seq "$N"); do
    CLOUD_ML_TRIAL_ID=$i CLOUD_ML_HP_METRIC_FILE="$work/bare.metrics" \
      /bin/sh -c "$metric" trial --x=$i
  done
}
t0=$(now)
bare_cpu=$( { time bare_loop > /dev/null 2>&1; } 2>&1 )
t1=$(now)
sweep_cpu=$( { time "$SHIM" sweep "$work/trivial.yaml" --out "$work/out1" \
  > /dev/null 2>&1; } 2>&1 )
t2=$(now)
per() { echo "($1) * 1000 / $N" | bc -l; }
bare=$(per "$t1 - $t0")
swept=$(per "$t2 - $t1")
bare_c=$(per "$(echo "$bare_cpu" | tr ' ' '+')")
swept_c=$(per "$(echo "$sweep_cpu" | tr ' ' '+')")
printf 'trivial trial, %d trials one at a time (load average %s)\n' "$N" \
  "$(cut -d' ' -f1 /proc/loadavg)"
printf '                    wall ms/trial  CPU ms/trial\n'
printf '  shell loop        %13.2f  %12.2f\n' "$bare" "$bare_c"
printf '  trialshim sweep   %13.2f  %12.2f\n' "$swept" "$swept_c"
printf '  runner overhead   %13.2f  %12.2f\n' "$(echo "$swept - $bare" | bc -l)" \
  "$(echo "$swept_c - $bare_c" | bc -l)"

# CPU-bound trial of about a second on this machine.
busy='i=0; while [ $i -lt ${BUSY:-1500000} ]; do i=$((i+1)); done; '"$metric"
job busy1 1 1 "$busy"
job busy4 4 2 "$busy"
t0=$(now)
"$SHIM" sweep "$work/busy1.yaml" --out "$work/out2" > /dev/null 2>&1
t1=$(now)
"$SHIM" sweep "$work/busy4.yaml" --out "$work/out3" --parallel 1 > /dev/null 2>&1
t2=$(now)
"$SHIM" sweep "$work/busy4.yaml" --out "$work/out4" > /dev/null 2>&1
t3=$(now)
one=$(echo "$t1 - $t0" | bc -l)
serial=$(echo "$t2 - $t1" | bc -l)
four=$(echo "$t3 - $t2" | bc -l)
ideal=$(echo "2 * $one" | bc -l)
printf '4 CPU-bound trials, %s cores (load average %s)\n' "$(nproc)" \
  "$(cut -d' ' -f1 /proc/loadavg)"
printf '  one trial               %6.2f s\n' "$one"
printf '  4 trials, --parallel 1  %6.2f s\n' "$serial"
printf '  4 trials, --parallel 2  %6.2f s (ideal %.2f s)\n' "$four" "$ideal"
printf '  efficiency              %6.1f %% (speed-up %.2fx of 2x)\n' \
  "$(echo "100 * $ideal / $four" | bc -l)" "$(echo "$serial / $four" | bc -l)"
