#!/usr/bin/env bash
# On the machine that drives the GPU calls: take the build a gpu_check.sh call brought back
# (its _C.abi3.so.xz and build.sha, in the folder the device tool fetched them to) into this
# checkout's .device/, so that the next call reuses it instead of rebuilding (~200 s of device
# time), and say whether it is a build of the sources as they are now.
#     bash tools/carry_build.sh /work/.device/<call>
set -euo pipefail
from=${1:?usage: tools/carry_build.sh FOLDER (where _C.abi3.so.xz and build.sha came back)}
cd "$(dirname "$0")/.."
[ -f "$from/_C.abi3.so.xz" ] && [ -f "$from/build.sha" ] || { echo "no _C.abi3.so.xz and build.sha in $from" >&2; exit 1; }
mkdir -p .device
install -m 644 "$from/_C.abi3.so.xz" .device/_C.abi3.so.xz
install -m 644 "$from/build.sha" .device/build.sha
# (the same digest gpu_check.sh compares: setup.py and every file under csrc, in C order)
sources=$(cat setup.py $(find torch_grouped/csrc -type f | LC_ALL=C sort) | sha256sum | cut -c1-16)
carried=$(cat .device/build.sha)
if [ "$carried" = "$sources" ]; then
  echo "carried build $carried: the sources as they are now; the next call reuses it"
else
  echo "carried build $carried, but the sources are $sources now: the next call rebuilds" >&2
  exit 2
fi
