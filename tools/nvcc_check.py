"""Compile one .cu of the extension for sm_90a with the flags of setup.py and print the resource
usage (registers, spills, shared memory), without building the whole extension:
    python tools/nvcc_check.py torch_grouped/csrc/cuda/permute_copy.cu [--sass]
CSRC=<another tree>/torch_grouped/csrc: its headers instead of this checkout's (ptxas of an older revision);
pass that tree's .cu as well, since a .cu's own relative includes ("../kernels/...") resolve next to it.
"""
import glob
import os
import subprocess
import sys
import sysconfig

import torch
from torch.utils import cpp_extension

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(source, sass=False):
    home = os.environ.get("CUDA_HOME") or f"/usr/local/cuda-{torch.version.cuda}"
    includes = cpp_extension.include_paths(device_type="cuda") + [os.path.join(home, "include")]
    import cutlass_library  # noqa: F401  (headers for the matmul kernels)

    cutlass = os.path.join(os.path.dirname(cutlass_library.__file__), "source")
    includes += [os.path.join(cutlass, "include"), os.path.join(cutlass, "tools/util/include")]
    out = f"/tmp/nvcc_check.{os.getpid()}.o"  # per process: two checks may run at once
    cmd = [os.path.join(home, "bin/nvcc"), "-c", source, "-o", out, "-gencode=arch=compute_90a,code=sm_90a",
           "-O3", "-std=c++20", "--expt-relaxed-constexpr", "-Xptxas=-v", "-DNDEBUG", "-DTORCH_GROUPED_WITH_CUDA",
           *(["-DTORCH_GROUPED_TIMELINE"] if os.environ.get("TORCH_GROUPED_TIMELINE") == "1" else []),
           "--compiler-options", "-fPIC", "-I", os.environ.get("CSRC", os.path.join(ROOT, "torch_grouped/csrc")),
           "-I", sysconfig.get_paths()["include"]] + [f"-I{i}" for i in includes]
    try:  # the CUDA libraries' headers (cuBLAS), after the toolkit's, as setup.py passes them
        import nvidia

        for root in nvidia.__path__:
            for d in sorted(glob.glob(os.path.join(root, "*/include/cublas_v2.h"))):
                cmd += ["-Xcompiler", f"-idirafter{os.path.dirname(d)}"]
    except ImportError:
        pass
    r = subprocess.run(cmd, capture_output=True, text=True)
    keep = ("error", "Used", "spill", "Compiling entry", "Performance Loss")  # (C7515: serialized WGMMAs)
    lines = [l for l in r.stderr.splitlines() if any(k in l for k in keep)]
    print("\n".join(lines) if r.returncode == 0 else r.stderr[:6000])
    if r.returncode == 0 and sass:
        tool = glob.glob(os.path.join(os.path.dirname(__import__("triton").__file__), "backends/nvidia/bin/cuobjdump"))[0]
        print(subprocess.run([tool, "--dump-sass", out], capture_output=True, text=True).stdout)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--sass" in sys.argv))
