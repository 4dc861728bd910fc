"""streamk_mm against torch.mm (cuBLAS) and against our own data-parallel decomposition with the
same tile (`auto` picks one per shape, every decomposition of the shape runs it): the
single-matmul cases of ANCHORS.md and a corpus of random shapes (issue 7).

The corpus: 64 shapes drawn log-uniformly with a fixed seed, m and n in 128..8192, k in
128..65536, redrawn while 2mnk exceeds 2^38 FLOPs (about 0.4 ms of an H100) so the corpus runs
in about a minute. Cases whose output has fewer 128x256 tiles (128x128 when n <= 128) than
the GPU has SMs and k >= 8192 are the paper's strong-scaling shapes: their names start with
"ss". Then fp32 cases, a linear layer's training step (forward and backward through the op,
against torch.mm's under torch autograd), and an A stored M-major. On a CPU: three small anchors,
a corpus of three tiny shapes and one small training step, to check the script.
"""
import math
import os
import random

import torch

import torch_grouped as tg
from common import Case, geomean, on_gpu, on_our_kernel, report_targets, save_summary, time_in_turn, with_env, with_tf32
from streamk_sweep import device_sms, fixed_rule_tile

ANCHOR_SHAPES = [(384, 384, 128), (1664, 1664, 4096), (2304, 2304, 2048), (128, 128, 65536),
                 (256, 256, 131072), (512, 1024, 32768), (1024, 1024, 16384), (4096, 4096, 4096),
                 (3456, 3456, 3456), (8192, 1024, 8192), (16384, 16384, 256), (6144, 6144, 1024),
                 (1408, 1408, 8192), (2176, 2176, 4096), (768, 3072, 12288)]
CPU_SHAPES = [(256, 256, 256), (128, 128, 2048), (96, 200, 700)]
# fp32 (3xTF32 on the TF32 kernel where it beats cuBLAS, under torch's default precision)
# against fp32 cuBLAS, on the GPU only: big and awkward anchors, and an unaligned shape.
FP32_SHAPES = [(4096, 4096, 4096), (2304, 2304, 2048), (1408, 1408, 8192), (512, 1024, 32768),
               (128, 128, 65536), (8192, 1024, 8192), (1000, 3000, 5000)]
# A linear layer's matmul trained (forward and backward) at these shapes, and a forward with A
# stored M-major (xᵀ, as the backward's dB passes it); on a CPU one small training step.
TRAIN_SHAPES = [(4096, 1024, 4096), (8192, 4096, 4096), (2048, 2048, 2048)]
CPU_TRAIN_SHAPES = [(96, 80, 200)]
M_MAJOR_SHAPES = [(4096, 1024, 4096), (256, 256, 131072)]
# (count, seed, FLOP cap, m/n range, k range); the CPU corpus is a few tiny shapes, so that the
# summary and its plot run in the CPU check too.
GPU_CORPUS = (64, 2026, 2.0 ** 38, (128, 8192), (128, 65536))
CPU_CORPUS = (3, 2026, 2.0 ** 24, (32, 256), (32, 2048))


def corpus(gpu=True, seed=None):
    """The benchmark's corpus; with another `seed`, another draw of the same distribution (the
    Stream-K model is calibrated on such a draw, not on the corpus it is judged by)."""
    count, default_seed, max_flops, (lo, hi), (k_lo, k_hi) = GPU_CORPUS if gpu else CPU_CORPUS
    rng = random.Random(default_seed if seed is None else seed)
    draw = lambda lo, hi: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))  # noqa: E731
    shapes = []
    while len(shapes) < count:
        m, n, k = draw(lo, hi), draw(lo, hi), draw(k_lo, k_hi)
        if 2.0 * m * n * k <= max_flops:
            shapes.append((m, n, k))
    # The tiny CPU draw has no strong-scaling shape (k < 4096); one fixed one (4 tiles on 8 CTAs,
    # 128 K blocks) runs that part of the summary and the plot in the CPU check.
    return shapes if gpu else shapes + [(96, 128, 4096)]


def time_forced_tiles(m, n, k, tiles, device="cuda"):
    """ms of streamk_mm on fresh bf16 m x k and k x n operands under each forced tile of `tiles`
    (TORCH_GROUPED_STREAMK_TILE, read on every call), as `auto` picks ("auto") and of torch.mm
    ("mm"), timed in turn (common.time_in_turn); and the tile `auto` runs (_streamk_tile)."""
    a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=device, dtype=torch.bfloat16)
    call = lambda: tg.streamk_mm(a, b)  # noqa: E731
    fns = {"auto": call, **{t: with_env({"TORCH_GROUPED_STREAMK_TILE": t}, call) for t in tiles},
           "mm": lambda: torch.mm(a, b)}
    return time_in_turn(fns, device), "x".join(map(str, torch.ops.grouped._streamk_tile(a, b)[:2]))


