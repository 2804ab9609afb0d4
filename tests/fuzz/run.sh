#!/usr/bin/env bash
# Runs libFuzzer targets for a bounded time each, one after the other.
#
#   tests/fuzz/run.sh BIN_DIR SECONDS [TARGET...]
#
# Each target first replays its inputs in tests/fuzz/regressions/<target>/
# (former crashes), then fuzzes for SECONDS on its working corpus,
# $FUZZ_CORPUS/<target>/ (default BIN_DIR/../corpus: build-fuzz/corpus/),
# which the committed seeds tests/fuzz/corpus/<target>/ are copied into
# (never over a file) and which is kept: each run goes on from what the
# runs before it found, and the repository is never written to.
# New crashes are kept in $FUZZ_WORK/artifacts/<target>/. Exits 1 if any
# target crashed, hung or ran out of memory. Extra libFuzzer flags can be
# given in FUZZ_FLAGS (the long runs in README.md used "-fork=1
# -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1" to go on past a crash).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?BIN_DIR}"; secs="${2:?SECONDS}"; shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(override_parser_fuzz render_roundtrip_fuzz translate_fuzz
           compose_fuzz interpolation_fuzz cluster_spec_fuzz job_spec_fuzz
           metric_file_fuzz python_format_fuzz)
  # Built only with LibTorch (WITH_TORCH=OFF leaves it out).
  [ -x "$bin/checkpoint_fuzz" ] && targets+=(checkpoint_fuzz)
fi
work="${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/trialshim_fuzz_run.XXXXXX")}"
corpora="${FUZZ_CORPUS:-$(cd "$bin/.." && pwd)/corpus}"
echo "fuzz: ${secs}s per target, working corpora in $corpora, work dir $work"

failed=()
for t in "${targets[@]}"; do
  corpus="$corpora/$t"; art="$work/artifacts/$t/"; log="$work/$t.log"
  mkdir -p "$corpus" "$art"
  cp -rn "$here/corpus/$t/." "$corpus/" 2>/dev/null || true
  rc=0
  regs=("$here/regressions/$t"/*)
  # FUZZ_NO_REPLAY=1 skips the replay, for a long local run while a
  # regression is still open.
  if [ -e "${regs[0]}" ] && [ -z "${FUZZ_NO_REPLAY:-}" ]; then
    "$bin/$t" -artifact_prefix="$art" "${regs[@]}" > "$log.replay" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL $t: a regression input crashes again (see $log.replay)"
      tail -n 30 "$log.replay"
      failed+=("$t"); continue
    fi
  fi
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: 2 GB is an OOM.
  # A checkpoint holds the 5 KB RNG state, so its inputs may be longer.
  max_len=4096; [ "$t" = checkpoint_fuzz ] && max_len=16384
  "$bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$art" \
    ${FUZZ_FLAGS:-} "$corpus" > "$log" 2>&1 || rc=$?
  # Plain mode prints stat:: lines at exit; -fork mode only "#N: cov: ..".
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  [ -n "$execs" ] || execs=$(echo "$last" | grep -oE '^#[0-9]+' | tr -d '#')
  cov=$(echo "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+')
  crashes=$(ls "$art" | wc -l)
  [ "$crashes" -eq 0 ] || rc=${rc/#0/1}
  if [ $rc -ne 0 ]; then
    echo "FAIL $t (exit $rc) after ${execs:-?} runs; artifacts in $art"
    grep -A 12 -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|round trip|translated|outside' "$log" | head -n 40
    failed+=("$t")
  else
    echo "ok   $t: ${execs:-?} runs, ${cov:-cov ?}, corpus $(ls "$corpus" | wc -l) files"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (logs in $work)"; exit 1
fi
echo "fuzz: all ${#targets[@]} targets ok"
# A work dir of our own making is only worth keeping for its crashes.
[ -n "${FUZZ_WORK:-}" ] || rm -rf "$work"
