#!/bin/sh
# find_package(trialshim) from a project of its own: installs this build into
# a temporary prefix, builds examples/template against it and runs one trial
# the way Vertex calls it (a --key=value argument), then checks the run.
#   find_package_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
cp -r "$src/examples/template" "$tmp/template"
cmake -S "$tmp/template" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log"
cmake --build "$tmp/build" > "$tmp/build.log"
cd "$tmp"
./build/train --optimizer.lr=0.05 trainer.max_epochs=2 hydra.run.dir="$tmp/run"
grep -qx -- "- optimizer.lr=0.05" "$tmp/run/.hydra/overrides.yaml"
test -s "$tmp/run/metrics.csv"
test -s "$tmp/run/train.log"
# A config error is exit 2 with the key.
if ./build/train trainer.max_epoch=1 2> "$tmp/err"; then exit 1; else test $? -eq 2; fi
grep -q "trainer.max_epoch" "$tmp/err"
echo "find_package(trialshim): template built and trained"
