#!/usr/bin/env bash
# tests/gpu/dist.sh BUILD DIST: lays out in DIST what tests/gpu/run.sh needs
# of a `make gpu` build, small enough to travel to a GPU machine:
#   bin/    digits-train, trainer_test, gpu_bench (debug info stripped)
#   lib/    the shared libraries they need beside LibTorch, CUDA and the C
#           and C++ runtimes (Debian's spdlog, fmt, protobuf, ...): the
#           GPU machine has only its python's torch
#   share/  digits-train's config, where it looks (../share from bin/)
#   source_dir  the checkout the build was made in (the tests read its
#           data there; run.sh links it to the checkout it runs in)
set -euo pipefail
build=$(realpath "$1")
dist=$(realpath -m "$2")
rm -rf "$dist"
mkdir -p "$dist/bin" "$dist/lib" "$dist/share/trialshim/examples"
for b in digits-train trainer_test gpu_bench; do
  strip --strip-debug -o "$dist/bin/$b" "$build/bin/$b"
done
cp -P "$build/share/trialshim/examples/digits" "$dist/share/trialshim/examples/"
# What the loader resolves outside LibTorch's tree, CUDA and the runtimes
# every Linux with a python torch has.
ldd "$dist"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/libtorch|/libc10|/libcaffe2|/cuda|/nvidia/|/lib(c|m|dl|rt|pthread|util|resolv|gcc_s|stdc\+\+|gomp)\.so|ld-linux|/libcu|/libnccl|/libcudnn|/libnv' |
  while read -r lib; do cp -L "$lib" "$dist/lib/"; done
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" >"$dist/source_dir"
du -sh "$dist"
