"""grouped_mm's forward MoE cases as a model calls them: the same routing, but each call on the next
of LAYERS layers' expert weights (several GB together, far beyond L2 and the TLBs' reach), in a
loop timed as a whole with CUDA events, against the benchmark's way (one layer, do_bench, L2
flushed between calls). Ours under each setting of TORCH_GROUPED_CLUSTER (unset, 1) and
torch._grouped_mm, in alternating rounds. Session 38: under ncu, a lone cold call of the
unclustered kernel read DeepSeek-V3 down's weights twice from HBM (705 against 519 µs warm).
    PYTHONPATH=$PWD:benchmarks python3 tools/probe_rotating_weights.py [CASE ...]
"""
import os
import statistics
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from bench_grouped_mm import forward_problems  # noqa: E402

import torch_grouped as tg  # noqa: E402

LAYERS = 6
ROUNDS = 3
SETTINGS = {"ours": None, "ours, clusters": "1", "torch._grouped_mm": None}


def rotating_us(fn, weights, calls=3 * LAYERS):
    """Mean µs of a call over `calls` calls, each on the next layer's weights (after one warm pass)."""
    for b in weights:
        fn(b)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(calls):
        fn(weights[i % len(weights)])
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / calls


def main(wanted):
    print(f"{'case':40s} {'setting':20s} {'rotating µs':>12s} {'one layer (do_bench) µs':>24s}")
    for name, a, b, counts in forward_problems(wanted):
        weights = [b] + [torch.randn_like(b.mT).mT for _ in range(LAYERS - 1)]
        offs = counts.cumsum(0).to(torch.int32).cuda()
        fns = {"ours": lambda b: tg.grouped_mm(a, b, offs), "ours, clusters": lambda b: tg.grouped_mm(a, b, offs),
               "torch._grouped_mm": lambda b: torch._grouped_mm(a, b, offs=offs)}
        rotating, single = {s: [] for s in SETTINGS}, {s: [] for s in SETTINGS}
        for _ in range(ROUNDS):
            for setting, value in SETTINGS.items():
                if value is None:
                    os.environ.pop("TORCH_GROUPED_CLUSTER", None)
                else:
                    os.environ["TORCH_GROUPED_CLUSTER"] = value
                rotating[setting].append(rotating_us(fns[setting], weights))
                single[setting].append(do_bench(lambda: fns[setting](weights[0]), warmup=25, rep=100,
                                                return_mode="median") * 1e3)
        os.environ.pop("TORCH_GROUPED_CLUSTER", None)
        for setting in SETTINGS:
            print(f"{name:40s} {setting:20s} {statistics.median(rotating[setting]):12.1f} "
                  f"{statistics.median(single[setting]):24.1f}", flush=True)
        del weights, a, b
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:] or ["dsv3_32x_7168x4096_T8k", "dsv3_down_32x_2048x7168_T8k", "mixtral_8x_4096x14336_T16k",
                          "32x_256x4096x2048_bf16", "skewed_32x_4096x2048_T8k_empty_experts"])
