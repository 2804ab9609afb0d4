#!/usr/bin/env bash
# Rewrites the committed seed corpora, tests/fuzz/corpus/<target>/, as a
# small set of inputs that reaches every edge that the seeds, the working
# corpus `make fuzz` grew (build-fuzz/corpus/<target>/) and the regression
# inputs reach:
#
#   tests/fuzz/minimize.sh BIN_DIR [TARGET...]
#
# Targets: every corpus directory with a binary in BIN_DIR, or those named.
# The merge is libFuzzer's (FUZZ_MERGE_FLAGS, default "-set_cover_merge=1
# -use_counters=0": the greedy set cover of -merge=1's features, on edges
# alone; how often an edge runs is for the working corpus to find again).
# Then review `git status tests/fuzz/corpus`, run `make fuzz`, commit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?BIN_DIR}"; shift
corpora="${FUZZ_CORPUS:-$(cd "$bin/.." && pwd)/corpus}"
flags="${FUZZ_MERGE_FLAGS:--set_cover_merge=1 -use_counters=0}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in "$here"/corpus/*/; do
    t="$(basename "$d")"
    [ -x "$bin/$t" ] && targets+=("$t")
  done
fi
for t in "${targets[@]}"; do
  new="$(mktemp -d "${TMPDIR:-/tmp}/trialshim_minimize_$t.XXXXXX")"
  inputs=("$here/corpus/$t")
  [ -d "$corpora/$t" ] && inputs+=("$corpora/$t")
  [ -d "$here/regressions/$t" ] && inputs+=("$here/regressions/$t")
  before=$(ls "$here/corpus/$t" | wc -l)
  # shellcheck disable=SC2086  # flags are words
  if ! "$bin/$t" $flags -timeout=10 -rss_limit_mb=2048 "$new" "${inputs[@]}" \
      > "$new.log" 2>&1; then
    echo "FAIL $t: the merge failed (see $new.log)"; tail -n 20 "$new.log"
    exit 1
  fi
  rm -rf "$here/corpus/$t"
  mv "$new" "$here/corpus/$t"
  echo "$t: $before seeds -> $(ls "$here/corpus/$t" | wc -l)" \
       "($(grep -o '[0-9]* new features' "$new.log" | tail -n 1))"
  rm -f "$new.log"
done
