#!/usr/bin/env bash
# Everything the real-GPU check needs, from a bare checkout on a GPU machine that cannot
# reach PyPI (the `device` tool's): builds lapse and its Python extension for the
# machine's Python (the one with torch), lays the package out without pip, and runs
# tests/gpu/run.sh with it.
#
#   tests/gpu/device.sh [PYTHON]        (default: the first python3 that imports torch)
#
# --build-only: build and lay out the package, run nothing (to check this script on a
# machine without a GPU). Prints what it found; exits as run.sh does.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build_only=0
[ "${1:-}" = --build-only ] && build_only=1 && shift
py=${1:-}
if [ -z "$py" ]; then
    for c in python3 /usr/bin/python3 /opt/conda/bin/python3 /usr/local/bin/python3; do
        if command -v "$c" >/dev/null && "$c" -c 'import torch' 2>/dev/null; then
            py=$(command -v "$c")
            break
        fi
    done
    py=${py:-python3}
fi
echo "python: $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))" \
    "torch: $("$py" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
command -v cmake >/dev/null || { echo "tests/gpu/device.sh: no cmake on PATH" >&2; exit 2; }
build="$repo/build-gpu"
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLAPSE_PYTHON=ON \
    -DPython_EXECUTABLE="$py" > "$build.log" 2>&1 &&
    cmake --build "$build" --parallel "$(nproc)" >> "$build.log" 2>&1 ||
    { tail -30 "$build.log"; echo "tests/gpu/device.sh: the build failed (above)" >&2; exit 2; }
# the package as pip would install it: python/lapse with the extension and liblapse
pkg="$build/pkg"
rm -rf "$pkg" && mkdir -p "$pkg"
cp -r "$repo/python/lapse" "$pkg/lapse"
cp "$build"/python/lapse/_lapse*.so "$pkg/lapse/"
cp -P "$build"/liblapse.so* "$pkg/lapse/"
PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}" "$py" -c 'import lapse, lapse._lapse; print("lapse", lapse.__version__, "from", lapse.__file__)'
[ "$build_only" = 1 ] && exit 0
export PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}" LAPSE_PYTHON="$py"
exec bash "$repo/tests/gpu/run.sh" "$build"
