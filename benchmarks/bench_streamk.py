"""streamk_mm against torch.mm (cuBLAS), the single-matmul cases of ANCHORS.md."""
import torch

import torch_grouped as tg
from common import Case, on_gpu

GPU_SHAPES = [(384, 384, 128), (1664, 1664, 4096), (2304, 2304, 2048), (128, 128, 65536),
              (256, 256, 131072), (512, 1024, 32768), (1024, 1024, 16384), (4096, 4096, 4096),
              (3456, 3456, 3456), (8192, 1024, 8192), (16384, 16384, 256), (6144, 6144, 1024),
              (1408, 1408, 8192), (2176, 2176, 4096), (768, 3072, 12288)]
CPU_SHAPES = [(256, 256, 256), (128, 128, 2048)]


def cases(device):
    gpu = on_gpu(device)
    dtype = torch.bfloat16 if gpu else torch.float32
    for m, n, k in (GPU_SHAPES if gpu else CPU_SHAPES):
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        yield Case("streamk_mm", f"{m}x{n}x{k}", dtype, lambda a=a, b=b: tg.streamk_mm(a, b),
                   {"torch.mm": lambda a=a, b=b: torch.mm(a, b)}, 2.0 * m * n * k, "mm",
                   2e-2 if gpu else 1e-4)
