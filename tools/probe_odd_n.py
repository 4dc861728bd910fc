"""Where an output of odd width loses its time (session 11: 704 x 830 x 144 takes 14.6 µs of kernel
against 6.8 at N = 832, 4096 x 4095 x 1024 78 µs against 53; the epilogue's instruction count and
partial-sector writes explain only part of it). Kernel time per call from a CUDA graph of 20 calls
(no host in the way), for each shape:
  odd       streamk_mm on the odd N (B K-major: no operand copy)
  aligned   the aligned twin (N rounded up to 8), TMA-store epilogue
  threads   the aligned twin with the threads' stores (TORCH_GROUPED_TMA_STORE=0)
  pad+slice what padding the output would cost: the aligned twin, then [:, :N].contiguous()
  mm        torch.mm on the odd N
    python tools/probe_odd_n.py            (on a GPU machine; under ncu: --ncu M N K runs one call)"""
import os
import sys

import torch

import torch_grouped as tg


def graph_us(fn, calls=20, replays=5):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn(), fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / (calls * replays)


def operands(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    return a, torch.randn(n, k, device="cuda", dtype=torch.bfloat16).T  # K-major B: never copied


def main():
    if sys.argv[1:2] == ["--ncu"]:
        a, b = operands(*map(int, sys.argv[2:5]))
        tg.streamk_mm(a, b, decomposition="data_parallel")
        torch.cuda.synchronize()
        return
    for m, n, k in [(704, 830, 144), (178, 455, 1096), (2048, 1001, 2048), (4096, 4095, 1024)]:
        n8 = (n + 7) // 8 * 8
        a, b = operands(m, n, k)
        a8, b8 = operands(m, n8, k)
        row = {"odd": lambda: tg.streamk_mm(a, b, decomposition="data_parallel"),
               "aligned": lambda: tg.streamk_mm(a8, b8, decomposition="data_parallel"),
               "pad+slice": lambda: tg.streamk_mm(a8, b8, decomposition="data_parallel")[:, :n].contiguous(),
               "mm": lambda: torch.mm(a, b)}
        times = {name: graph_us(fn) for name, fn in row.items()}
        os.environ["TORCH_GROUPED_TMA_STORE"] = "0"
        times["threads"] = graph_us(row["aligned"])
        del os.environ["TORCH_GROUPED_TMA_STORE"]
        print(f"{m}x{n}x{k}: " + "  ".join(f"{name} {t:7.1f}" for name, t in times.items()) + "  (us per call)", flush=True)


if __name__ == "__main__":
    main()
