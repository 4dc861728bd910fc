"""What gemm's tail carve (sched/list_tail.h) does on a list: the kernels one call launches, with
their grids (torch.profiler's trace), under TORCH_GROUPED_LIST_TAIL unset (the rule), 1 and 0.
    PYTHONPATH=$PWD python3 tools/probe_list_tail.py [GROUPSxMxNxK ...]   (default 8x4096x4096x4096)
Time the settings with tools/time_cases.py --ab TORCH_GROUPED_LIST_TAIL=,1,0 gemm CASE."""
import json
import os
import sys
import tempfile

import torch

import torch_grouped as tg


def launches(fn):
    """(kernel name, grid, µs) of every CUDA kernel fn() launches."""
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


if __name__ == "__main__":
    main(sys.argv[1:] or ["8x4096x4096x4096"])
