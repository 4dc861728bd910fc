"""streamk_mm against torch.mm (cuBLAS) and against our own data-parallel decomposition with the
same tile: the single-matmul cases of ANCHORS.md and a corpus of random shapes (issue 7).

The corpus: 64 shapes drawn log-uniformly with a fixed seed, m and n in 128..8192, k in
128..65536, redrawn while 2mnk exceeds 2^38 FLOPs (about 0.4 ms of an H100) so the corpus runs
in about a minute. Cases whose output has fewer 128x256 tiles than the GPU has SMs and k >= 8192
are the paper's strong-scaling shapes: their names start with "ss".
"""
import math
import os
import random

import torch

import torch_grouped as tg
from common import Case, on_gpu

ANCHOR_SHAPES = [(384, 384, 128), (1664, 1664, 4096), (2304, 2304, 2048), (128, 128, 65536),
                 (256, 256, 131072), (512, 1024, 32768), (1024, 1024, 16384), (4096, 4096, 4096),
                 (3456, 3456, 3456), (8192, 1024, 8192), (16384, 16384, 256), (6144, 6144, 1024),
                 (1408, 1408, 8192), (2176, 2176, 4096), (768, 3072, 12288)]
CPU_SHAPES = [(256, 256, 256), (128, 128, 2048), (96, 200, 700)]
CORPUS_SIZE, CORPUS_SEED, CORPUS_MAX_FLOPS = 64, 2026, 2.0 ** 38


def corpus():
    rng = random.Random(CORPUS_SEED)
    draw = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))  # noqa: E731
    shapes = []
    while len(shapes) < CORPUS_SIZE:
        m, n, k = draw(128, 8192), draw(128, 8192), draw(128, 65536)
        if 2.0 * m * n * k <= CORPUS_MAX_FLOPS:
            shapes.append((m, n, k))
    return shapes


def strong_scaling(m, n, k, sms):
    return math.ceil(m / 128) * math.ceil(n / 256) < sms and k >= 8192


def _case(m, n, k, dtype, device, name, tol):
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    return Case("streamk_mm", name, dtype, lambda: tg.streamk_mm(a, b),
                {"torch.mm": lambda: torch.mm(a, b),
                 "ours, data_parallel": lambda: tg.streamk_mm(a, b, decomposition="data_parallel")},
                2.0 * m * n * k, "mm", tol)


def cases(device):
    if not on_gpu(device):
        for m, n, k in CPU_SHAPES:
            yield _case(m, n, k, torch.float32, device, f"{m}x{n}x{k}", 1e-4)
        return
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    for m, n, k in ANCHOR_SHAPES:
        yield _case(m, n, k, torch.bfloat16, device, f"{m}x{n}x{k}", 2e-2)
    for m, n, k in corpus():
        tag = "ss " if strong_scaling(m, n, k, sms) else ""
        yield _case(m, n, k, torch.bfloat16, device, f"{tag}corpus {m}x{n}x{k}", 2e-2)


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summarize(results, out_dir):
    """The issue's figures over the corpus, and the paper-style plot of the ratio distribution."""
    rows = [r for r in results if "corpus" in r["case"]]
    if not rows:
        return
    vs_mm = [r["ratio"] for r in rows]
    ss = [r["ratio"] for r in rows if r["case"].startswith("ss ")]
    vs_dp = [r["ratios"]["ours, data_parallel"] for r in rows]
    print(f"\nstreamk_mm corpus ({len(rows)} shapes): {_geomean(vs_mm):.2f}x torch.mm geomean "
          f"(min {min(vs_mm):.2f}x); strong-scaling shapes ({len(ss)}): {_geomean(ss):.2f}x; "
          f"{_geomean(vs_dp):.2f}x our data_parallel geomean")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(sorted(vs_mm), marker=".", linestyle="none", label="vs torch.mm (cuBLAS)")
    ax.plot(sorted(vs_dp), marker=".", linestyle="none", label="vs our data_parallel")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("corpus shapes, sorted by ratio")
    ax.set_ylabel("speed-up (peer time / streamk_mm auto time)")
    ax.set_title(f"streamk_mm over {len(rows)} random shapes, bf16")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "streamk_corpus.png"), dpi=100)
    plt.close(fig)
