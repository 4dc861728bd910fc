"""What the padding rows of MoE experts cost: grouped_mm's forward cases timed with the benchmark's
routing, and with the same rows dealt so that no expert has a ragged last tile row (every count a
multiple of 128), ours and torch._grouped_mm, in turn (benchmarks/common.time_in_turn). Whole
tiles take fewer tiles, so the difference is what the padding tiles' operand traffic costs: a
kernel that only skipped the padding rows' MMAs gained nothing (issue 5; session 38, NOTES).
    PYTHONPATH=$PWD:benchmarks python3 tools/probe_padding.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from bench_grouped_mm import forward_problems  # noqa: E402
from common import time_in_turn  # noqa: E402

import torch_grouped as tg  # noqa: E402

WANTED = ("dsv3_32x_7168x4096_T8k", "dsv3_down_32x_2048x7168_T8k", "32x_256x4096x2048_bf16",
          "skewed_32x_4096x2048_T8k_empty_experts")


def whole_tiles(counts, tile=128):
    """The counts moved to multiples of `tile` with the same total (a multiple of it): each
    rounded to the nearest, then the surplus or deficit taken from or given to the largest."""
    out = ((counts + tile // 2) // tile) * tile
    diff = int(counts.sum() - out.sum())
    out[int(out.argmax())] += diff
    assert int(out.sum()) == int(counts.sum()) and bool((out % tile == 0).all()) and bool((out >= 0).all())
    return out


def padded_rows(counts, tile=128):
    return int(((counts + tile - 1) // tile * tile).sum())


def main():
    print(f"{'case':42s} {'routing':12s} {'rows':>6s} {'MMA rows':>8s} {'ours µs':>9s} {'peer µs':>9s}")
    for name, a, b, counts in forward_problems(WANTED):
        for label, c in (("benchmark", counts), ("whole tiles", whole_tiles(counts))):
            offs = c.cumsum(0).to(torch.int32).cuda()
            times = time_in_turn({"ours": lambda: tg.grouped_mm(a, b, offs),
                                  "peer": lambda: torch._grouped_mm(a, b, offs=offs)}, "cuda", rep_ms=300)
            print(f"{name:42s} {label:12s} {int(c.sum()):6d} {padded_rows(c):8d} "
                  f"{times['ours'] * 1e3:9.1f} {times['peer'] * 1e3:9.1f}", flush=True)


if __name__ == "__main__":
    main()
