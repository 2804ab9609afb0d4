#!/usr/bin/env bash
# Whole-process start-up of a wrapped trial: `trialshim -- /bin/true` with
# ten Vertex-style arguments, side by side with the seed's bash+sed wrapper
# (`/bin/true $(echo $@ | sed -r 's/--([^= ]*)[= ]([^ ]*)/\1=\2/g')`) and
# with bare `/bin/true`, plus trialshim with config checks (--config-path on
# the conformance `train` tree: YAML load, composition, key resolution).
# /bin/true does no work, so every figure is pure wrapper overhead.
#
# Usage: bench/startup_bench.sh [path/to/trialshim]   (default build/bin/trialshim)
# Env:   RUNS (default 300), WARMUP (default 20).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:-$ROOT/build/bin/trialshim}")
TREE=$ROOT/tests/data/conformance/compose/trees/train
RUNS=${RUNS:-300}
WARMUP=${WARMUP:-20}
PY=/usr/bin/python3
# Ten arguments as a Vertex trial appends them (valid keys of the train tree).
ARGS=(--optimizer.lr=0.01 --optimizer.weight_decay=1e-4 --data.batch_size=64.0
  --trainer.max_epochs=20 --model.dropout=0.2 --model.act=gelu --seed=7
  --trainer.precision=16 --data.val_fraction=0.1 --trainer.gradient_clip_val=0.5)

[[ -x $BIN ]] || { echo "no executable $BIN (build it first)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/wrapper.sh" <<'SH'
#!/bin/bash
/bin/true $(echo $@ | sed -r 's/--([^= ]*)[= ]([^ ]*)/\1=\2/g')
SH
chmod +x "$work/wrapper.sh"

BARE=(/bin/true "${ARGS[@]}")
SED=(/bin/bash "$work/wrapper.sh" "${ARGS[@]}")
SHIM=("$BIN" -- /bin/true "${ARGS[@]}")
SHIM_CFG=("$BIN" --config-path "$TREE" --config-name config -- /bin/true "${ARGS[@]}")

# The config-aware run must really pass its checks before it is timed.
"$BIN" --dry-run --config-path "$TREE" --config-name config -- /bin/true "${ARGS[@]}" >/dev/null ||
  { echo "config-aware translation failed; not timing" >&2; exit 1; }

echo "machine: $(nproc) cores, $(uname -srm); trialshim: $BIN; runs: $RUNS"
if command -v hyperfine >/dev/null; then
  json=$work/results.json
  hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
    -n bare "${BARE[*]}" -n bash+sed "${SED[*]}" -n trialshim "${SHIM[*]}" \
    -n trialshim+config "${SHIM_CFG[*]}" >/dev/null
  $PY - "$json" <<'PYEOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
for name in ("bare", "bash+sed", "trialshim", "trialshim+config"):
    x = r[name]
    print(f"{name:17s} mean {x['mean']*1e3:6.2f} ms  median {x['median']*1e3:6.2f}  sd {x['stddev']*1e3:5.2f}")
# Means and medians: on a shared machine the means carry other jobs' noise.
def ratio(name):
    return " ".join(f"{r['bash+sed'][k] / r[name][k]:.1f}x {k}" for k in ("mean", "median"))
print(f"bash+sed / trialshim:        {ratio('trialshim')} (goal >= 2x)")
print(f"bash+sed / trialshim+config: {ratio('trialshim+config')} (goal >= 2x, issue 28.1)")
PYEOF
  # CPU time of the process tree (task-clock counts children): steadier
  # than wall time on a busy machine.
  if command -v perf >/dev/null && perf stat -x, -e task-clock /bin/true 2>/dev/null >/dev/null; then
    for name in BARE SED SHIM SHIM_CFG; do
      declare -n cmd=$name
      ms=$(perf stat -r "$RUNS" -x, -e task-clock "${cmd[@]}" 2>&1 >/dev/null | tail -1 | cut -d, -f1)
      printf 'cpu %-16s %s ms\n' "$name" "$ms"
    done
  fi
else
  # No hyperfine: a plain loop, mean wall time per process in microseconds.
  time_it() {
    local start end
    for ((i = 0; i < WARMUP; i++)); do "$@" >/dev/null; done
    start=$(date +%s%N)
    for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null; done
    end=$(date +%s%N)
    echo $(((end - start) / RUNS / 1000))
  }
  for name in BARE SED SHIM SHIM_CFG; do
    declare -n cmd=$name
    echo "$name: mean $(time_it "${cmd[@]}") us"
  done
fi
