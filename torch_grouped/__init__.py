"""torch_grouped: grouped GEMM, grouped SYR2K, Stream-K matmul and layout transforms.

Each op is a ``torch.library`` custom op under ``torch.ops.grouped.*`` with a fake implementation
(for ``torch.compile`` and ``torch.export``) and autograd; the functions below are the documented
Python API. Under ``torch.autocast`` the matmul ops cast their floating inputs (but fp64) to the
autocast dtype, as ``torch.mm`` does (csrc/common/autocast.cpp).
"""
import torch  # noqa: F401  (loads libtorch before our extension)

from . import _C  # noqa: F401  registers torch.ops.grouped.*
from . import _fake  # noqa: F401
from .ops import gemm, grouped_mm, layout_transform, permute_copy, streamk_mm, syr2k

__all__ = ["gemm", "grouped_mm", "syr2k", "streamk_mm", "permute_copy", "layout_transform",
           "has_cuda_kernels"]


def has_cuda_kernels() -> bool:
    """Whether this build registered the CUDA path (built with nvcc and a CUDA torch)."""
    return torch._C._dispatch_has_kernel_for_dispatch_key("grouped::gemm", "CUDA")
