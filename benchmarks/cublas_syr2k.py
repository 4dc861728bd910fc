"""cuBLAS ?syr2k (fp32, fp64) called through ctypes on the libcublas that torch itself loaded, on
torch's own handle and stream: the peer that PyTorch does not expose. Our row-major [n, k]
operands are cuBLAS's column-major k x n matrices, so `trans = T` gives a·bᵀ + b·aᵀ; cuBLAS
writes only one triangle (row-major lower = column-major upper)."""
import ctypes
import functools
from typing import Optional

import torch

_FILL_UPPER, _OP_T = 1, 1  # cublasFillMode_t, cublasOperation_t


@functools.lru_cache(maxsize=None)
def _library() -> Optional[ctypes.CDLL]:
    """The libcublas mapped into this process (torch loads it with its first matmul), else None."""
    torch.mm(torch.ones(1, 1, device="cuda"), torch.ones(1, 1, device="cuda"))
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "/libcublas.so" in line}
    return ctypes.CDLL(sorted(paths)[0]) if paths else None


def available() -> bool:
    return torch.cuda.is_available() and _library() is not None


def syr2k_lower(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """out's lower triangle (row-major) = a·bᵀ + b·aᵀ for contiguous [n, k] fp32/fp64 a and b."""
    lib = _library()
    n, k = a.shape
    fn, scalar = {torch.float32: (lib.cublasSsyr2k_v2, ctypes.c_float),
                  torch.float64: (lib.cublasDsyr2k_v2, ctypes.c_double)}[a.dtype]
    one, zero = scalar(1.0), scalar(0.0)
    handle = ctypes.c_void_p(torch.cuda.current_blas_handle())  # bound to the current stream
    status = fn(handle, _FILL_UPPER, _OP_T, n, k, ctypes.byref(one), ctypes.c_void_p(a.data_ptr()), k,
                ctypes.c_void_p(b.data_ptr()), k, ctypes.byref(zero), ctypes.c_void_p(out.data_ptr()), n)
    if status != 0:
        raise RuntimeError(f"cublas?syr2k failed with status {status}")
    return out
