"""Candidate pitched copies (tools/probe_pitched_copy.cu) against the extension's, without a build of
the extension: the copy that stages an operand whose rows TMA cannot address runs at 2.9-3.2 TB/s
on an H200 (session 49: a third of 383 x 1014 x 16638's call) where a plain copy_ runs ~4.1. Per
source ([outer, inner] rows `ld` elements apart, as streamk_mm stages A and B of the named shapes):
µs under do_bench (L2 flushed) and TB/s (bytes read + written) of

  elem2    the extension's kernel (eight 2-byte loads a 16-byte chunk, two chunks a thread)
  elem4    the same, four chunks a thread
  warp2/4  a warp per 32 chunks of a row: one 16-byte load a lane from the 16-byte grid, the
           next block from the next lane (shuffle), funnel shifts; two or four runs a warp
  memcpy2d cudaMemcpy2DAsync (leaves the padding unwritten: the staged maps never read it)
  copy_    torch's copy_ into the padded rows (dst[:, :inner].copy_(src))
  flat     torch's copy_ of a contiguous tensor of the same bytes (the ceiling)

each checked against torch first (destination poisoned with NaN; the padding must be zeros, but
for memcpy2d). Compiles the .cu with nvcc on first use (~10 s; no torch headers).
    PYTHONPATH=$PWD:$PWD/benchmarks python3 tools/probe_pitched_copy.py [OUTERxINNERxLD ...]"""
import ctypes
import os
import shutil
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from common import time_in_turn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = {"elem2": 2, "elem4": 4, "warp2": 12, "warp4": 14, "memcpy2d": 20}

# (outer, inner, ld): A (m x k, rows k apart) and B (k x n, rows n apart) of streamk_mm's staged shapes.
DEFAULT_CASES = [
    (383, 16638, 16638), (16638, 1014, 1014),  # 383 x 1014 x 16638 (both operands in 4-byte rows)
    (1559, 16966, 16966),                      # 1559 x 1296 x 16966's A
    (6652, 11459, 11459), (11459, 990, 990),   # 6652 x 990 x 11459 (odd K)
    (939, 675, 675), (675, 167, 167),          # 939 x 167 x 675 (odd K and N: small copies)
    (219, 10383, 10383), (10383, 157, 157),    # 219 x 157 x 10383
    (708, 140, 140), (140, 830, 830),          # 708 x 830 x 140
]


def library():
    path = "/tmp/probe_pitched_copy.so"
    source = os.path.join(HERE, "probe_pitched_copy.cu")
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(source):
        nvcc = shutil.which("nvcc") or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
        subprocess.run([nvcc, "-O3", "-arch=sm_90a", "-shared", "-Xcompiler", "-fPIC", "-cudart", "static",
                        "-o", path, source], check=True)
    lib = ctypes.CDLL(path)
    lib.pitched_copy.restype = ctypes.c_int
    lib.pitched_copy.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int64] * 4 + [ctypes.c_void_p]
    return lib


def main(cases):
    lib = library()
    stream = torch.cuda.current_stream().cuda_stream
    print(f"{'source':>18s} {'MB':>6s} " + " ".join(f"{n:>14s}" for n in [*VARIANTS, "copy_", "flat"]))
    for outer, inner, ld in cases:
        pitch = (inner + 7) // 8 * 8
        base = torch.randn(outer * ld + 8, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty(outer, pitch, device="cuda", dtype=torch.bfloat16)
        src = base.as_strided((outer, inner), (ld, 1))

        def run(variant, source=src):
            err = lib.pitched_copy(VARIANTS[variant], source.data_ptr(), dst.data_ptr(), outer, inner, ld, pitch, stream)
            assert err == 0, f"{variant}: CUDA error {err}"

        # (row starts on other 2-byte residues too: sources at three offsets, each with its expected copy)
        sources = [base.as_strided((outer, inner), (ld, 1), offset) for offset in (0, 1, 3)]
        expectations = [torch.zeros_like(dst) for _ in sources]
        for source, expected in zip(sources, expectations):
            expected[:, :inner] = source
        right = []
        for name in VARIANTS:
            ok = True
            for source, expected in zip(sources, expectations):
                dst.fill_(float("nan"))
                run(name, source)
                cols = inner if name == "memcpy2d" else pitch  # (memcpy2d leaves the padding)
                ok = ok and torch.equal(dst[:, :cols], expected[:, :cols])
            if ok:
                right.append(name)
            else:
                print(f"  {name} copied {outer}x{inner}x{ld} WRONG: not timed")
        flat_src = torch.randn(outer * inner, device="cuda", dtype=torch.bfloat16)
        flat_dst = torch.empty(outer * pitch, device="cuda", dtype=torch.bfloat16)
        fns = {name: (lambda name=name: run(name)) for name in right}
        fns["copy_"] = lambda: dst[:, :inner].copy_(src)
        fns["flat"] = lambda: flat_dst[: outer * inner].copy_(flat_src)
        times = time_in_turn(fns, "cuda")
        moved = outer * inner * 2 + outer * pitch * 2
        cells = [f"{times[n] * 1e3:7.1f} {moved / (times[n] * 1e-3) / 1e12:4.2f}TB" if n in times else "-"
                 for n in [*VARIANTS, "copy_", "flat"]]
        print(f"{outer}x{inner}x{ld}".rjust(18) + f" {moved / 1e6:6.1f} " + " ".join(c.rjust(14) for c in cells), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main([tuple(int(x) for x in a.split("x")) for a in args] if args else DEFAULT_CASES)
