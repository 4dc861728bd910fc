"""Times grouped_mm's MoE cases and gemm's list cases under every forced tile and panel width
(TORCH_GROUPED_TILE, 128x256c2 the clustered kernel; TORCH_GROUPED_PANEL), syr2k's one-problem
cases under every decomposition in each tile (TORCH_GROUPED_SYR2K_DECOMPOSITION, _TILE, _CLUSTER), beside the choice the
heuristics make: how much the host heuristics leave on the table; and streamk_mm with and without
its TMA-store epilogue (TORCH_GROUPED_TMA_STORE) and 128x128 tiles (TORCH_GROUPED_STREAMK_TILE), and
grouped_mm's K-grouped form (the MoE weight gradients) under its clustered kernel and panel widths.
    PYTHONPATH=$PWD:benchmarks python3 tools/sweep_tiles.py [section ...]
Sections: grouped_mm, wgrad, gemm, syr2k, streamk_mm (default: all)."""
import os
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import bench_grouped_mm  # noqa: E402
import torch_grouped as tg  # noqa: E402


def timed(fn, env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        fn()
        return do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def sweep(name, fn, variants, rounds=3):
    """The best of `rounds` interleaved measurements of each variant: a heavy case heats the GPU
    and slows down over a sweep, which measuring the variants one after another would blame on
    the later ones."""
    variants = [("chosen", {})] + variants
    best = {label: float("inf") for label, _ in variants}
    for r in range(rounds):  # every other round in reversed order, so no variant always runs first
        for label, env in (variants if r % 2 == 0 else variants[::-1]):
            best[label] = min(best[label], timed(fn, env))
    print(f"{name:40s} " + "  ".join(f"{label} {t:8.1f}" for label, t in best.items()) + "  (us)", flush=True)


def wgrad():
    """The K-grouped form under the plain 128x256 kernel (the model takes the clustered one where
    it fits: session 24) and panel widths, beside torch._grouped_mm on the same inputs (its
    128x128 tiles were 20-40% slower than 128x256: session 10)."""
    variants = [("128x256", {"TORCH_GROUPED_TILE": "128x256"})]
    variants += [("panel8", {"TORCH_GROUPED_PANEL": "8"}), ("panel0", {"TORCH_GROUPED_PANEL": "0"})]
    for case in bench_grouped_mm.wgrad_cases("cuda"):
        sweep(f"wgrad {case.name}", case.ours, variants)
        if "torch._grouped_mm" in case.peers:
            sweep("  torch._grouped_mm", case.peers["torch._grouped_mm"], [])


def main(sections):
    if "wgrad" in sections:
        wgrad()
    tiles = [(t, {"TORCH_GROUPED_TILE": t}) for t in ("128x256", "128x256c2", "128x128", "64x128")]
    tiles += [(f"{t}+tma", {"TORCH_GROUPED_TILE": t, "TORCH_GROUPED_TMA_STORE": "1"}) for t in ("128x256", "128x256c2")]
    panels = [(f"panel{p}", {"TORCH_GROUPED_PANEL": str(p)}) for p in (0, 2, 4, 8, 16)]
    g = torch.Generator().manual_seed(0)
    for name, groups, n, k, tokens, dtype, routing in bench_grouped_mm.GPU_CASES if "grouped_mm" in sections else []:
        if dtype == torch.float32:
            continue
        ends = bench_grouped_mm.group_sizes(groups, tokens, routing, g).cumsum(0)
        offs = ends.to(torch.int32).cuda()
        a = torch.randn(tokens, k, device="cuda", dtype=dtype)
        b = torch.randn(groups, n, k, device="cuda", dtype=dtype).mT
        sweep(f"grouped_mm {name}", lambda: tg.grouped_mm(a, b, offs), tiles + panels)
    list_cases = [("gemm 64x 128x1024x1024", [(128, 1024, 1024)] * 64),
                  ("gemm 8x 4096^3", [(4096, 4096, 4096)] * 8),
                  ("gemm seed000", [(1152, 768, 128), (1152, 768, 1024), (768, 1152, 128), (768, 1152, 1024)])]
    for name, shapes in list_cases if "gemm" in sections else []:
        a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, n, k in shapes]
        b = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for m, n, k in shapes]
        sweep(name, lambda: tg.gemm(a, b), tiles + panels)
    # every decomposition in each tile (the wide tile's Stream-K plans are not weighed by `auto`:
    # rank2k_tile_choice.h), and the square tile with clusters forced on (`auto`'s plan: the
    # clusters serve its tile walks, not Stream-K units)
    decomps = [(f"{d}{'' if t == '128x128' else ' ' + t}", {"TORCH_GROUPED_SYR2K_DECOMPOSITION": d, "TORCH_GROUPED_SYR2K_TILE": t})
               for t in ("128x128", "128x256")
               for d in ("data_parallel", "stream_k", "split_k", "dp_one_tile_sk", "two_tile_sk_dp")]
    decomps += [("clusters", {"TORCH_GROUPED_SYR2K_CLUSTER": "1"})]
    for n, k in [(1024, 1024), (2048, 8192), (1024, 4096), (4096, 4096), (8192, 1024)] if "syr2k" in sections else []:
        a, b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16), torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        sweep(f"syr2k n{n} k{k}", lambda: tg.syr2k([a], [b]), decomps)
        sweep(f"  two mm n{n} k{k}", lambda: torch.addmm(a @ b.T, b, a.T), [])
    # streamk_mm: `auto`'s tile against each tile forced (small problems: few wide tiles leave most
    # SMs idle) and the threads' stores against the default TMA-store epilogue, beside cuBLAS;
    # small odd corpus shapes, their aligned twins, mid-size anchors
    variants = [("128x128", {"TORCH_GROUPED_STREAMK_TILE": "128x128"}), ("128x256", {"TORCH_GROUPED_STREAMK_TILE": "128x256"}),
                ("thread stores", {"TORCH_GROUPED_TMA_STORE": "0"})]
    for m, n, k in ([(708, 830, 140), (704, 832, 144), (290, 136, 248), (178, 455, 1095), (939, 167, 675),
                     (1069, 500, 851), (1664, 1664, 4096), (2304, 2304, 2048), (2176, 2176, 4096), (512, 1024, 32768),
                     (16384, 16384, 256), (4096, 4096, 4096)]
                    if "streamk_mm" in sections else []):
        a, b = torch.randn(m, k, device="cuda", dtype=torch.bfloat16), torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        sweep(f"streamk_mm {m}x{n}x{k}", lambda: tg.streamk_mm(a, b), variants)
        sweep(f"  torch.mm {m}x{n}x{k}", lambda: torch.mm(a, b), [])


SECTIONS = ("grouped_mm", "wgrad", "gemm", "syr2k", "streamk_mm")

if __name__ == "__main__":
    chosen = sys.argv[1:] or list(SECTIONS)
    unknown = [x for x in chosen if x not in SECTIONS]
    if unknown:
        sys.exit(f"unknown sections {unknown}; choose from {SECTIONS}")
    main(chosen)
