"""streamk_mm's `auto` against split-K in the count that fills the grid (sched::default_splits: the
grid over the output tiles, 2..16; what split_k runs when `splits` is not given), on the corpus
shapes whose pick that count changed when `auto` began to weigh it (session 36; session 35 ran
this before, when only syr2k's plans weighed it: benchmarks/NOTES.md). Times both on the tile and
operand path `auto` takes, three interleaved rounds (triton's do_bench, L2 flushed), and prints µs
and auto / fill.
    PYTHONPATH=$PWD python3 tools/probe_fill_split.py [MxNxK ...]"""
import os
import statistics
import sys

import torch
from triton.testing import do_bench

import torch_grouped as tg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from streamk_sweep import fill_splits, walk  # noqa: E402

# Shapes of benchmarks/bench_streamk.py's corpus (seed 2026) whose pick changes (session 35).
SHAPES = [(1647, 203, 20895), (1413, 142, 10793), (5117, 196, 6212), (378, 964, 3107), (128, 1432, 42927),
          (471, 1447, 15562), (182, 2064, 43705), (673, 289, 40150), (154, 1234, 24001), (648, 751, 1695),
          (383, 1014, 16638)]


def main(shapes):
    print(f"{'shape':22s} {'tile':8s} {'fill':>4s} {'auto µs':>9s} {'fill µs':>9s} {'auto/fill':>9s}")
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        tile_m, tile_n, _ = torch.ops.grouped._streamk_tile(a, b, 0)
        plan_m, walkers = walk(a, b)  # (in clusters: pair tiles over the resident clusters)
        s = fill_splits(walkers, -(-m // plan_m) * -(-n // tile_n))  # (printed; split_k's default count)
        runs = {"auto": lambda: tg.streamk_mm(a, b), "fill": lambda: tg.streamk_mm(a, b, decomposition="split_k")}
        ref = a.float() @ b.float()
        for name, fn in runs.items():
            err = (fn().float() - ref).norm() / ref.norm()
            assert err < 2e-2, f"{m}x{n}x{k} {name}: relative error {err:.2e}"
        times = {name: [] for name in runs}
        for _ in range(3):
            for name, fn in runs.items():
                times[name].append(do_bench(fn, warmup=10, rep=40, return_mode="median") * 1e3)
        auto, fill = (statistics.median(times[name]) for name in ("auto", "fill"))
        print(f"{f'{m}x{n}x{k}':22s} {f'{tile_m}x{tile_n}':8s} {s:4d} {auto:9.1f} {fill:9.1f} {auto / fill:9.3f}", flush=True)


if __name__ == "__main__":
    main([tuple(int(x) for x in arg.split("x")) for arg in sys.argv[1:]] or SHAPES)
