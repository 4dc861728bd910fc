"""grouped_mm (MoE form) against torch._grouped_mm and a loop of mm, cases of ANCHORS.md."""
import torch

import torch_grouped as tg
from common import Case, on_gpu

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
    ("skewed_32x_4096x2048_T8k_empty_experts", 32, 4096, 2048, 8192, torch.bfloat16, "skewed"),
    ("decode_8x_4096x14336_T64", 8, 14336, 4096, 64, torch.bfloat16, "balanced"),
]
CPU_CASES = [
    ("cpu_4x_128x128_T256", 4, 128, 128, 256, torch.float32, "balanced"),
    ("cpu_16x_64x64_T512_skewed", 16, 64, 64, 512, torch.float32, "skewed"),
]
TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 2e-3}


def group_sizes(groups, tokens, routing, generator):
    if routing == "balanced":  # random routing, every expert about tokens / groups rows
        counts = torch.bincount(torch.randint(groups, (tokens,), generator=generator), minlength=groups)
    else:  # a few hot experts, a quarter of the experts get nothing
        weights = torch.rand(groups, generator=generator) ** 4
        weights[torch.randperm(groups, generator=generator)[: groups // 4]] = 0
        counts = torch.bincount(torch.multinomial(weights, tokens, replacement=True, generator=generator),
                                minlength=groups)
    return counts


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
        yield Case("grouped_mm", name, dtype, lambda a=a, b=b, offs=offs: tg.grouped_mm(a, b, offs), peers,
                   2.0 * int(ends[-1]) * n * k, "mm", TOL[dtype])
