"""What runs on the GPU for some benchmark cases, ours and the headline peer: each kernel's name,
grid and mean device time over a few calls (torch.profiler's trace), so that a slow case shows
whether its time is in the matmul kernel, in copies in front of it or in a reduction behind it,
and which tiles the peer's library chose.
    PYTHONPATH=$PWD:benchmarks python3 tools/kernel_breakdown.py [--dtype DTYPE] OP SUBSTRING [SUBSTRING ...]
OP and SUBSTRING as in tools/time_cases.py. The L2 is flushed before every call (as triton's
do_bench does), so the times are the cold-cache ones the benchmark reports."""
import argparse
import collections
import importlib
import json
import os
import re
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from time_cases import MODULES  # noqa: E402

CALLS = 10


def kernels(fn):
    """(name, grid) -> [mean µs per call, launches per call] of the kernels `fn` launches."""
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        events = json.load(open(trace.name))["traceEvents"]
    found = collections.defaultdict(lambda: [0.0, 0])
    for e in events:
        if e.get("cat") != "kernel":
            continue
        name = e["name"]
        if "FillFunctor<signed char>" in name:  # the flush (flush.zero_(); a check for "fill" matched nothing)
            continue
        key = (name, tuple(e.get("args", {}).get("grid", ())))
        found[key][0] += e["dur"] / CALLS
        found[key][1] += 1 / CALLS
    return found


def short(name, width=110):
    name = re.sub(r"\s+", " ", name)
    return name if len(name) <= width else name[: width - 3] + "..."


def main(op, wanted, dtype=None):
    module = importlib.import_module(MODULES[op])
    for case in module.cases("cuda"):
        if not any(re.search(w, case.name) for w in wanted) or (dtype and case.dtype != getattr(torch, dtype)):
            continue
        peer_name, peer = next(iter(case.peers.items()))
        for who, fn in (("ours", case.ours), (peer_name, peer)):
            found = kernels(fn)
            total = sum(t for t, _ in found.values())
            print(f"{case.name} {who}: {total:.1f} µs of kernels a call", flush=True)
            for (name, grid), (t, count) in sorted(found.items(), key=lambda kv: -kv[1][0]):
                print(f"    {t:8.1f} µs  x{count:.0f}  grid {list(grid)}  {short(name)}", flush=True)
        del case
        torch.cuda.empty_cache()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("op", choices=sorted(MODULES))
    parser.add_argument("substrings", nargs="+")
    parser.add_argument("--dtype")
    args = parser.parse_args()
    main(args.op, args.substrings, args.dtype)
