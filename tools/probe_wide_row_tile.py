"""streamk_mm's row-copy kernel in its two 128-row tiles, 128 x 128 and 128 x 256, on the shapes of
two draws of the corpus's distribution (bench_streamk.corpus, seeds 2026 and 2027) that `auto` reads
by row copies in 128-row tiles (contiguous operands: an even K or N off the 16-byte grid, where
sched::row_copies_pay takes them; not the 64 x 64 tile's small problems). Per shape: the 128 x 128
tiles, the tile `auto` runs (_streamk_tile), the µs of `auto` and of each tile forced
(TORCH_GROUPED_STREAMK_TILE, read on every call; alternating rounds, common.time_in_turn), torch.mm's,
and whether `auto`'s tile is the faster one (the stand-in model StreamKModels::rows_wide chooses).
    PYTHONPATH=$PWD:$PWD/benchmarks python3 tools/probe_wide_row_tile.py [--seeds 2026 2027] [--dry]
--dry: the shapes only (no GPU needed)."""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import torch_grouped as tg  # noqa: E402,F401  (registers torch.ops.grouped)
from bench_streamk import corpus, time_forced_tiles  # noqa: E402

GRID = 132  # the H100's and H200's SMs, for the dry listing


def piece(row_elements):
    """The cp.async piece of a contiguous bf16 operand's rows: 0 where TMA reads them, None where
    they are only 2-byte aligned (a pitched copy), else 8 or 4 bytes."""
    row_bytes = 2 * row_elements
    if row_bytes % 16 == 0:
        return 0
    return next((w for w in (8, 4) if row_bytes % w == 0), None)


def row_copied(m, n, k, grid, copies_cheap):
    a, b = piece(k), piece(n)
    if (a or 0) == 0 and (b or 0) == 0:
        return False
    return torch.ops.grouped._row_copies_pay(m, n, grid, a or 0, b or 0, pitched_beside=a is None or b is None, k=k,
                                             copies_cheap=copies_cheap)


def main(seeds, dry):
    grid = GRID if dry else torch.cuda.get_device_properties(0).multi_processor_count
    # (StreamKModels::copies_cheap, which streamk_mm reads off the DRAM's peak: 4.8 TB/s on an H200,
    # 3.35 on an H100; the dry listing takes the H200's)
    cheap = dry or "H200" in torch.cuda.get_device_name()
    shapes = [s for seed in seeds for s in corpus(gpu=True, seed=seed)
              if row_copied(*s, grid, cheap) and not torch.ops.grouped._streamk_small_tile_pays(*s, grid)]
    print(f"{'shape':>18s} {'tiles':>5s} {'auto':>7s} {'us':>7s} {'128x128':>8s} {'128x256':>8s} {'mm':>7s}")
    right = 0
    for m, n, k in shapes:
        line = f"{m}x{n}x{k}".rjust(18) + f" {math.ceil(m / 128) * math.ceil(n / 128):5d}"
        if not dry:
            t, tile = time_forced_tiles(m, n, k, ("128x128", "128x256"))
            faster = min(("128x128", "128x256"), key=t.get)
            right += faster == tile
            line += (f" {tile:>7s} {t['auto'] * 1e3:7.1f} {t['128x128'] * 1e3:8.1f} {t['128x256'] * 1e3:8.1f} "
                     f"{t['mm'] * 1e3:7.1f}{'' if faster == tile else '  (the other tile is faster)'}")
        print(line, flush=True)
    if not dry:
        print(f"`auto` ran the faster tile on {right} of {len(shapes)} shapes")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[2026, 2027], help="the draws (the corpus is 2026's)")
    parser.add_argument("--dry", action="store_true", help="the shapes only, without timing")
    args = parser.parse_args()
    main(args.seeds, args.dry)
