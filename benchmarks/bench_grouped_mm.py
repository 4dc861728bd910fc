"""grouped_mm (MoE form) against torch._grouped_mm and a loop of mm, cases of ANCHORS.md; and the
K-grouped form (2-D x 2-D, the MoE weight gradient dW = xᵀ dY) of the same layers."""
import os

import torch

import torch_grouped as tg
from common import Case, geomean, on_gpu, report_targets, with_tf32, work_of

# (name, groups, N, K, tokens, dtype, routing)
GPU_CASES = [
    ("mixtral_8x_4096x14336_T16k", 8, 14336, 4096, 16382, torch.bfloat16, "balanced"),
    ("dsv3_32x_7168x4096_T8k", 32, 4096, 7168, 8192, torch.bfloat16, "balanced"),
    ("dsv3_down_32x_2048x7168_T8k", 32, 7168, 2048, 8192, torch.bfloat16, "balanced"),
    ("small_64x_128x_1024x1024", 64, 1024, 1024, 8192, torch.bfloat16, "balanced"),
    ("tiny_128x_64x_512x512", 128, 512, 512, 8192, torch.bfloat16, "balanced"),
    ("32x_256x4096x2048_bf16", 32, 4096, 2048, 8192, torch.bfloat16, "balanced"),
    ("32x_256x4096x2048_fp16", 32, 4096, 2048, 8192, torch.float16, "balanced"),
    ("32x_256x4096x2048_fp32", 32, 4096, 2048, 8192, torch.float32, "balanced"),
    ("small_64x_128x_1024x1024_fp32", 64, 1024, 1024, 8192, torch.float32, "balanced"),
    # fp64 on the DMMA kernel
    ("32x_256x4096x2048_fp64", 32, 4096, 2048, 8192, torch.float64, "balanced"),
    ("small_64x_128x_1024x1024_fp64", 64, 1024, 1024, 8192, torch.float64, "balanced"),
    ("skewed_32x_4096x2048_T8k_empty_experts", 32, 4096, 2048, 8192, torch.bfloat16, "skewed"),
    ("decode_8x_4096x14336_T64", 8, 14336, 4096, 64, torch.bfloat16, "balanced"),
]
CPU_CASES = [
    ("cpu_4x_128x128_T256", 4, 128, 128, 256, torch.float32, "balanced"),
    ("cpu_16x_64x64_T512_skewed", 16, 64, 64, 512, torch.float32, "skewed"),
]
# The weight gradients of layers above: (name, groups, N, K, tokens, dtype, routing), dW[g] =
# x_gᵀ dY_g of shape [K, N], x [tokens, K], dY [tokens, N]. Every expert's token count is rounded
# up to a multiple of 16: torch._grouped_mm device-asserts on other K offsets (which kills the CUDA
# context), and MoE training pads to such multiples anyway.
GPU_WGRAD_CASES = [
    ("wgrad_mixtral_8x_4096x14336_T16k", 8, 14336, 4096, 16384, torch.bfloat16, "balanced"),
    ("wgrad_dsv3_32x_7168x4096_T8k", 32, 4096, 7168, 8192, torch.bfloat16, "balanced"),
    ("wgrad_dsv3_down_32x_2048x7168_T8k", 32, 7168, 2048, 8192, torch.bfloat16, "balanced"),
    ("wgrad_small_64x_1024x1024_T8k", 64, 1024, 1024, 8192, torch.bfloat16, "balanced"),
    ("wgrad_skewed_32x_2048x4096_T8k_empty_experts", 32, 4096, 2048, 8192, torch.bfloat16, "skewed"),
    ("wgrad_32x_2048x4096_T8k_fp16", 32, 4096, 2048, 8192, torch.float16, "balanced"),
]
CPU_WGRAD_CASES = [("cpu_wgrad_4x_128x128_T256", 4, 128, 128, 256, torch.float32, "balanced")]
TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 2e-3, torch.float64: 1e-10}


