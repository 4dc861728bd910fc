#!/usr/bin/env bash
# Fills .whl/ (git-ignored) with the wheels the GPU machine lacks, for its Python (3.12 by
# default, PYTHON_VERSION to change): the CUTLASS/CuTe headers (nvidia-cutlass, pinned as in
# requirements.txt) and the test dependencies. Run it here, where pip reaches PyPI; then carry
# `.whl` in the device call, and tools/gpu_check.sh installs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON_VERSION:-3.12}
cutlass=$(grep -E '^nvidia-cutlass==' requirements.txt)
mkdir -p .whl
# One version of each (two stop the install there): earlier downloads go first.
rm -f .whl/*.whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$py" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl "$cutlass" expecttest hypothesis sortedcontainers attrs
ls .whl
