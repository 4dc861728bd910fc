"""Why fp64 grouped_mm 32 x 256x4096x2048 runs at ~60% of the fp64 ceiling where gemm's 4 x 4096^3
runs at ~99% on the same DMMA kernel: the same problems through grouped_mm and gemm, with the
weights K-major (the benchmark's) and N-major, and a loop of mm; median µs and TFLOP/s (do_bench).
    python tools/probe_f64_layouts.py"""
import torch
from triton.testing import do_bench

import torch_grouped as tg

# (name, experts, M per expert, N, K)
CASES = [("32x_256x4096x2048", 32, 256, 4096, 2048), ("4x_4096x4096x4096", 4, 4096, 4096, 4096),
         ("8x_1024x4096x2048", 8, 1024, 4096, 2048)]


def row(label, fn, flops):
    us = do_bench(fn, return_mode="median") * 1e3
    print(f"  {label:34s} {us:9.1f} µs  {flops / us / 1e6:6.1f} TFLOP/s", flush=True)


def main():
    torch.manual_seed(0)
    for name, g, m, n, k in CASES:
        flops = 2.0 * g * m * n * k
        print(name)
        a = torch.randn(g * m, k, device="cuda", dtype=torch.float64)
        offs = torch.arange(1, g + 1, device="cuda", dtype=torch.int32) * m
        for layout, b in (("K-major", torch.randn(g, n, k, device="cuda", dtype=torch.float64).mT),
                          ("N-major", torch.randn(g, k, n, device="cuda", dtype=torch.float64))):
            ref = torch.stack([a[i * m:(i + 1) * m] @ b[i] for i in range(g)]).reshape(g * m, n)
            err = (tg.grouped_mm(a, b, offs) - ref).abs().max().item()
            row(f"grouped_mm B {layout} (err {err:.1e})", lambda: tg.grouped_mm(a, b, offs), flops)
            a_list, b_list = list(a.split(m)), list(b.unbind(0))
            row(f"gemm list B {layout}", lambda: tg.gemm(a_list, b_list), flops)
            row(f"loop of mm B {layout}", lambda: [torch.mm(x, y) for x, y in zip(a_list, b_list)], flops)
        at = a.T.contiguous().T  # A M-major
        b = torch.randn(g, k, n, device="cuda", dtype=torch.float64)
        row("grouped_mm A M-major, B N-major", lambda: tg.grouped_mm(at, b, offs), flops)


if __name__ == "__main__":
    main()
