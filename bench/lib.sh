# Shared by the sweep benches (sweep_bench.sh, workdir_bench.sh); sourced,
# not run. A job spec as small as `trialshim sweep` takes: one metric, one
# integer parameter drawn at random, and a shell command for the trial.

now() { date +%s.%N; }

# minimal_job FILE NAME SCRIPT [MAX PARALLEL]: writes FILE, a job whose
# trial is `/bin/sh -c SCRIPT trial` (SCRIPT may not hold a single quote:
# it is a single-quoted YAML scalar). Without MAX and PARALLEL the spec
# leaves the counts to the sweep's flags.
minimal_job() {
  {
    echo "displayName: $2"
    if [ $# -ge 5 ]; then
      echo "maxTrialCount: $4"
      echo "parallelTrialCount: $5"
    fi
    cat <<YAML
studySpec:
  metrics: [{metricId: score, goal: MAXIMIZE}]
  parameters:
  - {parameterId: x, integerValueSpec: {minValue: 1, maxValue: 1000000}}
  algorithm: RANDOM_SEARCH
trialJobSpec:
  workerPoolSpecs:
  - containerSpec:
      imageUri: none
      command: [/bin/sh, -c, '$3', trial]
YAML
  } > "$1"
}
