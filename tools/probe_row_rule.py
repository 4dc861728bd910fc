"""Row copies against pitched copies on shapes the Stream-K benchmark is not judged by: a draw of
the corpus's distribution with another seed (bench_streamk.corpus(seed=...)), kept where row copies
can read an operand (rows 4- or 8-byte aligned, not 16) — the data to fit a GPU's
sched::row_copies_pay on (session 49: the H100's rule takes the slower path on three of the H200's
37 such corpus shapes). Per shape: the rule's inputs (pieces of A and B, 0 for one TMA reads, 2 for
rows only 2-byte aligned, which a pitched copy always takes; the pitched copies' share, m·n/2750
units), its pick, and on the GPU the µs of `auto` with TORCH_GROUPED_ROW_COPIES=0 and =1 (read on
every call; alternating rounds, common.time_in_turn) and which was faster.
    PYTHONPATH=$PWD:$PWD/benchmarks python3 tools/probe_row_rule.py [--seed 2027] [--count 40] [--dry] [--copies-cheap]
--dry: the shapes and the rule's picks only (no GPU needed); --copies-cheap: the picks of the rule
on a GPU whose DRAM peaks at 4 TB/s or more (an H200), fitted on this draw in session 50."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import torch_grouped as tg  # noqa: E402,F401  (registers torch.ops.grouped)
from bench_streamk import corpus  # noqa: E402
from common import time_in_turn, with_env  # noqa: E402

GRID = 132  # the H100's and H200's SMs, for the dry listing


def pieces(row_bytes):
    """The cp.async piece a row copy reads rows of `row_bytes` with: 0 where TMA reads them (16-byte
    multiples), 2 where only a pitched copy can (2-byte aligned rows)."""
    return 0 if row_bytes % 16 == 0 else next(w for w in (8, 4, 2) if row_bytes % w == 0)


def rule_inputs(m, n, k):
    """(a_width, b_width, pitched_beside) as streamk_mm hands them to the rule (bf16, A row-major,
    B N-major, fresh tensors), or None where row copies cannot read either operand."""
    a, b = pieces(2 * k), pieces(2 * n)
    readable = [w for w in (a, b) if w in (4, 8)]
    if not readable:
        return None
    return (a if a in (4, 8) else 0), (b if b in (4, 8) else 0), 2 in (a, b)


def main(seed, count, dry, copies_cheap=False):
    device = "cpu" if dry else "cuda"
    grid = GRID if dry else torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [(s, r) for s in corpus(gpu=True, seed=seed) if (r := rule_inputs(*s)) is not None][:count]
    print(f"{'shape':>18s} {'A':>2s} {'B':>2s} beside {'share':>6s} rule    {'pitched':>8s} {'rows':>8s} faster")
    for (m, n, k), (a_w, b_w, beside) in shapes:
        share = (2750 / n if a_w else 0.0) + (2750 / m if b_w else 0.0)
        rows = torch.ops.grouped._row_copies_pay(m, n, grid, a_w, b_w, pitched_beside=beside, k=k, copies_cheap=copies_cheap)
        line = f"{m}x{n}x{k}".rjust(18) + f" {a_w:2d} {b_w:2d} {str(beside):6s} {share:6.2f} {'rows' if rows else 'pitched':7s}"
        if not dry:
            a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
            b = torch.randn(k, n, device=device, dtype=torch.bfloat16)
            call = lambda: tg.streamk_mm(a, b)  # noqa: E731
            t = time_in_turn({"0": with_env({"TORCH_GROUPED_ROW_COPIES": "0"}, call),
                              "1": with_env({"TORCH_GROUPED_ROW_COPIES": "1"}, call)}, device)
            faster = "rows" if t["1"] < t["0"] else "pitched"
            line += f" {t['0'] * 1e3:8.1f} {t['1'] * 1e3:8.1f} {faster}{'' if (faster == 'rows') == rows else '  (rule wrong)'}"
        print(line, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2027, help="the draw's seed (the corpus is 2026's)")
    parser.add_argument("--count", type=int, default=40, help="at most this many shapes")
    parser.add_argument("--dry", action="store_true", help="the rule's picks only, without timing")
    parser.add_argument("--copies-cheap", action="store_true",
                        help="the rule's picks on a GPU whose DRAM peaks at 4 TB/s or more (an H200: row_copies_pay)")
    args = parser.parse_args()
    main(args.seed, args.count, args.dry, args.copies_cheap)
