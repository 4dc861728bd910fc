"""streamk_mm's 64 x 64 tile against its 128-row tiles on shapes the benchmark is not judged by: a
draw of the corpus's distribution with another seed (bench_streamk.corpus(seed=...)), kept near
the bounds of sched::small_tile_pays (128 x 128 tiles filling at most two thirds of the grid, K at
most 8192: both sides of each bound; session 51 set the bounds on the corpus's own shapes). Per
shape: the 128 x 128 tiles, K, the rule's pick, and on the GPU the µs of the 64 x 64 tile and of
the faster 128-row tile (TORCH_GROUPED_STREAMK_TILE forced, read on every call; alternating rounds,
common.time_in_turn), torch.mm's, and whether the rule took the faster side.
    PYTHONPATH=$PWD:$PWD/benchmarks python3 tools/probe_small_tile_rule.py [--seed 2027 ...] [--count 40]
        [--min-k K] [--dry]
--min-k: only shapes of K at least this (the band past the K bound); --dry: the shapes and the
rule's picks only (no GPU needed)."""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import torch_grouped as tg  # noqa: E402,F401  (registers torch.ops.grouped)
from bench_streamk import corpus, time_forced_tiles  # noqa: E402

GRID = 132  # the H100's and H200's SMs, for the dry listing


def near_the_bounds(m, n, k, grid):
    """Shapes whose 128 x 128 tiles fill at most two thirds of the grid and whose K is at most
    8192: the rule's region and a band past each of its bounds."""
    return 3 * math.ceil(m / 128) * math.ceil(n / 128) <= 2 * grid and k <= 8192


def main(seeds, count, min_k, dry):
    device = "cpu" if dry else "cuda"
    grid = GRID if dry else torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [s for seed in seeds for s in corpus(gpu=True, seed=seed) if near_the_bounds(*s, grid) and s[2] >= min_k][:count]
    print(f"{'shape':>18s} {'tiles':>5s} rule   {'64x64':>8s} {'128-row':>8s} {'mm':>8s} faster")
    right = 0
    for m, n, k in shapes:
        small = torch.ops.grouped._streamk_small_tile_pays(m, n, k, grid)
        line = f"{m}x{n}x{k}".rjust(18) + f" {math.ceil(m / 128) * math.ceil(n / 128):5d} {'64x64' if small else '128  ':6s}"
        if not dry:
            t, _ = time_forced_tiles(m, n, k, ("64x64", "128x128", "128x256"), device)
            wide = min(t["128x128"], t["128x256"])
            faster_small = t["64x64"] < wide
            right += faster_small == small
            line += (f" {t['64x64'] * 1e3:8.1f} {wide * 1e3:8.1f} {t['mm'] * 1e3:8.1f} "
                     f"{'64x64' if faster_small else '128'}{'' if faster_small == small else '  (rule wrong)'}")
        print(line, flush=True)
    if not dry:
        print(f"the rule took the faster side on {right} of {len(shapes)} shapes")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, nargs="+", default=[2027], help="the draws' seeds (the corpus is 2026's)")
    parser.add_argument("--count", type=int, default=40, help="at most this many shapes")
    parser.add_argument("--min-k", type=int, default=0, help="only shapes of K at least this")
    parser.add_argument("--dry", action="store_true", help="the rule's picks only, without timing")
    args = parser.parse_args()
    main(args.seed, args.count, args.min_k, args.dry)
