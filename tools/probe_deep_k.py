"""Why streamk_mm streams the deep-K shapes of few tiles (128² x 65536, 256² x 131072) from DRAM at
~1.7 TB/s where cuBLAS reaches 2.6-3.7 (ncu, H200, session 45): the same work with a row stride
that is not a power of two (K - 8), with A stored M-major (its K rows contiguous instead of its M
rows), and with the fixup kernel launched plainly rather than as a programmatic dependent. One
line per variant: ours (auto) and torch.mm, median µs of triton's do_bench (L2 flushed).
    PYTHONPATH=$PWD python3 tools/probe_deep_k.py"""
import os

import torch
from triton.testing import do_bench

import torch_grouped as tg


def operands(m, n, k, a_m_major=False):
    a = torch.randn(k, m, device="cuda", dtype=torch.bfloat16).t() if a_m_major else \
        torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    return a, torch.randn(k, n, device="cuda", dtype=torch.bfloat16)


def line(label, a, b, **kwargs):
    ours = do_bench(lambda: tg.streamk_mm(a, b, **kwargs), warmup=25, rep=100, return_mode="median") * 1e3
    mm = do_bench(lambda: torch.mm(a, b), warmup=25, rep=100, return_mode="median") * 1e3
    gb = (a.numel() + b.numel()) * 2 / 1e9
    print(f"{label:44s} ours {ours:7.1f}  torch.mm {mm:7.1f}  ratio {mm / ours:5.2f}  "
          f"operands at {gb / ours * 1e3:5.2f} TB/s (ours), {gb / mm * 1e3:5.2f} (mm)", flush=True)


def backward_line(m, n, k):
    """Forward and backward of a linear layer's matmul through streamk_mm and torch.mm: dB = Aᵀ·dY
    passes A M-major."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    step = lambda mm: mm(a, b).backward(dy)  # noqa: E731
    ours = do_bench(lambda: step(tg.streamk_mm), warmup=25, rep=100, grad_to_none=[a, b], return_mode="median") * 1e3
    theirs = do_bench(lambda: step(torch.mm), warmup=25, rep=100, grad_to_none=[a, b], return_mode="median") * 1e3
    print(f"{m}x{n}x{k} forward + backward               ours {ours:7.1f}  torch.mm {theirs:7.1f}  ratio {theirs / ours:5.2f}",
          flush=True)


def backward_kernels(m, n, k):
    """The kernels of one forward and backward through streamk_mm (tools/kernel_breakdown.py)."""
    from kernel_breakdown import kernels
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)

    def step():
        a.grad = b.grad = None
        tg.streamk_mm(a, b).backward(dy)
    found = kernels(step)
    print(f"{m}x{n}x{k} forward + backward: {sum(t for t, _ in found.values()):.1f} µs of kernels")
    for (name, grid), (t, count) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        print(f"    {t:8.1f} µs  x{count:.0f}  grid {list(grid)}  {name[:150]}", flush=True)


def main():
    for m, n, k in ((128, 128, 65536), (256, 256, 131072)):
        for kk in (k, k - 8):
            line(f"{m}x{n}x{kk}", *operands(m, n, kk))
        line(f"{m}x{n}x{k} A M-major", *operands(m, n, k, a_m_major=True))
        for g in (33, 66, 132):
            line(f"{m}x{n}x{k} stream_k grid {g}", *operands(m, n, k), decomposition="stream_k", grid=g)
    for m, n, k in ((8192, 4096, 4096), (4096, 1024, 4096)):
        backward_line(m, n, k)
    print("PDL:", os.environ.get("TORCH_GROUPED_PDL", "(unset: on)"))


if __name__ == "__main__":
    main()
