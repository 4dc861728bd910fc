"""syr2k against the two-mm composite a user would write, torch.addmm(a @ b.T, b, a.T); then training
steps (forward and backward through syr2k, against the composite under torch autograd)."""
import os
import random

import torch

import cublas_syr2k
import torch_grouped as tg
from common import Case, on_gpu, on_our_kernel, rel_error, report_targets, with_env, with_tf32

GPU_CASES = [(dtype, n, k) for dtype in (torch.float32, torch.float64)
             for n, k in ((4096, 4096), (8192, 1024), (2048, 8192), (1024, 1024))]
GPU_CASES += [(torch.bfloat16, 4096, 4096), (torch.float16, 4096, 4096), (torch.bfloat16, 8192, 1024),
              (torch.bfloat16, 2048, 8192), (torch.bfloat16, 1024, 1024)]
CPU_CASES = [(torch.float32, 256, 64), (torch.float64, 256, 64)]
TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 1e-4, torch.float64: 1e-10}
TRAIN_CASES = [(torch.bfloat16, 2048, 512), (torch.bfloat16, 4096, 1024)]
CPU_TRAIN_CASES = [(torch.float32, 128, 32)]


def _composite(a, b):
    return [torch.addmm(x @ y.T, y, x.T) for x, y in zip(a, b)]


def _cublas(a, b):
    """cuBLAS ?syr2k per group, checked once against the composite on the triangle it writes."""
    run = lambda: [cublas_syr2k.syr2k_lower(x, y, torch.empty(x.shape[0], x.shape[0], device=x.device, dtype=x.dtype))
                   for x, y in zip(a, b)]
    err = rel_error([c.tril() for c in run()], [c.tril() for c in _composite(a, b)])
    if err > TOL[a[0].dtype]:
        raise RuntimeError(f"the cuBLAS syr2k peer disagrees with the composite: relative error {err:.2e}")
    return run


def _peers(a, b, dtype, device, composite_name):
    peers = {composite_name: lambda: _composite(a, b)}
    if on_gpu(device) and dtype in (torch.float32, torch.float64) and cublas_syr2k.available():
        peers["cuBLAS syr2k" if len(a) == 1 else "loop of cuBLAS syr2k"] = _cublas(a, b)
    if on_gpu(device) and dtype == torch.float32:
        # fp32 runs 3xTF32 by default (fp32-accurate: three TF32 products per product); where torch
        # allows TF32 matmuls, one TF32 pass (TF32's accuracy, as cuBLAS then gives too)
        peers["ours, one TF32 pass (allow_tf32)"] = with_tf32(lambda: tg.syr2k(a, b))
    gemm = {"TORCH_GROUPED_SYR2K_SCHEDULER": "gemm"}
    if on_gpu(device) and dtype == torch.float64:
        # the DMMA Rank2K kernel whatever the rule chooses (single problems: cuBLAS dsyr2k), and,
        # where the rule runs that kernel (groups), the same kernel over every tile with the GEMM
        # walk. (On single problems it took 2.2-2.8x the forced triangle's time at n >= 2048, 7.4 ms
        # a call at n4096, and beside it ours, cuBLAS's dsyr2k there, measured 0.82x the same dsyr2k
        # called through ctypes; 0.98x again without it; H100, session 35.)
        peers["ours, DMMA kernel forced"] = on_our_kernel(dtype, lambda: tg.syr2k(a, b))
        if len(a) > 1:
            peers["DMMA kernel, GEMM scheduler"] = on_our_kernel(dtype, with_env(gemm, lambda: tg.syr2k(a, b)))
    if on_gpu(device) and dtype in (torch.bfloat16, torch.float16, torch.float32):
        # The same kernel walking every tile with the grouped GEMM scheduler (no triangle, no
        # mirror). That walk runs 128 x 128 tiles unless 128 x 256 is forced, while one problem's
        # triangle may run either (its model picks): so one problem is measured in both tiles
        # (fp32 has 128 x 128 tiles only).
        tiles = ("128x128",) if dtype == torch.float32 else ("128x128", "128x256")
        if len(a) > 1:
            peers["same kernel, GEMM scheduler"] = with_env(gemm, lambda: tg.syr2k(a, b))
        else:
            for tile in tiles:
                peers[f"GEMM scheduler, {tile} tiles"] = with_env({**gemm, "TORCH_GROUPED_SYR2K_TILE": tile},
                                                                  lambda: tg.syr2k(a, b))
            # the triangle in each tile, and the plain triangle walk without Stream-K work units
            for tile in tiles:
                peers[f"triangle, {tile} tiles"] = with_env({"TORCH_GROUPED_SYR2K_TILE": tile}, lambda: tg.syr2k(a, b))
            peers["triangle walk, data_parallel"] = with_env({"TORCH_GROUPED_SYR2K_DECOMPOSITION": "data_parallel"},
                                                             lambda: tg.syr2k(a, b))
    return peers


def _train_case(dtype, n, k, device):
    """dA and dB after the forward, against the composite's under torch autograd: syr2k's C++
    backward (H = G + Gᵀ by grouped::_symmetric_sum, then dA and dB in one gemm call) against two
    mm forward and four backward."""
    a = torch.randn(n, k, device=device, dtype=dtype, requires_grad=True)
    b = torch.randn(n, k, device=device, dtype=dtype, requires_grad=True)
    dy = torch.randn(n, n, device=device, dtype=dtype)
    dy = dy + dy.T  # (the gradient of a symmetric output's loss is symmetric in use; any G will do)
    step = lambda op: lambda: torch.autograd.grad(op([a], [b])[0], (a, b), dy)  # noqa: E731
    return Case("syr2k", f"train n{n}_k{k}", dtype, step(lambda x, y: tg.syr2k(x, y)), {"two mm": step(_composite)},
                3 * 2.0 * n * (n + 1) * k, "mm", TOL[dtype])


