"""streamk_mm with TORCH_GROUPED_STREAMK_CLUSTER=0 and =1 in turn, per shape, in one process (two
rounds, best of each; triton's do_bench, L2 flushed), beside torch.mm: the data behind
sched::streamk_clusters_pay. Prints per shape the tile `auto` takes, whether K and N rows are
16-byte aligned (in place needs both), the 128-row tile count and the µs of each setting.
    PYTHONPATH=$PWD python3 tools/probe_streamk_clusters.py                # the benchmark's corpus
    SEED=2027 PYTHONPATH=$PWD python3 tools/probe_streamk_clusters.py      # another draw of it
    SHAPES="4096 4096 4096;2176 2176 4096" PYTHONPATH=$PWD python3 tools/probe_streamk_clusters.py
    B_LAYOUT=k PYTHONPATH=$PWD python3 tools/probe_streamk_clusters.py     # B K-major (x @ w.T)
    DTYPE=float16 PYTHONPATH=$PWD python3 tools/probe_streamk_clusters.py  # fp16 (default bfloat16)
"""
import os
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import bench_streamk  # noqa: E402
import torch_grouped as tg  # noqa: E402


def shapes():
    given = [tuple(map(int, s.split())) for s in os.environ.get("SHAPES", "").split(";") if s.strip()]
    seed = int(os.environ["SEED"]) if os.environ.get("SEED") else None
    return given or list(bench_streamk.corpus(True, seed=seed))


def main():
    dtype = getattr(torch, os.environ.get("DTYPE", "bfloat16"))
    for m, n, k in shapes():
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        if os.environ.get("B_LAYOUT") == "k":  # the same shape with unit stride along K
            b = b.T.contiguous().T
        tile = torch.ops.grouped._streamk_tile(a, b)[1]
        best = {}
        for _ in range(2):
            for setting in ("0", "1"):
                os.environ["TORCH_GROUPED_STREAMK_CLUSTER"] = setting
                t = do_bench(lambda: tg.streamk_mm(a, b), warmup=10, rep=40, return_mode="median") * 1e3
                best[setting] = min(best.get(setting, float("inf")), t)
        mm = do_bench(lambda: a @ b, warmup=10, rep=40, return_mode="median") * 1e3
        tiles = -(-m // 128) * -(-n // tile)
        print(f"{m}x{n}x{k} tile {tile} kal {(2 * k) % 16 == 0} nal {(2 * n) % 16 == 0} tiles {tiles} "
              f"c0 {best['0']:.1f} c1 {best['1']:.1f} gain {best['0'] / best['1']:.3f} mm {mm:.1f} "
              f"r0 {mm / best['0']:.2f} r1 {mm / best['1']:.2f}", flush=True)
    os.environ.pop("TORCH_GROUPED_STREAMK_CLUSTER", None)


if __name__ == "__main__":
    main()
