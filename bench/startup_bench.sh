#!/usr/bin/env bash
# Whole-process start-up of a wrapped trial: `trialshim -- /bin/true` with
# ten Vertex-style arguments, side by side with the seed's bash+sed wrapper
# (`/bin/true $(echo $@ | sed -r 's/--([^= ]*)[= ]([^ ]*)/\1=\2/g')`) and
# with bare `/bin/true`, plus trialshim with config checks (--config-path on
# the conformance `train` tree: YAML load, composition, key resolution) and
# `trialshim --version`, and the exec floor: a static C program that only
# execs /bin/true, what any wrapper costs at least. /bin/true does no
# work, so every figure is pure wrapper overhead.
#
# The commands run alternated: each round runs every command once, in a
# new random order, so other jobs' load on a shared machine falls on all of
# them alike (hyperfine runs one command's runs back to back). Each process
# is timed from posix_spawn to its reaping; its CPU time (user + system, its
# children's included) comes from wait4.
#
# Usage: bench/startup_bench.sh [path/to/trialshim [path/to/other/trialshim]]
#        (default build/bin/trialshim); a second binary (say, main's) is
#        timed in the same rounds as "before".
# Env:   RUNS (rounds, default 500), WARMUP (rounds, default 20).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:-$ROOT/build/bin/trialshim}")
OTHER=${2:+$(realpath "$2")}
TREE=$ROOT/tests/data/conformance/compose/trees/train
RUNS=${RUNS:-500}
WARMUP=${WARMUP:-20}
PY=/usr/bin/python3
# Ten arguments as a Vertex trial appends them (valid keys of the train tree).
ARGS=(--optimizer.lr=0.01 --optimizer.weight_decay=1e-4 --data.batch_size=64.0
  --trainer.max_epochs=20 --model.dropout=0.2 --model.act=gelu --seed=7
  --trainer.precision=16 --data.val_fraction=0.1 --trainer.gradient_clip_val=0.5)

for b in "$BIN" ${OTHER:+"$OTHER"}; do
  [[ -x $b ]] || { echo "no executable $b (build it first)" >&2; exit 2; }
  # The config-aware run must really pass its checks before it is timed.
  "$b" --dry-run --config-path "$TREE" --config-name config -- /bin/true "${ARGS[@]}" >/dev/null ||
    { echo "$b: config-aware translation failed; not timing" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Time copies, as installed: the linker's own output file execs up to
# 0.12 ms slower than a copy of the same bytes (its page cache is laid out
# differently; bench/README.md), which would blur a before/after.
mkdir "$work/now" "$work/before"
echo "trialshim: $BIN${OTHER:+; before: $OTHER}; rounds: $RUNS (+$WARMUP warm-up)"
cp "$BIN" "$work/now/trialshim" && BIN=$work/now/trialshim
[[ -z $OTHER ]] || { cp "$OTHER" "$work/before/trialshim" && OTHER=$work/before/trialshim; }
# The floor of any wrapper: a static C program that only execs its
# arguments. `trialshim -- /bin/true` costs this plus trialshim's own work.
cat >"$work/floor.c" <<'C'
#include <unistd.h>
int main(int argc, char** argv) { (void)argc; execv(argv[1], argv + 1); return 127; }
C
for flags in -static-pie -static ""; do
  cc -O2 $flags "$work/floor.c" -o "$work/floor" 2>/dev/null && break
done
cat >"$work/wrapper.sh" <<'SH'
#!/bin/bash
/bin/true $(echo $@ | sed -r 's/--([^= ]*)[= ]([^ ]*)/\1=\2/g')
SH
chmod +x "$work/wrapper.sh"

# One command a line: name, then its argv, separated by tabs.
{
  printf 'bare\t/bin/true'; printf '\t%s' "${ARGS[@]}"; echo
  printf 'bash+sed\t/bin/bash\t%s' "$work/wrapper.sh"; printf '\t%s' "${ARGS[@]}"; echo
  printf 'exec floor\t%s\t/bin/true' "$work/floor"; printf '\t%s' "${ARGS[@]}"; echo
  shim_rows() {  # $1: name suffix, $2: binary
    printf 'trialshim%s\t%s\t--\t/bin/true' "$1" "$2"; printf '\t%s' "${ARGS[@]}"; echo
    printf 'trialshim+config%s\t%s\t--config-path\t%s\t--config-name\tconfig\t--\t/bin/true' \
      "$1" "$2" "$TREE"; printf '\t%s' "${ARGS[@]}"; echo
    printf 'trialshim --version%s\t%s\t--version\n' "$1" "$2"
  }
  shim_rows "" "$BIN"
  [[ -z $OTHER ]] || shim_rows " (before)" "$OTHER"
} >"$work/commands.tsv"

echo "machine: $(nproc) cores, $(uname -srm); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
$PY - "$work/commands.tsv" "$RUNS" "$WARMUP" <<'PYEOF'
import os, random, statistics, sys, time

cmds = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
runs, warmup = int(sys.argv[2]), int(sys.argv[3])
devnull = os.open(os.devnull, os.O_WRONLY)
actions = [(os.POSIX_SPAWN_DUP2, devnull, 1)]
wall = {c[0]: [] for c in cmds}
cpu = {c[0]: [] for c in cmds}

def once(argv):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter_ns()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} exited {status}")
    return (t1 - t0) / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3

for r in range(warmup + runs):
    order = cmds[:]
    random.shuffle(order)
    for c in order:
        w, u = once(c[1:])
        if r >= warmup:
            wall[c[0]].append(w)
            cpu[c[0]].append(u)

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]

print(f"{'command':28s} {'median':>7s} {'mean':>7s} {'p10':>7s} {'p90':>7s} {'CPU':>6s}  (ms)")
for name, xs in wall.items():
    print(f"{name:28s} {statistics.median(xs):7.3f} {statistics.mean(xs):7.3f} "
          f"{pct(xs, 0.1):7.3f} {pct(xs, 0.9):7.3f} {statistics.mean(cpu[name]):6.3f}")

def ratio(a, b):
    return (f"{statistics.median(wall[a]) / statistics.median(wall[b]):.2f}x median, "
            f"{pct(wall[a], 0.1) / pct(wall[b], 0.1):.2f}x p10, "
            f"{statistics.mean(cpu[a]) / statistics.mean(cpu[b]):.2f}x CPU")
for suffix in ("", " (before)"):
    if "trialshim" + suffix not in wall:
        continue
    print(f"bash+sed / trialshim{suffix}:        {ratio('bash+sed', 'trialshim' + suffix)}")
    print(f"bash+sed / trialshim+config{suffix}: {ratio('bash+sed', 'trialshim+config' + suffix)} (goal >= 2x)")
    above = statistics.median(wall["trialshim" + suffix]) - statistics.median(wall["exec floor"])
    print(f"trialshim{suffix} above the exec floor: {above:.3f} ms median")
PYEOF
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
