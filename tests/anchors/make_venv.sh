#!/usr/bin/env bash
# Builds the anchors environment in DIR (what `make anchors` runs):
#
#   tests/anchors/make_venv.sh build/anchors
#
# A venv over /usr/bin/python3 that sees Debian's packages (python3-torch,
# python3-numpy), with tests/anchors/requirements.txt installed at its exact
# versions and without dependency resolution (the file says why), then
# checked by check_env.py. DIR/.stamp holds a checksum of those three files:
# with it unchanged this is a no-op. When pip fails (PyPI out of reach), it
# says what the anchors are and where they come from, removes the half-built
# DIR and exits 1. PIP_INDEX_URL (or pip.conf) names a mirror.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements.txt
want=$(cat "$req" "$here/check_env.py" "$here/make_venv.sh" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$want" ]; then
  echo "anchors: $dir is up to date"
  exit 0
fi

rm -rf "$dir"
start=$(date +%s)
if ! /usr/bin/python3 -m venv --system-site-packages "$dir"; then
  echo "anchors: /usr/bin/python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
log=$dir/pip-install.log
# --no-deps: the file lists every package; torch and numpy stay Debian's.
# Few retries: an unreachable index should say so in seconds, not minutes.
if ! "$dir/bin/python" -m pip install --no-deps --disable-pip-version-check \
    --retries 2 --timeout 30 -r "$req" >"$log" 2>&1; then
  index=${PIP_INDEX_URL:-$("$dir/bin/python" -m pip config get global.index-url 2>/dev/null || echo https://pypi.org/simple)}
  {
    echo "anchors: could not install the anchors into $dir."
    echo "  They are Python packages from PyPI, pinned in $req:"
    echo "  hydra-core 1.3.2, omegaconf 2.3.0, hydra-optuna-sweeper 1.2.0, cloudml-hypertune,"
    echo "  lightning 2.2.5, tensorboard 2.21.0 and what they need, about 75 MB of downloads."
    echo "  The package index is $index; this machine must reach it"
    echo "  (or set PIP_INDEX_URL to a mirror that has them)."
    echo "  pip said:"
    grep -E "^ERROR" "$log" | tail -n 3 | sed 's/^/    /'
    grep -oE "Connection refused|Name or service not known|Temporary failure in name resolution|Network is unreachable|timed out|SSLError[^']*|ProxyError[^']*" "$log" |
      sort -u | sed 's/^/    (network: /; s/$/)/'
    echo "  make test runs everything else without them; make test-anchors needs them."
  } >&2
  rm -rf "$dir"
  exit 1
fi
if ! "$dir/bin/python" "$here/check_env.py" "$req"; then
  echo "anchors: $dir was installed but is not what $req pins (above); removed" >&2
  rm -rf "$dir"
  exit 1
fi
echo "$want" >"$dir/.stamp"
echo "anchors: built $dir in $(($(date +%s) - start)) s"
