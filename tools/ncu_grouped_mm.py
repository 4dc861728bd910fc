"""One grouped_mm call per forward MoE case, for ncu: the benchmark's routing, then (for the
cases whose token count is a multiple of 128) the same rows in whole 128-row tiles. Session 38
read DRAM and L2 bytes this way:
    CASES=dsv3_32x_7168x4096_T8k PYTHONPATH=$PWD ncu --clock-control none \\
        --kernel-name regex:grouped_gemm_sm90 --metrics dram__bytes_read.sum,lts__t_bytes.sum,gpu__time_duration.sum \\
        python3 tools/ncu_grouped_mm.py
CASES: comma-separated case names of benchmarks/bench_grouped_mm.py; BENCH_ROUTING_ONLY=1: no
whole-tile call. (A lone call under ncu is colder than do_bench's repeats: see NOTES.)
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
sys.path.insert(0, os.path.dirname(__file__))
from bench_grouped_mm import forward_problems  # noqa: E402
from probe_padding import whole_tiles  # noqa: E402

import torch_grouped as tg  # noqa: E402


def main():
    for _, a, b, counts in forward_problems(os.environ.get("CASES", "dsv3_32x_7168x4096_T8k").split(",")):
        routings = [counts]
        if not os.environ.get("BENCH_ROUTING_ONLY") and int(counts.sum()) % 128 == 0:
            routings.append(whole_tiles(counts))
        for c in routings:
            offs = c.cumsum(0).to(torch.int32).cuda()
            torch.cuda.synchronize()
            tg.grouped_mm(a, b, offs)
            torch.cuda.synchronize()


if __name__ == "__main__":
    main()
