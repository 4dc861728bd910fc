"""SM clock and power while a big matmul case runs back to back: ours against its peer, to test
whether the big-shape gap (session 8: equal speed under ncu's locked base clocks, 0.91-0.95x at
free clocks) is the chip reaching its power limit at a lower clock when a kernel pulls more L2
traffic. For each case and side: the median time per call (CUDA events over the loop), and the
median SM clock (MHz) and board power (W) that nvidia-smi samples every 50 ms meanwhile.
    PYTHONPATH=$PWD python3 tools/clock_probe.py [seconds per side, default 3]
Environment (TORCH_GROUPED_TILE, TORCH_GROUPED_CLUSTER) applies to our side as to any call."""
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_bigshape  # noqa: E402  (the same cases)


def sampled(fn, seconds):
    """Runs fn back to back for `seconds` while nvidia-smi samples clocks and power."""
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "50", "-i", str(torch.cuda.current_device())],
                           stdout=subprocess.PIPE, text=True)
    times = []
    try:
        end = time.time() + seconds
        while time.time() < end:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(10):
                fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 10)
    finally:
        smi.terminate()
        out, _ = smi.communicate()
    samples = [line.split(",") for line in out.strip().splitlines() if "," in line]
    clocks = [float(c) for c, _ in samples[len(samples) // 4:]]  # after the first quarter: warmed up
    power = [float(p) for _, p in samples[len(samples) // 4:]]
    return statistics.median(times), statistics.median(clocks or [0]), statistics.median(power or [0])


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    print(f"{'case':32s} {'ms per call':>12s} {'SM MHz':>8s} {'W':>6s}")
    for case in ncu_bigshape.CASES.values():
        for label, fn in case():
            fn()
            torch.cuda.synchronize()
            ms, mhz, watts = sampled(fn, seconds)
            print(f"{label:32s} {ms:12.3f} {mhz:8.0f} {watts:6.0f}", flush=True)


if __name__ == "__main__":
    main()
