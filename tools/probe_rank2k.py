"""Where a small one-problem syr2k loses its time (bf16 n = 1024, k = 1024: 36 triangle tiles of
128, 0.70-0.75x two `mm`; benchmarks/NOTES.md, session 12): every decomposition of the Rank2K
kernel (TORCH_GROUPED_SYR2K_DECOMPOSITION; data-parallel also without clusters,
TORCH_GROUPED_SYR2K_CLUSTER=0), the GPU time of its kernels (torch.profiler) beside
the call's (do_bench), the same work as one streamk_mm, and the composite of two `mm`.
    python3 tools/probe_rank2k.py [n k ...]
Under ncu, one call of syr2k per tile and decomposition (data_parallel, stream_k), each announced
on stdout before it runs (filter the kernels with -k regex:grouped_gemm):
    python3 tools/probe_rank2k.py --ncu [n k ...]
or one call as the environment sets the tile and decomposition: --ncu1 n k"""
import os
import sys

import torch
from triton.testing import do_bench

import torch_grouped as tg

DECOMPOSITIONS = ("auto", "data_parallel", "split_k", "stream_k", "dp_one_tile_sk", "two_tile_sk_dp")


def kernel_us(fn, reps=20):
    """Mean GPU time per call of each kernel name (µs), from the profiler."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.count > 0:
            out[e.key[:60]] = e.device_time_total / reps
    return out


def main(shapes):
    for n, k in shapes:
        a = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ref = torch.addmm(a @ b.T, b, a.T).float()
        print(f"\n== syr2k bf16 n={n} k={k}")
        for d, cluster in [(d, "") for d in DECOMPOSITIONS] + [("data_parallel", "0")]:
            os.environ["TORCH_GROUPED_SYR2K_DECOMPOSITION"] = d
            os.environ["TORCH_GROUPED_SYR2K_CLUSTER"] = cluster
            err = (tg.syr2k([a], [b], [])[0].float() - ref).abs().max().item()
            ms = do_bench(lambda: tg.syr2k([a], [b], []), warmup=20, rep=200)
            ks = kernel_us(lambda: tg.syr2k([a], [b], []))
            print(f"{d + (' (no clusters)' if cluster == '0' else ''):28s} call {ms * 1e3:7.1f} us  max err {err:.3g}  kernels " +
                  ", ".join(f"{name} {us:.1f}" for name, us in ks.items()))
        os.environ.pop("TORCH_GROUPED_SYR2K_DECOMPOSITION")
        os.environ.pop("TORCH_GROUPED_SYR2K_CLUSTER")
        ms = do_bench(lambda: torch.addmm(a @ b.T, b, a.T), warmup=20, rep=200)
        print(f"{'two mm':15s} call {ms * 1e3:7.1f} us")
        wide_a, wide_b = torch.cat([a, b], 1), torch.cat([b, a], 1).T.contiguous()  # [A B] [B A]^T
        for d in ("auto", "data_parallel", "stream_k", "split_k"):
            ms = do_bench(lambda: tg.streamk_mm(wide_a, wide_b, decomposition=d), warmup=20, rep=200)
            print(f"streamk_mm {n}x{n}x{2 * k} {d:14s} {ms * 1e3:7.1f} us")
        ms = do_bench(lambda: torch.mm(wide_a, wide_b), warmup=20, rep=200)
        print(f"torch.mm   {n}x{n}x{2 * k} {'':14s} {ms * 1e3:7.1f} us")


def ncu_calls(shapes):
    for n, k in shapes:
        a, b = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        for tile in ("128x128", "128x256"):
            for d in ("data_parallel", "stream_k"):
                os.environ.update(TORCH_GROUPED_SYR2K_TILE=tile, TORCH_GROUPED_SYR2K_DECOMPOSITION=d)
                print(f"### n={n} k={k} tile {tile} {d}", flush=True)
                tg.syr2k([a], [b], [])
                torch.cuda.synchronize()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ncu1"]:  # one call as the environment sets it
        a, b = (torch.randn(int(sys.argv[2]), int(sys.argv[3]), device="cuda", dtype=torch.bfloat16) for _ in range(2))
        tg.syr2k([a], [b], [])
        torch.cuda.synchronize()
        sys.exit()
    ncu = sys.argv[1:2] == ["--ncu"]
    args = [int(x) for x in sys.argv[1 + ncu:]]
    shapes = list(zip(args[::2], args[1::2])) or [(1024, 1024), (1024, 4096), (2048, 1024), (4096, 4096), (8192, 1024)]
    ncu_calls(shapes) if ncu else main(shapes)
