#!/usr/bin/env bash
# cmake/cuda_libtorch.sh DIR: lays out the CUDA LibTorch of
# cmake/cuda-libtorch.txt in DIR, from PyPI's wheels (the one download the
# GPU build makes; make demo and make test never call this):
#   DIR/torch/{include,lib,share/cmake}  LibTorch from the torch wheel
#   DIR/nvidia/{cusparselt,nvshmem,cu13}/lib  libcusparseLt, libnvshmem_host,
#                                        libcufile, where libtorch_cuda.so's
#                                        RPATH ($ORIGIN/../../nvidia/...) looks
# A no-op while DIR/.pins equals the pin file, so a second `make gpu` pays
# nothing. The wheels are for CPython 3.12 on manylinux_2_28, the GPU
# machines' Python; only their C++ parts are used here.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
pins=$here/cuda-libtorch.txt
if [[ -f $dir/.pins ]] && cmp -s "$dir/.pins" "$pins"; then exit 0; fi
rm -rf "$dir" && mkdir -p "$dir/wheels"
python=${PYTHON:-/usr/bin/python3}
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$dir/wheels" -r <(grep -v '^#' "$pins")
# torch: only LibTorch (the Python package's .py files are not needed);
# the nvidia wheels: their libraries. (zipfile: unzip is not on every
# Debian machine.)
"$python" - "$dir" <<'PY'
import glob, os, sys, zipfile
out = sys.argv[1]
for wheel in glob.glob(os.path.join(out, "wheels", "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            lib = name.startswith("nvidia/") and ".so" in name
            torch = name.startswith(("torch/include/", "torch/lib/",
                                     "torch/share/")) or name == "torch/version.py"
            if lib or torch:
                z.extract(name, out)
PY
rm -rf "$dir/wheels"
cp "$pins" "$dir/.pins"
