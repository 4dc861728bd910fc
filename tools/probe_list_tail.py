"""What gemm's tail carve (sched/list_tail.h) does on a list: the kernels one call launches, with
their grids, starts and durations (torch.profiler's trace, after 20 warm calls), under
TORCH_GROUPED_LIST_TAIL unset (the rule), 1 and 0.
    PYTHONPATH=$PWD python3 tools/probe_list_tail.py [GROUPSxMxNxK ...]   (default 8x4096x4096x4096)
Time the settings with tools/time_cases.py --ab TORCH_GROUPED_LIST_TAIL=,1,0 gemm CASE.
    PYTHONPATH=$PWD python3 tools/probe_list_tail.py --corner MxNxK ...
times streamk_mm on a carved corner's shape under each decomposition (do_bench, µs): what the
corner costs against the round it saves."""
import json
import os
import sys
import tempfile

import torch

import torch_grouped as tg


def launches(fn):
    """(kernel name, grid, duration µs, start µs) of every CUDA kernel fn() launches."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    return [(e["name"], e.get("args", {}).get("grid"), e.get("dur"), e.get("ts")) for e in events if e.get("cat") == "kernel"]


def main(specs):
    for spec in specs:
        groups, m, n, k = (int(v) for v in spec.split("x"))
        a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(groups)]
        b = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(groups)]
        for setting in ("", "1", "0"):
            os.environ["TORCH_GROUPED_LIST_TAIL"] = setting
            for _ in range(20):  # the clock and power state of a busy GPU
                tg.gemm(a, b)
            print(f"{spec} TORCH_GROUPED_LIST_TAIL={setting or '(unset)'} (start µs after the first kernel's, duration µs):")
            kernels = launches(lambda: tg.gemm(a, b))
            for name, grid, dur, ts in kernels:
                short = name.replace("torch_grouped::", "").replace("kernels::", "")
                print(f"    {ts - kernels[0][3]:8.1f} {dur:8.1f}  grid {grid}  {short[:120]}")


def corners(shapes):
    from triton.testing import do_bench
    for shape in shapes:
        m, n, k = (int(v) for v in shape.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        runs = [("auto", 0), ("data_parallel", 0), ("stream_k", 0), ("dp_one_tile_sk", 0)]
        runs += [("split_k", s) for s in (2, 4, 8, 16, 32)]
        line = []
        for decomposition, splits in runs:
            us = 1e3 * do_bench(lambda: tg.streamk_mm(a, b, decomposition=decomposition, splits=splits), rep=50)
            line.append(f"{decomposition}{splits or ''} {us:.1f}")
        mm = 1e3 * do_bench(lambda: torch.mm(a, b), rep=50)
        print(f"{shape}: tile {torch.ops.grouped._streamk_tile(a, b)}  " + "  ".join(line) + f"  torch.mm {mm:.1f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--corner"]:
        corners(sys.argv[2:])
    else:
        main(sys.argv[1:] or ["8x4096x4096x4096"])
