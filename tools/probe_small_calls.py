"""The fixed cost of a small streamk_mm call (issue 7's smallest corpus shapes lose 30% to
torch.mm on it): GPU µs per call of one-wave shapes, ours against torch.mm, as triton's do_bench
sees it (L2 flushed between calls) and as a CUDA graph of 20 calls replays it (the GPU's own time,
back to back), for `auto`, data_parallel on every SM and on as many CTAs as tiles, and K from one
block up (the intercept is the fixed cost). Run it once as is and once with TORCH_GROUPED_PDL=0.
With --kernels, the GPU kernels of one `auto` call of each shape instead (torch.profiler, mean µs
of 20 calls): the operand copies, the matmul and the separate fixup apart; with --trace, where
each kernel of one call starts and ends after an L2 flush.
    PYTHONPATH=$PWD python3 tools/probe_small_calls.py [--kernels | --trace MxNxK ...]"""
import os
import sys

import torch
from triton.testing import do_bench

import torch_grouped as tg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_odd_n import graph_us  # noqa: E402  (µs per call of a CUDA graph of 20 calls)


def warmed(shapes):
    """(shape, a, b) for each "MxNxK": bf16 operands on the GPU, five `auto` calls made with them."""
    gen = torch.Generator().manual_seed(0)
    for shape in shapes:
        m, n, k = (int(v) for v in shape.split("x"))
        a = torch.randn(m, k, generator=gen).to("cuda", torch.bfloat16)
        b = torch.randn(k, n, generator=gen).to("cuda", torch.bfloat16)
        for _ in range(5):
            tg.streamk_mm(a, b)
        torch.cuda.synchronize()
        yield shape, a, b


def kernels(shapes):
    from torch.profiler import ProfilerActivity, profile

    for shape, a, b in warmed(shapes):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                tg.streamk_mm(a, b)
            torch.cuda.synchronize()
        parts = [(e.key, e.device_time_total / 20, e.count // 20) for e in prof.key_averages() if e.device_time_total > 0]
        print(f"{shape}: " + "; ".join(f"{name[:70]} x{count} {us:.2f} us" for name, us, count in parts), flush=True)


def trace(shapes):
    """One `auto` call per shape after an L2 flush (as do_bench times it), its kernels as the
    profiler's trace places them: start and end µs from the first kernel's start, so that the gaps
    between the operand copy, the matmul and the separate fixup show (a kernel launched as a
    programmatic dependent starts early and waits inside)."""
    import json
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for shape, a, b in warmed(shapes):
        for rep in range(3):
            flush.zero_()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                tg.streamk_mm(a, b)
                torch.cuda.synchronize()
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                prof.export_chrome_trace(f.name)
                events = [e for e in json.load(open(f.name))["traceEvents"] if e.get("cat") == "kernel"]
            t0 = min(e["ts"] for e in events)
            parts = [f"{e['name'].split('<')[0].split('(')[0][-28:]} {e['ts'] - t0:.1f}-{e['ts'] - t0 + e['dur']:.1f}"
                     for e in sorted(events, key=lambda e: e["ts"])]
            end = max(e["ts"] + e["dur"] for e in events) - t0
            print(f"{shape} #{rep}: total {end:.1f} us: " + "; ".join(parts), flush=True)


def main():
    print("TORCH_GROUPED_PDL =", os.environ.get("TORCH_GROUPED_PDL", "(unset)"))
    print(f"{'shape':20s} {'variant':18s} {'do_bench':>9s} {'graph':>7s}  (µs per call)")
    gen = torch.Generator().manual_seed(0)
    for m, n, k in ((128, 128, 64), (290, 136, 64), (290, 136, 248), (290, 136, 1024), (384, 384, 128),
                    (708, 830, 140), (704, 832, 144), (939, 167, 675), (936, 168, 680)):
        a = torch.randn(m, k, generator=gen).to("cuda", torch.bfloat16)
        b = torch.randn(k, n, generator=gen).to("cuda", torch.bfloat16)
        tile_m, tile_n, _ = torch.ops.grouped._streamk_tile(a, b)
        tiles = -(-m // tile_m) * -(-n // tile_n)
        variants = {"torch.mm": lambda: torch.mm(a, b), "auto": lambda: tg.streamk_mm(a, b),
                    "dp, every SM": lambda: tg.streamk_mm(a, b, decomposition="data_parallel")}
        variants[f"dp, {tiles} CTAs"] = lambda: tg.streamk_mm(a, b, decomposition="data_parallel", grid=tiles)
        for name, fn in variants.items():
            bench = do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
            print(f"{f'{m}x{n}x{k}':20s} {name:18s} {bench:9.2f} {graph_us(fn, replays=50):7.2f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--kernels":
        kernels(sys.argv[2:])
    elif len(sys.argv) > 2 and sys.argv[1] == "--trace":
        trace(sys.argv[2:])
    else:
        main()