def strong_scaling(m, n, k, device):
    """Fewer output tiles than CTAs, and a long K: the shapes Stream-K is for (the paper's
    strong-scaling regime). Counted in 128 x 256 tiles (128 x 128 where n <= 128; the CPU path's
    64 x 64), fixed so that the set stays the one of earlier runs whatever tile `auto` takes;
    k >= 8192 on the GPU."""
    tm, tn, tk = fixed_rule_tile(on_gpu(device), n)
    return math.ceil(m / tm) * math.ceil(n / tn) < device_sms(device) and k >= 128 * tk


def _case(m, n, k, dtype, device, name, tol):
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    return Case("streamk_mm", name, dtype, lambda: tg.streamk_mm(a, b),
                {"torch.mm": lambda: torch.mm(a, b),
                 "ours, data_parallel": lambda: tg.streamk_mm(a, b, decomposition="data_parallel")},
                2.0 * m * n * k, "mm", tol)


def _train_case(m, n, k, dtype, device, tol):
    """dA = dY·Bᵀ and dB = Aᵀ·dY of y = A·B (both through the op itself: streamk_mm's C++ autograd
    reads Aᵀ M-major where it lies) after the forward, against torch.mm's under the same autograd:
    what a training step pays for the layer's matmuls, the autograd layer's host time included."""
    a = torch.randn(m, k, device=device, dtype=dtype, requires_grad=True)
    b = torch.randn(k, n, device=device, dtype=dtype, requires_grad=True)
    dy = torch.randn(m, n, device=device, dtype=dtype)
    step = lambda mm: lambda: torch.autograd.grad(mm(a, b), (a, b), dy)  # noqa: E731
    return Case("streamk_mm", f"train {m}x{n}x{k}", dtype, step(tg.streamk_mm), {"torch.mm": step(torch.mm)},
                3 * 2.0 * m * n * k, "mm", tol)


def _m_major_case(m, n, k, dtype, device, tol):
    """A stored M-major (a transposed view), B row-major: read where it lies (session 46) rather
    than transposed first, which TORCH_GROUPED_STREAMK_A_M_MAJOR=0 brings back as a peer."""
    a = torch.randn(k, m, device=device, dtype=dtype).t()
    b = torch.randn(k, n, device=device, dtype=dtype)
    return Case("streamk_mm", f"A M-major {m}x{n}x{k}", dtype, lambda: tg.streamk_mm(a, b),
                {"torch.mm": lambda: torch.mm(a, b),
                 "ours, A staged K-major": with_env({"TORCH_GROUPED_STREAMK_A_M_MAJOR": "0"}, lambda: tg.streamk_mm(a, b))},
                2.0 * m * n * k, "mm", tol)


def _fp32_case(m, n, k, device):
    """fp32 as users call it (TORCH_GROUPED_FP32_KERNELS unset: the TF32 kernel where it was measured
    faster, else cuBLAS) against fp32 cuBLAS, under torch's default precision (allow_tf32 off:
    3xTF32); the TF32 kernel forced (`auto`, and data_parallel), one TF32 pass forced, and cuBLAS's
    own TF32 (both under allow_tf32) as further peers."""
    a = torch.randn(m, k, device=device)
    b = torch.randn(k, n, device=device)
    forced = lambda **kw: on_our_kernel(torch.float32, lambda: tg.streamk_mm(a, b, **kw))  # noqa: E731
    return Case("streamk_mm", f"fp32 {m}x{n}x{k}", torch.float32, lambda: tg.streamk_mm(a, b),
                {"torch.mm (fp32)": lambda: torch.mm(a, b), "ours, TF32 kernel": forced(),
                 "ours, TF32 kernel, data_parallel": forced(decomposition="data_parallel"),
                 "ours, one TF32 pass": with_tf32(forced()),
                 "torch.mm (TF32)": with_tf32(lambda: torch.mm(a, b))},
                2.0 * m * n * k, "mm", 1e-5)


