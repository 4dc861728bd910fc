"""gemm (list API) against a Python loop of mm; then training steps of a list (forward and backward
through gemm, against the loop under torch autograd) and a list whose A's are stored M-major."""
import os
import random

import torch

import torch_grouped as tg
from common import Case, on_gpu, on_our_kernel, report_targets, with_env, with_tf32

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
# Lists trained (forward and backward), and a forward whose A's are stored M-major (x_iᵀ, as the
# backward's dB_i = A_iᵀ·dY_i passes them), bf16 on the GPU; on a CPU one small training step.
TRAIN_CASES = [("8x_2048x1024x2048", [(2048, 1024, 2048)] * 8), ("64x_128x1024x1024", [(128, 1024, 1024)] * 64)]
CPU_TRAIN_CASES = [("cpu_4x_32x48x64", [(32, 48, 64)] * 4)]
M_MAJOR_CASES = [("8x_2048x1024x2048", [(2048, 1024, 2048)] * 8), ("64x_1024x1024x128", [(1024, 1024, 128)] * 64)]
STAGED = {"TORCH_GROUPED_GEMM_A_M_MAJOR": "0"}  # every A staged K-major first (before session 47)


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
            peers["ours, device schedule, unsorted"] = on_kernel(
                lambda a=a, b=b: tg.gemm(a, b, schedule="device", sort_by_k=False))
        if on_gpu(device) and dtype == torch.float64:  # the DMMA kernel whatever the rule chooses
            peers["ours, DMMA kernel forced"] = on_kernel(lambda a=a, b=b: tg.gemm(a, b))
        if on_gpu(device) and dtype == torch.float32:  # one TF32 pass, and cuBLAS's own TF32
            peers["ours, one TF32 pass"] = with_tf32(on_kernel(lambda a=a, b=b: tg.gemm(a, b)))
            peers["loop of mm (TF32)"] = with_tf32(lambda a=a, b=b: [torch.mm(x, y) for x, y in zip(a, b)])
        # ours as users call it (fp32, fp64: our kernels or cuBLAS by the measured rules)
        yield Case("gemm", name, dtype, lambda a=a, b=b: tg.gemm(a, b), peers, flops, "mm",
                   1e-5 if on_gpu(device) and dtype == torch.float32 else TOL[dtype])
    yield from extra_cases(device)


def _loop_of_mm(a, b):
    return [torch.mm(x, y) for x, y in zip(a, b)]


def _train_case(name, shapes, dtype, device):
    """dA_i = dY_i·B_iᵀ and dB_i = A_iᵀ·dY_i of y_i = A_i·B_i after the forward: gemm's own backward
    (two gemm calls, the A_iᵀ read M-major where they lie) against the loop of mm under torch
    autograd, the autograd layer's host time included; on the GPU also with the A_iᵀ staged."""
    a = [torch.randn(m, k, device=device, dtype=dtype, requires_grad=True) for m, _, k in shapes]
    b = [torch.randn(k, n, device=device, dtype=dtype, requires_grad=True) for _, n, k in shapes]
    dy = [torch.randn(m, n, device=device, dtype=dtype) for m, n, _ in shapes]
    step = lambda mm: lambda: torch.autograd.grad(mm(a, b), a + b, dy)  # noqa: E731
    peers = {"loop of mm": step(_loop_of_mm)}
    if on_gpu(device):
        peers["ours, A staged K-major"] = with_env(STAGED, step(tg.gemm))
    return Case("gemm", f"train {name}", dtype, step(tg.gemm), peers, 3 * sum(2.0 * m * n * k for m, n, k in shapes),
                "mm", TOL[dtype])


def _m_major_case(name, shapes, dtype, device):
    """Every A_i stored M-major (a transposed view), B_i row-major: read where they lie (session 47)
    rather than transposed first, which TORCH_GROUPED_GEMM_A_M_MAJOR=0 brings back as a peer."""
    a = [torch.randn(k, m, device=device, dtype=dtype).t() for m, _, k in shapes]
    b = [torch.randn(k, n, device=device, dtype=dtype) for _, n, k in shapes]
    return Case("gemm", f"A M-major {name}", dtype, lambda: tg.gemm(a, b),
                {"loop of mm": lambda: _loop_of_mm(a, b), "ours, A staged K-major": with_env(STAGED, lambda: tg.gemm(a, b))},
                sum(2.0 * m * n * k for m, n, k in shapes), "mm", TOL[dtype])


def extra_cases(device):
    gpu = on_gpu(device)
    dtype = torch.bfloat16 if gpu else torch.float32
    for name, shapes in (TRAIN_CASES if gpu else CPU_TRAIN_CASES):
        yield _train_case(name, shapes, dtype, device)
    for name, shapes in (M_MAJOR_CASES if gpu else []):
        yield _m_major_case(name, shapes, dtype, device)


# Issue 5's targets for the list API on an H100, printed next to the figures; never asserted:
# against the loop of mm, 10x for 64 and more small groups, never slower for big ones, in 16 bits.
SMALL_GROUP_CASES = ("64x_128x1024x1024", "128x_64x512x512")
BIG_GROUP_CASES = ("8x_4096x4096x4096",)
TARGETS = {"min_small_groups_vs_loop": 10.0, "min_big_groups_vs_loop": 1.0}


def summarize(results, out_dir):
    """gemm's figures against issue 5's targets, with what the scheduler mode and the sorting by K
    did (ours over each variant, same kernel); saved as out_dir/gemm_summary.json. GPU runs only."""
    rows = {r["case"]: r for r in results if r["op"] == "gemm" and r["case"] in SMALL_GROUP_CASES + BIG_GROUP_CASES}
    if not rows:
        return None
    ratio = lambda names: min((rows[n]["ratio"] for n in names if n in rows), default=float("nan"))  # noqa: E731
    summary = {"min_small_groups_vs_loop": ratio(SMALL_GROUP_CASES), "min_big_groups_vs_loop": ratio(BIG_GROUP_CASES),
               "vs_loop": {r["case"]: r["ratio"] for r in results if r["op"] == "gemm"},
               "variants": {f"{r['case']} {r['dtype']}": {name: round(x, 3) for name, x in r["ratios"].items() if name.startswith("ours")}
                            for r in results if r["op"] == "gemm"}}
    print("\ngemm against the loop of mm: " + ", ".join(f"{n} {rows[n]['ratio']:.2f}x" for n in SMALL_GROUP_CASES + BIG_GROUP_CASES if n in rows))
    report_targets("issue 5 targets for gemm (H100)", summary, TARGETS, os.path.join(out_dir, "gemm_summary.json"))
    return summary
