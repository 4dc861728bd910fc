"""Times some benchmark cases, ours and the headline peer, in one process: for A/B runs of two
builds of the extension on one device call (one process per build, in turn, so that the GPU's
warm-up and power state fall on both alike), where the whole benchmark would take too long.
    PYTHONPATH=$PWD:benchmarks python3 tools/time_cases.py [--dtype DTYPE] OP SUBSTRING [SUBSTRING ...]
OP: grouped_mm, gemm, syr2k or streamk_mm; a case runs when its name matches one of the
substrings, read as regular expressions (^mixtral: the forward case, not wgrad_mixtral), and its
dtype is DTYPE (e.g. bfloat16) if given. Prints one line per case: median µs
of ours and of the peer, timed as the benchmark times them (common.time_in_turn).
--ab VAR=x,y[,z...]: ours under each setting of the environment variable VAR (an empty one: unset)
in turn, --rounds times (default 6, made even) interleaved, every other round in reversed order,
so that the GPU's clock and power drift falls on each alike; prints the median over rounds of each
setting and its time over the first's (the variables are read on every call, so one process
serves all)."""
import argparse
import importlib
import os
import re
import statistics
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from common import time_in_turn  # noqa: E402

MODULES = {"grouped_mm": "bench_grouped_mm", "gemm": "bench_gemm", "syr2k": "bench_syr2k", "streamk_mm": "bench_streamk"}


def set_env(variable, value):
    if value:
        os.environ[variable] = value
    else:
        os.environ.pop(variable, None)


def main(op, wanted, dtype=None, ab=None, rounds=5):
    module = importlib.import_module(MODULES[op])
    for case in module.cases("cuda"):
        if not any(re.search(w, case.name) for w in wanted) or (dtype and case.dtype != getattr(torch, dtype)):
            continue
        if ab:
            variable, values = ab.split("=", 1)
            values = values.split(",")
            times = {v: [] for v in values}
            # Every other round in reversed order, and an even number of rounds: in a fixed order
            # the first setting took the earlier place in every round, which a GPU heating through
            # the rounds favours (~1% a place on gemm 8 x 4096³, session 56).
            for r in range(rounds + rounds % 2):
                for v in (values if r % 2 == 0 else values[::-1]):
                    set_env(variable, v)
                    times[v].append(do_bench(case.ours, warmup=25, rep=100, return_mode="median") * 1e3)
            set_env(variable, None)
            med = {v: statistics.median(t) for v, t in times.items()}  # (an even count: the middle two's mean)
            cells = "  ".join(f"{variable}={v or '(unset)'} {med[v]:9.1f}" for v in values)
            ratios = " ".join(f"{med[v] / med[values[0]]:5.3f}" for v in values[1:])
            print(f"{case.name:40s} {str(case.dtype)[6:]:9s} {cells}  against the first {ratios}", flush=True)
        else:
            peer_name, peer = next(iter(case.peers.items()))
            times = time_in_turn({"ours": case.ours, peer_name: peer}, "cuda")  # (the benchmark's timing)
            ours, theirs = times["ours"] * 1e3, times[peer_name] * 1e3
            print(f"{case.name:40s} {str(case.dtype)[6:]:9s} ours {ours:9.1f}  {peer_name} {theirs:9.1f}  ratio {theirs / ours:5.2f}", flush=True)
        del case
        torch.cuda.empty_cache()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", help="only cases of this dtype (torch's name: bfloat16, float16, ...)")
    parser.add_argument("op", choices=sorted(MODULES))
    parser.add_argument("substrings", nargs="+")
    parser.add_argument("--ab", help="VAR=x,y[,...]: ours under each setting in turn (empty: unset), interleaved")
    parser.add_argument("--rounds", type=int, default=6, help="rounds of --ab (default 6; made even)")
    args = parser.parse_args()
    main(args.op, args.substrings, args.dtype, args.ab, args.rounds)
