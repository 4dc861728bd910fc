"""Build of torch_grouped._C: one extension, Python's limited API, no pybind11.

Build options (environment variables):
  TORCH_GROUPED_CUDA=auto|1|0  auto (default): build the CUDA sources when nvcc is found and torch
                               has CUDA; 1: require them; 0: CPU path only.
  TORCH_CUDA_ARCH_LIST         default "9.0a" (the build never probes a GPU).
  CUDA_HOME                    the toolkit; found automatically otherwise (see find_cuda_home).
  CUTLASS_DIR                  CUTLASS checkout; otherwise the headers of the nvidia-cutlass package.
  MAX_JOBS                     parallel compile jobs (ninja).
  DEBUG=1                      -O0 -g -lineinfo instead of -O3.
  TORCH_GROUPED_TIMELINE=1     the kernels print per-unit timestamps (a development probe:
                               kernels/unit_timeline.cuh, tools/timeline.py); never for use.
"""
import glob
import os
import shutil
import sys
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).parent.resolve()
CSRC = Path("torch_grouped") / "csrc"


def has_cudart(home: Path) -> bool:
    patterns = ["lib64/libcudart.so*", "lib/libcudart.so*", "targets/*/lib/libcudart.so*"]
    return (home / "bin" / "nvcc").exists() and any(glob.glob(str(home / p)) for p in patterns)


def find_cuda_home():
    """The CUDA toolkit to build with, or None.

    torch guesses CUDA_HOME as the parent of the first `nvcc` on PATH; where that `nvcc` is a
    wrapper script (e.g. /usr/local/bin/nvcc) the guess has no libcudart and the link fails.
    So we take the first candidate that really holds nvcc and libcudart.
    """
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return Path(os.environ[var])
    import torch

    candidates = []
    if torch.version.cuda:
        candidates.append(Path(f"/usr/local/cuda-{torch.version.cuda}"))
    candidates.append(Path("/usr/local/cuda"))
    candidates += sorted((Path(p) for p in glob.glob("/usr/local/cuda-*")), reverse=True)
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(os.path.realpath(nvcc)).parent.parent)
    return next((c for c in candidates if has_cudart(c)), None)


def find_cutlass_includes():
    if os.environ.get("CUTLASS_DIR"):
        root = Path(os.environ["CUTLASS_DIR"])
        return [root / "include", root / "tools" / "util" / "include"]
    try:
        import cutlass_library
    except ImportError:
        return None
    source = Path(cutlass_library.__file__).parent / "source"
    return [source / "include", source / "tools" / "util" / "include"]


def cuda_requested(cuda_home):
    mode = os.environ.get("TORCH_GROUPED_CUDA", "auto").lower()
    if mode not in ("auto", "1", "0"):
        sys.exit(f"TORCH_GROUPED_CUDA must be auto, 1 or 0, got {mode!r}")
    if mode == "0":
        return False
    import torch

    missing = []
    if not torch.version.cuda:
        missing.append(f"torch {torch.__version__} is a CPU build")
    if cuda_home is None:
        missing.append("no CUDA toolkit with nvcc and libcudart was found (set CUDA_HOME)")
    if missing and mode == "1":
        sys.exit("TORCH_GROUPED_CUDA=1 but " + "; ".join(missing))
    return not missing


def cuda_library_includes(cuda_home):
    """Headers of the CUDA libraries torch links (cuBLAS for syr2k's fp32/fp64 path, through
    ATen/cuda/CUDAContext.h): in the toolkit, or else in the nvidia-* wheels that torch's CUDA
    build installs (nvidia/cu13/include, or one folder per library for CUDA 12). Without them
    that path is compiled out and fp32/fp64 syr2k takes the two-matmul composite."""
    if (cuda_home / "include" / "cublas_v2.h").exists():
        return []
    try:
        import nvidia
    except ImportError:
        return []
    found = []
    for root in nvidia.__path__:
        for header in ("cublas_v2.h", "cusparse.h", "cusolverDn.h"):  # what CUDAContext.h includes
            found += [str(h.parent) for h in sorted(Path(root).glob(f"*/include/{header}")) if str(h.parent) not in found]
    return found


def extensions():
    cuda_home = find_cuda_home()
    with_cuda = cuda_requested(cuda_home)
    if with_cuda:
        os.environ["CUDA_HOME"] = str(cuda_home)  # before torch's cpp_extension reads it
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0a")
    from torch.utils.cpp_extension import CppExtension, CUDAExtension

    debug = os.environ.get("DEBUG", "0") == "1"
    opt = ["-O0", "-g"] if debug else ["-O3"]
    sources = [str(CSRC / "ops.cpp")]
    sources += sorted(str(p) for p in (CSRC / "cpu").glob("*.cpp"))
    sources += sorted(str(p) for p in (CSRC / "common").glob("*.cpp"))
    cxx = opt + ["-DNDEBUG"]
    include_dirs = [str(ROOT / CSRC)]
    if not with_cuda:
        return [CppExtension("torch_grouped._C", sources, include_dirs=include_dirs,
                             extra_compile_args={"cxx": cxx}, py_limited_api=True)]
    cutlass = find_cutlass_includes()
    if cutlass is None or not (cutlass[0] / "cutlass" / "cutlass.h").exists():
        sys.exit("CUTLASS headers not found: `pip install nvidia-cutlass==4.2.0.0` or set CUTLASS_DIR "
                 "to a CUTLASS checkout (or build the CPU path only with TORCH_GROUPED_CUDA=0)")
    # after the toolkit's own headers (the wheels also hold a CUDA runtime's), and for the host
    # compiler only: no .cu file needs them
    for d in cuda_library_includes(cuda_home):
        cxx += ["-idirafter", d]
    sources += sorted(str(p) for p in (CSRC / "cuda").glob("*.cpp"))
    sources += sorted(str(p) for p in (CSRC / "cuda").glob("*.cu"))
    sources += sorted(str(p) for p in (CSRC / "instantiations").glob("*.c[pu]*"))
    nvcc = opt + ["-DNDEBUG", "--expt-relaxed-constexpr", "-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1"]
    if debug:
        nvcc.append("-lineinfo")
    if os.environ.get("TORCH_GROUPED_TIMELINE", "0") == "1":
        nvcc.append("-DTORCH_GROUPED_TIMELINE")
    return [CUDAExtension("torch_grouped._C", sources,
                          include_dirs=include_dirs + [str(p) for p in cutlass],
                          extra_compile_args={"cxx": cxx + ["-DTORCH_GROUPED_WITH_CUDA"],
                                              "nvcc": nvcc + ["-DTORCH_GROUPED_WITH_CUDA"]},
                          py_limited_api=True)]


def build_ext_class():
    from torch.utils.cpp_extension import BuildExtension

    return BuildExtension.with_options(use_ninja=True)


setup(
    name="torch_grouped",
    version="0.1.0",
    description="Grouped GEMM, grouped SYR2K, Stream-K matmul and layout transforms as torch.library ops",
    packages=find_packages(include=["torch_grouped", "torch_grouped.*"]),
    ext_modules=extensions(),
    cmdclass={"build_ext": build_ext_class()},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
    python_requires=">=3.9",
)