def group_sizes(groups, tokens, routing, generator):
    if routing == "balanced":  # random routing, every expert about tokens / groups rows
        counts = torch.bincount(torch.randint(groups, (tokens,), generator=generator), minlength=groups)
    else:  # a few hot experts, a quarter of the experts get nothing
        weights = torch.rand(groups, generator=generator) ** 4
        weights[torch.randperm(groups, generator=generator)[: groups // 4]] = 0
        counts = torch.bincount(torch.multinomial(weights, tokens, replacement=True, generator=generator),
                                minlength=groups)
    return counts


def forward_problems(names, device="cuda"):
    """The forward GPU cases named, as (name, a, b, counts): each with the counts the benchmark's
    routing gives it (every case's drawn in order, as cases() draws them) and fresh operands, B
    K-major as in cases(). For the tools that time or profile these cases another way."""
    g = torch.Generator().manual_seed(0)
    for name, groups, n, k, tokens, dtype, routing in GPU_CASES:
        counts = group_sizes(groups, tokens, routing, g)
        if name in names:
            yield (name, torch.randn(tokens, k, device=device, dtype=dtype),
                   torch.randn(groups, n, k, device=device, dtype=dtype).mT, counts)


def cases(device):
    g = torch.Generator().manual_seed(0)
    for name, groups, n, k, tokens, dtype, routing in (GPU_CASES if on_gpu(device) else CPU_CASES):
        counts = group_sizes(groups, tokens, routing, g)
        ends = counts.cumsum(0)
        offs = ends.to(torch.int32).to(device)
        a = torch.randn(tokens, k, device=device, dtype=dtype)
        b = torch.randn(groups, n, k, device=device, dtype=dtype).mT  # K-major weights
        host_ends = [0] + ends.tolist()  # the loop is given the sizes on the host, for free

        def loop(a=a, b=b, host_ends=host_ends, n=n):
            out = a.new_empty(a.shape[0], n)
            for e in range(len(host_ends) - 1):
                s, t = host_ends[e], host_ends[e + 1]
                torch.mm(a[s:t], b[e], out=out[s:t])
            out[host_ends[-1]:].zero_()
            return out

        peers = {}
        try:
            torch._grouped_mm(a, b, offs=offs)
            peers["torch._grouped_mm"] = lambda a=a, b=b, offs=offs: torch._grouped_mm(a, b, offs=offs)
        except (RuntimeError, AttributeError, NotImplementedError):
            pass  # not supported for this dtype or device: the loop is the peer
        peers["loop of mm"] = loop
        if on_gpu(device) and dtype == torch.float32:  # one TF32 pass (ours, and torch's where it has one)
            for peer in list(peers):
                peers[f"{peer} (TF32)"] = with_tf32(peers[peer])
            peers["ours, one TF32 pass"] = with_tf32(lambda a=a, b=b, offs=offs: tg.grouped_mm(a, b, offs))
        ours = lambda a=a, b=b, offs=offs: tg.grouped_mm(a, b, offs)  # noqa: E731
        yield Case("grouped_mm", name, dtype, ours, peers,
                   2.0 * int(ends[-1]) * n * k, "mm", TOL[dtype])
    yield from wgrad_cases(device)


def wgrad_cases(device):
    g = torch.Generator().manual_seed(1)
    for name, groups, n, k, tokens, dtype, routing in (GPU_WGRAD_CASES if on_gpu(device) else CPU_WGRAD_CASES):
        counts = (group_sizes(groups, tokens, routing, g) + 15) // 16 * 16
        ends = counts.cumsum(0)
        rows = int(ends[-1])
        offs = ends.to(torch.int32).to(device)
        x = torch.randn(rows, k, device=device, dtype=dtype)
        dy = torch.randn(rows, n, device=device, dtype=dtype)
        host_ends = [0] + ends.tolist()

        def loop(x=x, dy=dy, host_ends=host_ends):
            out = x.new_empty(len(host_ends) - 1, x.shape[1], dy.shape[1])
            for e in range(len(host_ends) - 1):
                s, t = host_ends[e], host_ends[e + 1]
                torch.mm(x[s:t].T, dy[s:t], out=out[e])
            return out

        peers = {}
        try:
            torch._grouped_mm(x.T, dy, offs=offs)
            peers["torch._grouped_mm"] = lambda x=x, dy=dy, offs=offs: torch._grouped_mm(x.T, dy, offs=offs)
        except (RuntimeError, AttributeError, NotImplementedError):
            pass
        peers["loop of mm"] = loop
        yield Case("grouped_mm", name, dtype, lambda x=x, dy=dy, offs=offs: tg.grouped_mm(x.T, dy, offs), peers,
                   2.0 * rows * n * k, "mm", TOL[dtype])


# Issue 5's targets for grouped_mm on an H100, printed next to the figures; never asserted: over
# the MoE cases in 16 bits (forward and weight gradient) against torch._grouped_mm, and the
# efficiency of the big ones (a TFLOP or more a call) against dense torch.mm in their dtype.
TARGETS = {"geomean_vs_grouped_mm": 1.2, "min_vs_grouped_mm": 0.95, "big_fraction_of_dense": 0.8}
PEER = "torch._grouped_mm"
BIG_FLOP = 1e12


def summarize(results, out_dir):
    """grouped_mm's figures against issue 5's targets; saved as out_dir/grouped_mm_summary.json.
    GPU runs only (torch._grouped_mm is the peer there)."""
    rows = [r for r in results
            if r["op"] == "grouped_mm" and r["dtype"] in ("bfloat16", "float16") and r["headline_peer"] == PEER]
    if not rows:
        return None
    ratios = {f"{r['case']} {r['dtype']}": r["ratio"] for r in rows}
    big = {f"{r['case']} {r['dtype']}": r["fraction_of_limit"] for r in rows if work_of(r) >= BIG_FLOP}
    summary = {"cases": len(rows), "geomean_vs_grouped_mm": geomean(ratios.values()),
               "min_vs_grouped_mm": min(ratios.values()), "slowest": min(ratios, key=ratios.get),
               "big_cases": sorted(big), "big_fraction_of_dense": min(big.values(), default=float("nan"))}
    print(f"\ngrouped_mm ({len(rows)} 16-bit MoE cases): {summary['geomean_vs_grouped_mm']:.3f}x {PEER} "
          f"geomean (min {summary['min_vs_grouped_mm']:.2f}x, {summary['slowest']}); "
          f"{len(big)} cases of a TFLOP or more, the least at {100 * summary['big_fraction_of_dense']:.0f}% of dense torch.mm")
    report_targets("issue 5 targets for grouped_mm (H100)", summary, TARGETS, os.path.join(out_dir, "grouped_mm_summary.json"))
    return summary