def cases(device):
    for dtype, n, k in (GPU_CASES if on_gpu(device) else CPU_CASES):
        a, b = [torch.randn(n, k, device=device, dtype=dtype)], [torch.randn(n, k, device=device, dtype=dtype)]
        yield Case("syr2k", f"n{n}_k{k}", dtype, lambda a=a, b=b: tg.syr2k(a, b),
                   _peers(a, b, dtype, device, "two mm"), 2.0 * n * (n + 1) * k, "mm", TOL[dtype])
    rng = random.Random(0)
    count, top = (48, 1024) if on_gpu(device) else (8, 128)
    sizes = [(rng.randint(top // 8, top), rng.randint(top // 8, top)) for _ in range(count)]
    sizes = [(n, k // 8 * 8 or 8) for n, k in sizes]  # K a multiple of 8: the kernel's TMA rule
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.float64) if on_gpu(device) else (torch.float32,):
        a = [torch.randn(n, k, device=device, dtype=dtype) for n, k in sizes]
        b = [torch.randn(n, k, device=device, dtype=dtype) for n, k in sizes]
        # (fp64: ours on the DMMA Rank2K kernel by its rule, against the loop of cuBLAS dsyr2k)
        yield Case("syr2k", f"grouped_{count}_mixed", dtype, lambda a=a, b=b: tg.syr2k(a, b),
                   _peers(a, b, dtype, device, "loop of two mm"),
                   sum(2.0 * n * (n + 1) * k for n, k in sizes), "mm", TOL[dtype])
    for dtype, n, k in (TRAIN_CASES if on_gpu(device) else CPU_TRAIN_CASES):
        yield _train_case(dtype, n, k, device)


# Issue 6's targets on an H100, printed next to the figures; never asserted. "Large": one problem
# of order 2048 or more (n1024 is reported, not judged); "grouped": the mixed groups against the
# loop of cuBLAS ?syr2k (bf16, which cuBLAS lacks: the loop of two mm); the triangle walk against
# the GEMM scheduler on the same kernel and tile, the least over every case that measures both.
TARGETS = {"min_large_fp32_fp64_vs_cublas_syr2k": 1.0, "min_large_bf16_vs_two_mm": 1.8,
           "min_grouped_vs_loop_of_cublas": 5.0, "min_triangle_vs_gemm_scheduler": 1.6}


def _order(case_name):
    return int(case_name[1:].split("_")[0]) if case_name.startswith("n") else 0


def _triangle_gains(r):
    """Per tile (or the grouped call's one kernel): the GEMM scheduler's time over the triangle's."""
    ms = r["peers_ms"]
    if "same kernel, GEMM scheduler" in ms:
        return {"": r["ratios"]["same kernel, GEMM scheduler"]}
    if "DMMA kernel, GEMM scheduler" in ms:  # fp64: the forced DMMA triangle against its GEMM walk
        return {"DMMA": ms["DMMA kernel, GEMM scheduler"] / ms["ours, DMMA kernel forced"]}
    return {tile: ms[f"GEMM scheduler, {tile} tiles"] / ms[f"triangle, {tile} tiles"]
            for tile in ("128x128", "128x256") if f"triangle, {tile} tiles" in ms}


def summarize(results, out_dir):
    """syr2k's figures against issue 6's targets; saved as out_dir/syr2k_summary.json. GPU runs
    only (cuBLAS ?syr2k and the GEMM-scheduler switch are peers there)."""
    rows = [r for r in results if r["op"] == "syr2k"]
    if not any("cuBLAS syr2k" in r["peers_ms"] or "loop of cuBLAS syr2k" in r["peers_ms"] for r in rows):
        return None
    key = lambda r: f"{r['case']} {r['dtype']}"  # noqa: E731
    large = [r for r in rows if _order(r["case"]) >= 2048]
    vs_cublas = {key(r): r["ratios"]["cuBLAS syr2k"] for r in large if "cuBLAS syr2k" in r["ratios"]}
    bf16 = {key(r): r["ratio"] for r in large if r["dtype"] == "bfloat16"}
    grouped = {key(r): r["ratios"].get("loop of cuBLAS syr2k", r["ratio"]) for r in rows if r["case"].startswith("grouped")}
    triangle = {f"{key(r)} {tile}".strip(): gain for r in rows for tile, gain in _triangle_gains(r).items()}
    least = lambda d: min(d.values(), default=float("nan"))  # noqa: E731
    summary = {"min_large_fp32_fp64_vs_cublas_syr2k": least(vs_cublas), "min_large_bf16_vs_two_mm": least(bf16),
               "min_grouped_vs_loop_of_cublas": least(grouped), "min_triangle_vs_gemm_scheduler": least(triangle),
               "large_vs_cublas_syr2k": vs_cublas, "large_bf16_vs_two_mm": bf16, "grouped_vs_loop": grouped,
               "triangle_vs_gemm_scheduler": triangle}
    for title, figures in (("large vs cuBLAS syr2k", vs_cublas), ("large bf16 vs two mm", bf16),
                           ("grouped vs the loop", grouped), ("triangle vs GEMM scheduler", triangle)):
        print(f"syr2k {title}: " + ", ".join(f"{name} {x:.2f}x" for name, x in figures.items()))
    report_targets("issue 6 targets (H100)", summary, TARGETS, os.path.join(out_dir, "syr2k_summary.json"))
    return summary
