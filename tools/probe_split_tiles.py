"""Does a 64-row tile stream a deep-K product of few tiles faster than our 128-row ones? (issue 7's
deep-K shapes: streamk_mm reads their operands at ~1.65 TB/s on 33-132 CTAs, cuBLAS's split-K with
64- and 128 x 64-row tiles at 2.6-3.7; session 45.) Without a new Stream-K instantiation: the
list form of `gemm` runs split-K itself when each group is one K slice of the same product (views,
no copies), and its kernels exist with 64 x 128 tiles (two CTAs an SM) as well as 128 x 128 ones.
One line per (shape, slices, tile): the matmul kernel's mean µs (torch.profiler, L2 flushed before
each call) and the operands' rate; then torch.mm's kernels for the same shape.
    PYTHONPATH=$PWD:$PWD/tools python3 tools/probe_split_tiles.py [MxNxK ...]"""
import os
import sys

import torch

import torch_grouped as tg
from kernel_breakdown import kernels

SHAPES = ((128, 128, 65536), (256, 256, 131072))
SLICES = (66, 132, 264)
TILES = ("128x128", "64x128")


def slices_of(a, b, count):
    """`count` K slices of a @ b as the lists of the gemm call (the last slice takes the remainder,
    each a multiple of 64 so that every group's K blocks are whole)."""
    k = a.shape[1]
    step = (k // count + 63) // 64 * 64
    bounds = list(range(0, k, step)) + [k]
    return [a[:, s:e] for s, e in zip(bounds, bounds[1:])], [b[s:e] for s, e in zip(bounds, bounds[1:])]


def report(label, found, gigabytes):
    total = sum(t for t, _ in found.values())
    rate = gigabytes / total * 1e3
    print(f"{label}: {total:.1f} µs of kernels, operands at {rate:.2f} TB/s of the whole", flush=True)
    for (name, grid), (t, count) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        print(f"    {t:8.1f} µs  x{count:.0f}  grid {list(grid)}  {name[:140]}", flush=True)


def main(shapes):
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        gigabytes = (a.numel() + b.numel()) * 2 / 1e9
        expected = a.float() @ b.float()
        for count in SLICES:
            la, lb = slices_of(a, b, count)
            for tile in TILES:
                os.environ["TORCH_GROUPED_TILE"] = tile
                parts = tg.gemm(la, lb, out_dtype=torch.float32)
                err = ((torch.stack(parts).sum(0) - expected).abs().max() / expected.abs().max()).item()
                report(f"{m}x{n}x{k} {len(la)} slices, tile {tile} (rel err {err:.1e})",
                       kernels(lambda: tg.gemm(la, lb, out_dtype=torch.float32)), gigabytes)
        os.environ.pop("TORCH_GROUPED_TILE", None)
        report(f"{m}x{n}x{k} torch.mm", kernels(lambda: torch.mm(a, b)), gigabytes)
        report(f"{m}x{n}x{k} streamk_mm auto", kernels(lambda: tg.streamk_mm(a, b)), gigabytes)


if __name__ == "__main__":
    main([tuple(int(v) for v in s.split("x")) for s in sys.argv[1:]] or SHAPES)
