"""streamk_mm against torch.mm (cuBLAS) and against our own data-parallel decomposition with the
same tile: the single-matmul cases of ANCHORS.md and a corpus of random shapes (issue 7).

The corpus: 64 shapes drawn log-uniformly with a fixed seed, m and n in 128..8192, k in
128..65536, redrawn while 2mnk exceeds 2^38 FLOPs (about 0.4 ms of an H100) so the corpus runs
in about a minute. Cases whose output has fewer tiles (the op's: 128x256, 128x128 when n <= 128)
than the GPU has SMs and k >= 8192 are the paper's strong-scaling shapes: their names start with
"ss". On a CPU: three small anchors and a corpus of three tiny shapes, to check the script.
"""
import math
import os
import random

import torch

import torch_grouped as tg
from common import Case, on_gpu
from streamk_sweep import device_sms, geomean, tile

ANCHOR_SHAPES = [(384, 384, 128), (1664, 1664, 4096), (2304, 2304, 2048), (128, 128, 65536),
                 (256, 256, 131072), (512, 1024, 32768), (1024, 1024, 16384), (4096, 4096, 4096),
                 (3456, 3456, 3456), (8192, 1024, 8192), (16384, 16384, 256), (6144, 6144, 1024),
                 (1408, 1408, 8192), (2176, 2176, 4096), (768, 3072, 12288)]
CPU_SHAPES = [(256, 256, 256), (128, 128, 2048), (96, 200, 700)]
# (count, seed, FLOP cap, m/n range, k range); the CPU corpus is a few tiny shapes, so that the
# summary and its plot run in the CPU check too.
GPU_CORPUS = (64, 2026, 2.0 ** 38, (128, 8192), (128, 65536))
CPU_CORPUS = (3, 2026, 2.0 ** 24, (32, 256), (32, 2048))


def corpus(gpu=True):
    count, seed, max_flops, (lo, hi), (k_lo, k_hi) = GPU_CORPUS if gpu else CPU_CORPUS
    rng = random.Random(seed)
    draw = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))  # noqa: E731
    shapes = []
    while len(shapes) < count:
        m, n, k = draw(lo, hi), draw(lo, hi), draw(k_lo, k_hi)
        if 2.0 * m * n * k <= max_flops:
            shapes.append((m, n, k))
    return shapes


def strong_scaling(m, n, k, device):
    """Fewer output tiles than CTAs, and a long K: the shapes Stream-K is for (the paper's
    strong-scaling regime). The tile is the op's (streamk_sweep.tile); k >= 8192 on the GPU."""
    tm, tn, tk = tile(device, n)
    return math.ceil(m / tm) * math.ceil(n / tn) < device_sms(device) and k >= 128 * tk


def _case(m, n, k, dtype, device, name, tol):
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    return Case("streamk_mm", name, dtype, lambda: tg.streamk_mm(a, b),
                {"torch.mm": lambda: torch.mm(a, b),
                 "ours, data_parallel": lambda: tg.streamk_mm(a, b, decomposition="data_parallel")},
                2.0 * m * n * k, "mm", tol)


def cases(device):
    gpu = on_gpu(device)
    dtype, tol = (torch.bfloat16, 2e-2) if gpu else (torch.float32, 1e-4)
    for m, n, k in (ANCHOR_SHAPES if gpu else CPU_SHAPES):
        yield _case(m, n, k, dtype, device, f"{m}x{n}x{k}", tol)
    for m, n, k in corpus(gpu):
        tag = "ss " if strong_scaling(m, n, k, device) else ""
        yield _case(m, n, k, dtype, device, f"{tag}corpus {m}x{n}x{k}", tol)


def summarize(results, out_dir):
    """The issue's figures over the corpus, and the paper-style plot of the ratio distribution
    (out_dir/streamk_corpus.png). Also run on a saved results.json by streamk_report.py."""
    rows = [r for r in results if "corpus" in r["case"]]
    if not rows:
        return None
    vs_mm = [r["ratio"] for r in rows]
    ss = [r["ratio"] for r in rows if r["case"].startswith("ss ")]
    vs_dp = [r["ratios"]["ours, data_parallel"] for r in rows]
    summary = {"shapes": len(rows), "geomean_vs_mm": geomean(vs_mm), "min_vs_mm": min(vs_mm),
               "max_vs_mm": max(vs_mm), "at_least_mm": sum(x >= 1.0 for x in vs_mm),
               "strong_scaling_shapes": len(ss), "geomean_strong_scaling_vs_mm": geomean(ss),
               "geomean_vs_data_parallel": geomean(vs_dp), "min_vs_data_parallel": min(vs_dp)}
    print(f"\nstreamk_mm corpus ({len(rows)} shapes): {summary['geomean_vs_mm']:.2f}x torch.mm geomean "
          f"(min {summary['min_vs_mm']:.2f}x, max {summary['max_vs_mm']:.2f}x, {summary['at_least_mm']} "
          f"at >= 1x); strong-scaling shapes ({len(ss)}): {summary['geomean_strong_scaling_vs_mm']:.2f}x "
          f"torch.mm geomean; "
          f"{summary['geomean_vs_data_parallel']:.2f}x our data_parallel geomean "
          f"(min {summary['min_vs_data_parallel']:.2f}x)")
    plot_corpus(rows, vs_mm, vs_dp, out_dir)
    return summary


def plot_corpus(rows, vs_mm, vs_dp, out_dir):
    """Speed-ups sorted in increasing order, as the Stream-K paper plots its corpus; the
    strong-scaling shapes marked on the cuBLAS series."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = sorted(range(len(rows)), key=lambda i: vs_mm[i])
    ss = [x for x, i in enumerate(order) if rows[i]["case"].startswith("ss ")]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([vs_mm[i] for i in order], marker=".", linestyle="none", label="vs torch.mm (cuBLAS)")
    if ss:
        ax.plot(ss, [vs_mm[order[x]] for x in ss], marker="o", markerfacecolor="none", linestyle="none",
                color="C0", label="strong-scaling shapes (vs torch.mm)")
    ax.plot(sorted(vs_dp), marker=".", linestyle="none", label="vs our data_parallel")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("corpus shapes, sorted by ratio")
    ax.set_ylabel("speed-up (peer time / streamk_mm auto time)")
    ax.set_title(f"streamk_mm over {len(rows)} random shapes, {rows[0]['dtype']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "streamk_corpus.png"), dpi=100)
    plt.close(fig)
