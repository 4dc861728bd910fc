"""streamk_mm beside torch.mm under Nsight Compute, one shape and plan at a time, for the deep-K
shapes of few tiles where we trail cuBLAS (the matmul kernel, the separate fixup kernel and
cuBLAS's split-K kernels each get their own row: under ncu kernels run one at a time, so the
fixup's time is its own, not overlapped with the matmul's as under programmatic dependent launch).
    ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
        -k 'regex:grouped_gemm|streamk_reduce|nvjet|cutlass|splitK' python3 tools/ncu_streamk.py \
        MxNxK[:decomposition[:grid[:splits]]] ... | MxNxK:list:SLICES ...
Each call runs twice (the first warms up); bf16 operands, B row-major as the benchmark's. `list`:
the same product as SLICES K slices through gemm's list form (tools/probe_split_tiles.py), whose
kernel runs split-K on the grouped walk: the Stream-K walk's cost beside it."""
import sys

import torch

import torch_grouped as tg


def main(specs):
    for spec in specs:
        shape, *plan = spec.split(":")
        m, n, k = (int(v) for v in shape.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        if plan and plan[0] == "list":
            from probe_split_tiles import slices_of
            la, lb = slices_of(a, b, int(plan[1]))
            for _ in range(2):
                tg.gemm(la, lb, out_dtype=torch.float32)
            torch.cuda.synchronize()
            print(spec, "done", flush=True)
            continue
        kwargs = {}
        if plan:
            kwargs["decomposition"] = plan[0]
        if len(plan) > 1:
            kwargs["grid"] = int(plan[1])
        if len(plan) > 2:
            kwargs["splits"] = int(plan[2])
        for _ in range(2):
            tg.streamk_mm(a, b, **kwargs)
            torch.mm(a, b)
        torch.cuda.synchronize()
        print(spec, "done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
