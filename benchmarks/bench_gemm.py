"""gemm (list API) against a Python loop of mm."""
import random

import torch

import torch_grouped as tg
from common import Case, on_gpu, on_our_kernel, with_tf32

SEED_EXAMPLE = [(1152, 768, 128), (1152, 768, 1024), (768, 1152, 128), (768, 1152, 1024)]


def _ragged(count, seed):
    rng = random.Random(seed)
    return [(rng.randint(64, 2048), rng.choice([1024, 2048, 4096]), rng.choice([1024, 2048, 4096]))
            for _ in range(count)]


GPU_CASES = [
    ("64x_128x1024x1024", [(128, 1024, 1024)] * 64, torch.bfloat16),
    ("128x_64x512x512", [(64, 512, 512)] * 128, torch.bfloat16),
    ("seed000_example_fp16", SEED_EXAMPLE, torch.float16),
    ("8x_4096x4096x4096", [(4096, 4096, 4096)] * 8, torch.bfloat16),
    ("32x_ragged_random", _ragged(32, 0), torch.bfloat16),
    # fp32 on the TF32 kernel (TORCH_GROUPED_FP32_KERNELS=1: 3xTF32 under torch's default precision)
    ("fp32_64x_128x1024x1024", [(128, 1024, 1024)] * 64, torch.float32),
    ("fp32_seed000_example", SEED_EXAMPLE, torch.float32),
    ("fp32_4x_4096x4096x4096", [(4096, 4096, 4096)] * 4, torch.float32),
    # fp64: the DMMA kernel for lists of small problems, cuBLAS for big ones (its rule, dmma_cuda.h)
    ("fp64_64x_128x1024x1024", [(128, 1024, 1024)] * 64, torch.float64),
    ("fp64_seed000_example", SEED_EXAMPLE, torch.float64),
    ("fp64_4x_4096x4096x4096", [(4096, 4096, 4096)] * 4, torch.float64),
]
CPU_CASES = [
    ("cpu_16x_32x64x64", [(32, 64, 64)] * 16, torch.float32),
    ("cpu_seed000_example_div8", [(m // 8, n // 8, k // 8) for m, n, k in SEED_EXAMPLE], torch.float32),
]
TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 2e-3, torch.float64: 1e-10}


def cases(device):
    for name, shapes, dtype in (GPU_CASES if on_gpu(device) else CPU_CASES):
        a = [torch.randn(m, k, device=device, dtype=dtype) for m, _, k in shapes]
        b = [torch.randn(k, n, device=device, dtype=dtype) for _, n, k in shapes]
        flops = sum(2.0 * m * n * k for m, n, k in shapes)
        # the peers' fp32 and fp64 calls of ours forced onto our kernels (on the CPU, and for half
        # inputs, the variables change nothing)
        on_kernel = lambda fn: on_our_kernel(dtype, fn)  # noqa: E731
        peers = {"loop of mm": lambda a=a, b=b: [torch.mm(x, y) for x, y in zip(a, b)]}
        if on_gpu(device):  # what the scheduler mode and the sorting by K do, same kernel
            peers["ours, device schedule"] = on_kernel(lambda a=a, b=b: tg.gemm(a, b, schedule="device"))
            peers["ours, unsorted"] = on_kernel(lambda a=a, b=b: tg.gemm(a, b, sort_by_k=False))
        if on_gpu(device) and dtype == torch.float64:  # the DMMA kernel whatever the rule chooses
            peers["ours, DMMA kernel forced"] = on_kernel(lambda a=a, b=b: tg.gemm(a, b))
        if on_gpu(device) and dtype == torch.float32:  # one TF32 pass, and cuBLAS's own TF32
            peers["ours, one TF32 pass"] = with_tf32(on_kernel(lambda a=a, b=b: tg.gemm(a, b)))
            peers["loop of mm (TF32)"] = with_tf32(lambda a=a, b=b: [torch.mm(x, y) for x, y in zip(a, b)])
        # ours as users call it (fp32, fp64: our kernels or cuBLAS by the measured rules)
        yield Case("gemm", name, dtype, lambda a=a, b=b: tg.gemm(a, b), peers, flops, "mm",
                   1e-5 if on_gpu(device) and dtype == torch.float32 else TOL[dtype])