def cases(device):
    gpu = on_gpu(device)
    dtype, tol = (torch.bfloat16, 2e-2) if gpu else (torch.float32, 1e-4)
    for m, n, k in (ANCHOR_SHAPES if gpu else CPU_SHAPES):
        yield _case(m, n, k, dtype, device, f"{m}x{n}x{k}", tol)
    for m, n, k in corpus(gpu):
        tag = "ss " if strong_scaling(m, n, k, device) else ""
        yield _case(m, n, k, dtype, device, f"{tag}corpus {m}x{n}x{k}", tol)
    for m, n, k in (FP32_SHAPES if gpu else []):
        yield _fp32_case(m, n, k, device)
    for m, n, k in (TRAIN_SHAPES if gpu else CPU_TRAIN_SHAPES):
        yield _train_case(m, n, k, dtype, device, tol)
    for m, n, k in (M_MAJOR_SHAPES if gpu else []):
        yield _m_major_case(m, n, k, dtype, device, tol)


# Issue 7's targets on an H100 (bf16), printed next to the figures; never asserted.
TARGETS = {"geomean_vs_mm": 1.05, "min_vs_mm": 0.85, "geomean_strong_scaling_vs_mm": 1.3,
           "geomean_vs_data_parallel": 1.2}


def summarize(results, out_dir):
    """The issue's figures over the corpus, next to its targets; saved as
    out_dir/streamk_summary.json, and the paper-style plot of the ratio distribution
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
    text = lambda key: "none" if math.isnan(summary[key]) else f"{summary[key]:.2f}x"  # noqa: E731
    print(f"\nstreamk_mm corpus ({len(rows)} shapes): {text('geomean_vs_mm')} torch.mm geomean "
          f"(min {text('min_vs_mm')}, max {text('max_vs_mm')}, {summary['at_least_mm']} at >= 1x); "
          f"strong-scaling shapes ({len(ss)}): {text('geomean_strong_scaling_vs_mm')} torch.mm geomean; "
          f"{text('geomean_vs_data_parallel')} our data_parallel geomean (min {text('min_vs_data_parallel')})")
    path = os.path.join(out_dir, "streamk_summary.json")
    if all(r["dtype"] == "bfloat16" for r in rows):  # the GPU corpus; the CPU one is a small fp32 check
        report_targets("issue 7 targets (H100, bf16)", summary, TARGETS, path)
    else:
        save_summary(summary, path)
    plot_corpus(rows, vs_mm, vs_dp, out_dir)
    return summary


def _flops(case_name):
    m, n, k = (int(v) for v in case_name.split()[-1].split("x"))
    return 2.0 * m * n * k


def plot_corpus(rows, vs_mm, vs_dp, out_dir):
    """Left: speed-ups sorted in increasing order, as the Stream-K paper plots its corpus, the
    strong-scaling shapes marked on the cuBLAS series. Right: the same against each shape's
    FLOPs, where small shapes (launch and copy bound) separate from large ones."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter

    is_ss = [r["case"].startswith("ss ") for r in rows]
    order = sorted(range(len(rows)), key=lambda i: vs_mm[i])
    ss = [x for x, i in enumerate(order) if is_ss[i]]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5))
    ax.plot([vs_mm[i] for i in order], marker=".", linestyle="none", label="vs torch.mm (cuBLAS)")
    if ss:
        ax.plot(ss, [vs_mm[order[x]] for x in ss], marker="o", markerfacecolor="none", linestyle="none",
                color="C0", label="strong-scaling shapes (vs torch.mm)")
    ax.plot(sorted(vs_dp), marker=".", linestyle="none", label="vs our data_parallel")
    ax.set_xlabel("corpus shapes, sorted by ratio")
    flops = [_flops(r["case"]) for r in rows]
    bx.scatter([f for f, s in zip(flops, is_ss) if not s], [x for x, s in zip(vs_mm, is_ss) if not s],
               marker=".", label="vs torch.mm")
    bx.scatter([f for f, s in zip(flops, is_ss) if s], [x for x, s in zip(vs_mm, is_ss) if s],
               marker="o", facecolors="none", edgecolors="C0", label="vs torch.mm, strong-scaling")
    bx.scatter(flops, vs_dp, marker=".", color="C1", label="vs our data_parallel")
    bx.set_xscale("log")
    bx.set_xlabel("FLOPs of the shape (2mnk)")
    for axis in (ax, bx):
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.axhline(TARGETS["min_vs_mm"], color="grey", linewidth=0.8, linestyle="--")  # the floor
        axis.set_yscale("log")
        axis.yaxis.set_major_formatter(FormatStrFormatter("%.2g"))
        axis.yaxis.set_minor_formatter(FormatStrFormatter("%.2g"))
        axis.set_ylabel("speed-up (peer time / streamk_mm auto time)")
        axis.legend(fontsize="small")
    fig.suptitle(f"streamk_mm over {len(rows)} random shapes, {rows[0]['dtype']} "
                 f"(dashed: the {TARGETS['min_vs_mm']}x floor of issue 7)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "streamk_corpus.png"), dpi=100)
    plt.close(fig)
