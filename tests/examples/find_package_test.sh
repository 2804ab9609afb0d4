#!/bin/sh
# find_package(trialshim) from a project of its own: installs this build into
# a temporary prefix and moves it (the package must be relocatable), builds
# examples/template against the moved copy and runs one trial the way Vertex
# calls it (a --key=value argument), then checks the run.
#   find_package_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
mv "$tmp/prefix" "$tmp/moved"
# What the package says holds no path of this machine: only paths relative
# to where it lies, and its dependencies' target names.
pkg=$(dirname "$(find "$tmp/moved" -name trialshimTargets.cmake)")
if grep -n -e "$tmp" -e "$(cd "$build" && pwd)" -e "$(cd "$src" && pwd)" "$pkg"/*.cmake ||
   grep -nE '^ *INTERFACE_[A-Z_]+ "([^"]*;)?/' "$pkg"/*.cmake; then
  echo "find_package_test: an absolute path in the installed package" >&2; exit 1
fi
# The app library is translation and config: no shim, no RE2.
if grep -n -i -e 'trialshim::shim' -e 're2' "$pkg"/*.cmake ||
   [ -n "$(find "$tmp/moved" -name 'libtrialshim_shim*')" ]; then
  echo "find_package_test: the installed package needs the shim or RE2" >&2; exit 1
fi
cp -r "$src/examples/template" "$tmp/template"
cmake -S "$tmp/template" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/moved" > "$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
cd "$tmp"
./build/train --optimizer.lr=0.05 trainer.max_epochs=2 hydra.run.dir="$tmp/run"
grep -qx -- "- optimizer.lr=0.05" "$tmp/run/.hydra/overrides.yaml"
test -s "$tmp/run/metrics.csv"
test -s "$tmp/run/train.log"
# A config error is exit 2 with the key.
if ./build/train trainer.max_epoch=1 2> "$tmp/err"; then exit 1; else test $? -eq 2; fi
grep -q "trainer.max_epoch" "$tmp/err"
echo "find_package(trialshim): template built against a moved install and trained"
