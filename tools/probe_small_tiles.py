"""Would smaller tiles help streamk_mm's tiny shapes? Each shape as a one-batch grouped_mm (the
grouped kernel's data-parallel walk, whose tiles TORCH_GROUPED_TILE forces: 64x128, 128x128,
128x256) beside streamk_mm (`auto`) and torch.mm, do_bench with L2 flushed, in turn
(benchmarks/common.time_in_turn). cuBLAS runs 64 x 8 to 64 x 32 tiles on such shapes (session 38).
    PYTHONPATH=$PWD:benchmarks python3 tools/probe_small_tiles.py [MxNxK ...]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from common import time_in_turn  # noqa: E402

import torch_grouped as tg  # noqa: E402

SHAPES = ["290x136x248", "384x384x128", "435x392x157", "708x830x140", "178x455x1095", "939x167x675", "224x323x5013"]
TILES = ["64x128", "128x128", "128x256"]


def with_tile(tile, fn):
    def run():
        os.environ["TORCH_GROUPED_TILE"] = tile
        try:
            return fn()
        finally:
            os.environ.pop("TORCH_GROUPED_TILE", None)
    return run


def main(shapes):
    print(f"{'shape':16s} {'torch.mm':>9s} {'streamk_mm':>11s} " + " ".join(f"{'dp ' + t:>11s}" for t in TILES))
    for shape in shapes:
        m, n, k = map(int, shape.split("x"))
        a = torch.randn(1, m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(1, k, n, device="cuda", dtype=torch.bfloat16)
        fns = {"mm": lambda: torch.mm(a[0], b[0]), "streamk": lambda: tg.streamk_mm(a[0], b[0])}
        fns.update({t: with_tile(t, lambda: tg.grouped_mm(a, b)) for t in TILES})
        ref = torch.mm(a[0].float(), b[0].float())
        for t in TILES:
            err = (fns[t]()[0].float() - ref).norm() / ref.norm()
            assert err < 2e-2, (shape, t, float(err))
        us = {name: ms * 1e3 for name, ms in time_in_turn(fns, "cuda", rep_ms=150).items()}
        print(f"{shape:16s} {us['mm']:9.1f} {us['streamk']:11.1f} " + " ".join(f"{us[t]:11.1f}" for t in TILES), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or SHAPES)
