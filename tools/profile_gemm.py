"""Where the time of one grouped call goes: host (wall clock of the call without a sync) against
the GPU kernels (torch.profiler), for a few list-API and offsets cases.
    python tools/profile_gemm.py"""
import time

import torch

import torch_grouped as tg


def host_us(fn, reps=50):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    host = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    return host


def main():
    cases = {
        "gemm 128x 64x512x512": ([torch.randn(64, 512, device="cuda", dtype=torch.bfloat16) for _ in range(128)],
                                  [torch.randn(512, 512, device="cuda", dtype=torch.bfloat16) for _ in range(128)]),
        "gemm 64x 128x1024x1024": ([torch.randn(128, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(64)],
                                    [torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(64)]),
    }
    for name, (a, b) in cases.items():
        fn = lambda: tg.gemm(a, b)
        loop = lambda: [torch.mm(x, y) for x, y in zip(a, b)]
        print(f"{name}: host {host_us(fn):.1f} us per call (loop of mm: {host_us(loop):.1f} us)")
        acts = [torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]
        with torch.profiler.profile(activities=acts, acc_events=True) as prof:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
        print("    GPU time per call:")
        for e in prof.key_averages():
            if e.device_time_total > 0:
                print(f"      {e.key[:80]:80s} {e.device_time_total / 5:8.1f} us x{e.count // 5}")
        print("    host time per call (self CPU, top 8):")
        for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:8]:
            print(f"      {e.key[:80]:80s} {e.self_cpu_time_total / 5:8.1f} us x{e.count // 5}")


if __name__ == "__main__":
    main()
