"""streamk_mm on operands TMA cannot address (an even K or N that is not a multiple of 8 takes the
row-copy kernel: with TORCH_GROUPED_ROW_COPIES=1 on any shape, by default where
sched::row_copies_pay says so; =0 takes the pitched copies), for Nsight Compute:
    TORCH_GROUPED_ROW_COPIES=1 ncu -k regex:grouped_gemm --launch-skip 1 --launch-count 1 \
        python3 tools/probe_row_copies.py M N K
(each call runs twice, the first warms up)."""
import sys

import torch

import torch_grouped as tg

m, n, k = (int(v) for v in sys.argv[1:4])
g = torch.Generator().manual_seed(0)
a = torch.randn(m, k, generator=g).to("cuda", torch.bfloat16)
b = torch.randn(k, n, generator=g).to("cuda", torch.bfloat16)
for _ in range(2):
    out = tg.streamk_mm(a, b)
torch.cuda.synchronize()
print(m, n, k, "max error", (out.float() - a.float() @ b.float()).abs().max().item())
