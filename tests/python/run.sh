#!/usr/bin/env bash
# Installs the package (pip install .) into a virtual environment of the given
# CPython and runs the Python tests there.
#
#   tests/python/run.sh PYTHON [PYTEST ARGS...]
#
# The venv lives in build-py/venv-<version>/ and is reused; pip rebuilds the
# extension incrementally in build-py/<wheel tag>/ (pyproject.toml).
set -euo pipefail
py=$1
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
venv="$repo/build-py/venv-$version"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$repo/requirements-dev.txt"
# mpi4py for the mpirun test (it uses the system's Open MPI: .ci/run installs it)
"$venv/bin/python" -m pip install -q --disable-pip-version-check mpi4py
# torch for the torchrun test, on CPython 3.11 only: 2.13.0 is the CPU build there (on
# other interpreters pip would fetch a CUDA build of several GB); the test then
# requires it (LAPSE_TEST_TORCH=1) rather than skipping
torch_default=0
[ "$version" = 3.11 ] && torch_default=1
export LAPSE_TEST_TORCH=${LAPSE_TEST_TORCH:-$torch_default}
if [ "$LAPSE_TEST_TORCH" = 1 ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check torch==2.13.0
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$repo"
echo "== Python $version: $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])')"
cd "$repo/tests/python"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
