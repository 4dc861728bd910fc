"""syr2k against the two-mm composite a user would write, torch.addmm(a @ b.T, b, a.T)."""
import random

import torch

import torch_grouped as tg
from common import Case, on_gpu

GPU_CASES = [(dtype, n, k) for dtype in (torch.float32, torch.float64)
             for n, k in ((4096, 4096), (8192, 1024), (2048, 8192), (1024, 1024))]
GPU_CASES += [(torch.bfloat16, 4096, 4096), (torch.float16, 4096, 4096)]
CPU_CASES = [(torch.float32, 256, 64), (torch.float64, 256, 64)]
TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 1e-4, torch.float64: 1e-10}


def _composite(a, b):
    return [torch.addmm(x @ y.T, y, x.T) for x, y in zip(a, b)]


def cases(device):
    for dtype, n, k in (GPU_CASES if on_gpu(device) else CPU_CASES):
        a, b = [torch.randn(n, k, device=device, dtype=dtype)], [torch.randn(n, k, device=device, dtype=dtype)]
        yield Case("syr2k", f"n{n}_k{k}", dtype, lambda a=a, b=b: tg.syr2k(a, b),
                   {"two mm": lambda a=a, b=b: _composite(a, b)}, 2.0 * n * (n + 1) * k, "mm", TOL[dtype])
    rng = random.Random(0)
    count, top = (48, 1024) if on_gpu(device) else (8, 128)
    sizes = [(rng.randint(top // 8, top), rng.randint(top // 8, top)) for _ in range(count)]
    a = [torch.randn(n, k, device=device) for n, k in sizes]
    b = [torch.randn(n, k, device=device) for n, k in sizes]
    yield Case("syr2k", f"grouped_{count}_mixed", torch.float32, lambda: tg.syr2k(a, b),
               {"loop of two mm": lambda: _composite(a, b)},
               sum(2.0 * n * (n + 1) * k for n, k in sizes), "mm", TOL[torch.float32])
