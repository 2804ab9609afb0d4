#!/usr/bin/env bash
# Whole-process timing: `trialshim compose` on the conformance `train` tree
# with a dozen overrides, against Python OmegaConf (Debian python3-omegaconf)
# loading and merging the same files (bench/compose_omegaconf.py), same
# machine, same run. Both must print the same JSON before anything is timed.
#
# Usage: bench/compose_bench.sh [path/to/trialshim]   (default build/bin/trialshim)
# Env:   RUNS (default 200), WARMUP (default 10).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:-$ROOT/build/bin/trialshim}")
TREE=$ROOT/tests/data/conformance/compose/trees/train
RUNS=${RUNS:-200}
WARMUP=${WARMUP:-10}
PY=/usr/bin/python3
OVERRIDES=(optimizer=sgd data=synthetic optimizer.lr=0.05 optimizer.momentum=0.8
  data.batch_size=128 data.noise=0.1 seed=7 trainer.max_epochs=20
  trainer.precision=16 'trainer.devices=[0,1]' model.dropout=0.2 model.act=gelu)

[[ -x $BIN ]] || { echo "no executable $BIN (build it first)" >&2; exit 2; }
$PY -c 'import omegaconf' 2>/dev/null ||
  { echo "python3-omegaconf is missing: apt-get install python3-omegaconf" >&2; exit 2; }

SHIM=("$BIN" compose --config-path "$TREE" --config-name config --resolve --format json "${OVERRIDES[@]}")
OMEGA=("$PY" "$ROOT/bench/compose_omegaconf.py" "$TREE" "${OVERRIDES[@]}")

# Same work: compare the two outputs as parsed JSON (types and order kept).
same=$($PY -c 'import json,sys; a,b=(json.loads(open(f).read(),object_pairs_hook=list) for f in sys.argv[1:]); print(a==b)' \
  <("${SHIM[@]}") <("${OMEGA[@]}"))
[[ $same == True ]] || { echo "outputs differ; not timing" >&2; exit 1; }

echo "machine: $(nproc) cores, $(uname -srm); trialshim: $BIN; runs: $RUNS"
if command -v hyperfine >/dev/null; then
  json=$(mktemp)
  trap 'rm -f "$json"' EXIT
  hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
    -n trialshim "${SHIM[*]}" -n omegaconf "${OMEGA[*]}"
  $PY - "$json" <<'PYEOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
t, o = r["trialshim"], r["omegaconf"]
print(f"trialshim compose: mean {t['mean']*1e3:.2f} ms (median {t['median']*1e3:.2f}, sd {t['stddev']*1e3:.2f})")
print(f"python omegaconf:  mean {o['mean']*1e3:.2f} ms (median {o['median']*1e3:.2f}, sd {o['stddev']*1e3:.2f})")
cpu = lambda x: (x["user"] + x["system"]) * 1e3
print(f"CPU (user+sys):    trialshim {cpu(t):.2f} ms, omegaconf {cpu(o):.2f} ms")
print(f"speed-up: {o['mean']/t['mean']:.1f}x wall mean, {o['median']/t['median']:.1f}x wall median, "
      f"{cpu(o)/cpu(t):.1f}x CPU (goal >= 20x)")
PYEOF
else
  # No hyperfine: a plain loop, mean wall time per process.
  time_it() {
    local start end
    start=$(date +%s%N)
    for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null; done
    end=$(date +%s%N)
    echo $(((end - start) / RUNS / 1000))
  }
  for ((i = 0; i < WARMUP; i++)); do "${SHIM[@]}" >/dev/null; "${OMEGA[@]}" >/dev/null; done
  t=$(time_it "${SHIM[@]}")
  o=$(time_it "${OMEGA[@]}")
  echo "trialshim compose: mean $((t / 1000)).$(printf %03d $((t % 1000))) ms"
  echo "python omegaconf:  mean $((o / 1000)).$(printf %03d $((o % 1000))) ms"
  echo "speed-up: $((o / t))x (goal >= 20x)"
fi
