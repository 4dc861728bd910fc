"""The big-shape gap under Nsight Compute: our grouped kernel beside the peer's on the cases where
we sit at ~90% of dense mm (Mixtral grouped_mm, 8 x 4096^3 through gemm), plus dense torch.mm;
and the short-K weight gradient (DeepSeek-V3 up, K about 256 per expert, 0.77x the peer), whose
epilogue we suspect (benchmarks/NOTES.md, session 9); and the fp64 DMMA kernels beside dgemm (f64)
and dsyr2k (f64_syr2k).
Each call runs twice (the first warms up); run it under ncu with a kernel filter, e.g.
    ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
        -k 'regex:grouped_gemm|cutlass|sm90_xmma|nvjet|gemm' --launch-skip-before-match 0 \
        python3 tools/ncu_bigshape.py [case ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import bench_grouped_mm  # noqa: E402
import torch_grouped as tg  # noqa: E402


def mixtral():
    name, groups, n, k, tokens, dtype, routing = bench_grouped_mm.GPU_CASES[0]
    ends = bench_grouped_mm.group_sizes(groups, tokens, routing, torch.Generator().manual_seed(0)).cumsum(0)
    offs = ends.to(torch.int32).cuda()
    a = torch.randn(tokens, k, device="cuda", dtype=dtype)
    b = torch.randn(groups, n, k, device="cuda", dtype=dtype).mT
    return [("ours mixtral", lambda: tg.grouped_mm(a, b, offs)),
            ("torch._grouped_mm mixtral", lambda: torch._grouped_mm(a, b, offs=offs))]


def cube():
    a = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(8)]
    b = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(8)]
    return [("ours gemm 8x4096^3", lambda: tg.gemm(a, b)), ("torch.mm 4096^3", lambda: torch.mm(a[0], b[0]))]


def wgrad(prefix="wgrad_dsv3_32x", label="dsv3"):
    case = next(c for c in bench_grouped_mm.wgrad_cases("cuda") if c.name.startswith(prefix))
    return [(f"ours wgrad {label}", case.ours), (f"torch._grouped_mm wgrad {label}", case.peers["torch._grouped_mm"])]


def wgrad_down():
    # K about 256 per expert and the widest output (7168 columns): the weight gradient furthest behind
    return wgrad("wgrad_dsv3_down_32x", "dsv3 down")


def forward(prefix):
    # a forward MoE case of the benchmark, ours beside torch._grouped_mm (small, tiny and decode:
    # weight-streaming shapes, where the DRAM bytes against the weights' own size say the most)
    case = next(c for c in bench_grouped_mm.cases("cuda") if c.name.startswith(prefix))
    return [(f"ours {prefix}", case.ours), (f"torch._grouped_mm {prefix}", case.peers["torch._grouped_mm"])]


def f64():
    # the fp64 DMMA kernel (forced: the rule sends 4 x 4096^3 to cuBLAS) beside cuBLAS's dgemm
    os.environ["TORCH_GROUPED_FP64_KERNELS"] = "1"
    a = [torch.randn(4096, 4096, device="cuda", dtype=torch.float64) for _ in range(4)]
    b = [torch.randn(4096, 4096, device="cuda", dtype=torch.float64) for _ in range(4)]
    return [("ours gemm fp64 4x4096^3", lambda: tg.gemm(a, b)), ("torch.mm fp64 4096^3", lambda: torch.mm(a[0], b[0]))]


def f64_syr2k():
    # the fp64 Rank2K kernel (forced; its rows K-contiguous and 16-byte aligned: TMA loads) beside
    # cuBLAS's dsyr2k (lower triangle only) on one n = 4096, k = 4096 problem
    import cublas_syr2k

    os.environ["TORCH_GROUPED_FP64_KERNELS"] = "1"
    a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.float64) for _ in range(2))
    c = torch.empty(4096, 4096, device="cuda", dtype=torch.float64)
    return [("ours syr2k fp64 n4096 k4096", lambda: tg.syr2k([a], [b])),
            ("cuBLAS dsyr2k n4096 k4096", lambda: cublas_syr2k.syr2k_lower(a, b, c))]


CASES = {"mixtral": mixtral, "cube": cube, "wgrad": wgrad, "wgrad_down": wgrad_down, "f64": f64, "f64_syr2k": f64_syr2k,
         "small": lambda: forward("small_64x_128x_1024x1024"), "tiny": lambda: forward("tiny_128x"),
         "decode": lambda: forward("decode_8x"), "wgrad_small": lambda: wgrad("wgrad_small_64x", "small")}


def main():
    for case in sys.argv[1:] or list(CASES):
        for label, fn in CASES[case]():
            for _ in range(2):
                torch.cuda.nvtx.range_push(label)
                fn()
                torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
            print("ran", label, flush=True)


if __name__ == "__main__":
    main()
