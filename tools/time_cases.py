"""Times some benchmark cases, ours and the headline peer, in one process: for A/B runs of two
builds of the extension on one device call (one process per build, in turn, so that the GPU's
warm-up and power state fall on both alike), where the whole benchmark would take too long.
    PYTHONPATH=$PWD:benchmarks python3 tools/time_cases.py OP SUBSTRING [SUBSTRING ...]
OP: grouped_mm, gemm, syr2k or streamk_mm; a case runs when its name contains one of the
substrings. Prints one line per case: median µs of ours and of the peer (triton's do_bench)."""
import importlib
import os
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

MODULES = {"grouped_mm": "bench_grouped_mm", "gemm": "bench_gemm", "syr2k": "bench_syr2k", "streamk_mm": "bench_streamk"}


def main(op, wanted):
    module = importlib.import_module(MODULES[op])
    for case in module.cases("cuda"):
        if not any(w in case.name for w in wanted):
            continue
        peer_name, peer = next(iter(case.peers.items()))
        ours = do_bench(case.ours, warmup=25, rep=100, return_mode="median") * 1e3
        theirs = do_bench(peer, warmup=25, rep=100, return_mode="median") * 1e3
        print(f"{case.name:48s} ours {ours:9.1f}  {peer_name} {theirs:9.1f}  ratio {theirs / ours:5.2f}", flush=True)
        del case
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
