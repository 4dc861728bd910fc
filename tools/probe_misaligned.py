"""Where a misaligned streamk_mm call's time goes (issue 7: the corpus's random shapes have an odd
or a not-multiple-of-8 K or N, so TMA cannot address their operands' rows or the output's).
For each shape, do_bench µs (L2 flushed, median) of `auto` on
    mis       contiguous operands, as the benchmark calls it (pitched copies or row copies);
    views     the same values in storage padded to 8-element rows (TMA reads them in place; the
              output is still m x n, its rows as misaligned as in `mis`);
    aligned   `views` with N padded too (an m x N8 output: the matmul without any misalignment,
              N8/N more MACs), scaled by N/N8;
    torch.mm  on the contiguous operands;
and, with --kernels, the GPU kernels of one `mis` call (torch.profiler, mean µs of 20 calls).
    PYTHONPATH=$PWD python3 tools/probe_misaligned.py [--kernels] MxNxK ..."""
import sys

import torch
from triton.testing import do_bench

import torch_grouped as tg


def padded(rows, cols, gen):
    """A rows x cols bf16 view on the GPU whose row stride is cols rounded up to 8 elements."""
    storage = torch.randn(rows, -(-cols // 8) * 8, generator=gen).to("cuda", torch.bfloat16)
    return storage[:, :cols]


def us(fn):
    return do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3


def main(shapes, kernels):
    gen = torch.Generator().manual_seed(0)
    print(f"{'shape':>18s} {'mis':>8s} {'views':>8s} {'aligned':>8s} {'torch.mm':>8s}")
    for shape in shapes:
        m, n, k = (int(v) for v in shape.split("x"))
        a_view, b_wide = padded(m, k, gen), padded(k, -(-n // 8) * 8, gen)
        b_view = b_wide[:, :n]
        a, b = a_view.contiguous(), b_view.contiguous()
        x, y = tg.streamk_mm(a_view, b_view).float(), tg.streamk_mm(a, b).float()
        assert (x - y).abs().max() <= 0.02 * y.abs().max(), shape  # (the two may take other tiles or plans)
        t = {"mis": us(lambda: tg.streamk_mm(a, b)), "views": us(lambda: tg.streamk_mm(a_view, b_view)),
             "aligned": us(lambda: tg.streamk_mm(a_view, b_wide)) * n / b_wide.size(1),
             "torch.mm": us(lambda: torch.mm(a, b))}
        print(f"{shape:>18s} " + " ".join(f"{v:8.1f}" for v in t.values()), flush=True)
        if kernels:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(20):
                    tg.streamk_mm(a, b)
                torch.cuda.synchronize()
            for e in prof.key_averages():
                if e.device_time_total > 0:
                    print(f"{'':18s}   {e.key[:90]} x{e.count // 20} {e.device_time_total / 20:.1f} us")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--kernels"]
    main(args, "--kernels" in sys.argv[1:])
