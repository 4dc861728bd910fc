"""fp64 syr2k on cuBLAS's path (dsyr2k, then the mirror kernel: TORCH_GROUPED_FP64_KERNELS=0)
against the DMMA kernel (=1), on big problems of small K, where the mirror's n² elements might
outweigh the kernel's slower rate (benchmarks/NOTES.md, session 40: they did not, by 3-17%).
Interleaved rounds (each shape's paths in reversed order every other round), do_bench medians
in µs; `dsyr2k` alone beside them (benchmarks/cublas_syr2k.py), so that the cuBLAS path's excess
over it (the mirror, and whatever else moves between the two calls: benchmarks/NOTES.md, session
42) shows in the same run.
    python tools/probe_syr2k_paths.py [--rounds 6] [--kernel-only]
--kernel-only: the kernel alone on each shape (median µs), for A/B runs of two builds of it
(TORCH_GROUPED_FP64_TILE picks its tile)."""
import argparse
import os
import statistics
import sys

import torch
from triton.testing import do_bench

import torch_grouped as tg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import cublas_syr2k  # noqa: E402

SHAPES = [(4096, 256), (4096, 512), (4096, 1024), (8192, 256), (8192, 512), (8192, 1024), (8192, 2048),
          (16384, 256), (4096, 4096), (2048, 8192)]
PATHS = {"cuBLAS path": "0", "kernel": "1"}


def inputs():
    return {s: torch.randn(*s, device="cuda", dtype=torch.float64) for s in SHAPES}


def kernel_only(rounds):
    os.environ["TORCH_GROUPED_FP64_KERNELS"] = "1"
    data = inputs()
    times = {s: [1000 * do_bench(lambda: tg.syr2k([data[s]], [data[s]]), warmup=5, rep=40) for _ in range(rounds)]
             for s in SHAPES}
    for s in SHAPES:
        print(f"n{s[0]} k{s[1]}: kernel {statistics.median(times[s]):.1f} µs")


def _on_path(setting, a):
    os.environ["TORCH_GROUPED_FP64_KERNELS"] = setting
    return tg.syr2k([a], [a])


def main(rounds):
    data = inputs()
    times = {(s, p): [] for s in SHAPES for p in [*PATHS, "dsyr2k"]}
    # Rounds interleaved, so that the GPU's clocks fall on every path alike, and each shape's paths
    # in reversed order every other round: a clock drifting through the three calls then favours
    # none of them (in a fixed order the first path took the coolest place in every round; the
    # benchmark's own timing had that bias, session 56). An even number of rounds.
    for r in range(rounds + rounds % 2):
        for s in SHAPES:
            a = data[s]
            out = torch.empty(s[0], s[0], device="cuda", dtype=torch.float64)
            runs = {path: (lambda setting=setting: _on_path(setting, a)) for path, setting in PATHS.items()}
            runs["dsyr2k"] = lambda: cublas_syr2k.syr2k_lower(a, a, out)
            for path in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
                times[s, path].append(1000 * do_bench(runs[path], warmup=5, rep=40))
    for s in SHAPES:
        blas, kernel, alone = (statistics.median(times[s, p]) for p in [*PATHS, "dsyr2k"])
        print(f"n{s[0]} k{s[1]}: cuBLAS path {blas:.1f} µs (dsyr2k alone {alone:.1f}, excess {blas - alone:.1f}), "
              f"kernel {kernel:.1f} µs, kernel / cuBLAS path {kernel / blas:.3f}, kernel / dsyr2k {kernel / alone:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="rounds (made even)")
    parser.add_argument("--kernel-only", action="store_true", help="the kernel alone (A/B runs of two builds)")
    args = parser.parse_args()
    (kernel_only if args.kernel_only else main)(args.rounds)
