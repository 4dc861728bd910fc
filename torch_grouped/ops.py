"""Python API over ``torch.ops.grouped.*``."""
from typing import List, Optional, Sequence

import torch

_ops = torch.ops.grouped


def _call(op, *args, **kwargs):
    """Calls `op`'s only overload (the packet would resolve it on every call). Outside
    torch.compile the overload's C++ handle is called directly: OpOverload.__call__ adds ~1 µs per
    call (a tiny permute_copy 10.4 -> 9.4 µs on a 2-core CPU, session 18), and our ops have no
    Python dispatcher that it would consult. Whether a gradient can flow is decided by the ops' C++
    autograd kernels (csrc/common/autograd_apply.h), which record no graph node where none can:
    checked here, before the call, it cost ~33 ns a tensor (gemm's two lists of 64: 4.2 µs,
    session 54). Under torch.compile the op is traced as is."""
    op = op.default
    if torch.compiler.is_compiling():
        return op(*args, **kwargs)
    return op._op(*args, **kwargs)


def gemm(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor], *,
         out_dtype: Optional[torch.dtype] = None, schedule: str = "auto",
         sort_by_k: bool = True) -> List[torch.Tensor]:
    """Grouped matmul over lists: ``c[i] = a[i] @ b[i]``.

    Every group has its own sizes: ``a[i]`` is ``[M_i, K_i]``, ``b[i]`` is ``[K_i, N_i]``; any of
    them may be 0 (``K_i = 0`` gives zeros). Transposed views are used without a copy. Half inputs
    accumulate in fp32; ``out_dtype=torch.float32`` keeps the fp32 result.

    On Hopper, all groups run in one persistent kernel. ``schedule`` says how its CTAs find their
    tiles: ``"host"`` (per-CTA lists computed on the host, sent with the problem table),
    ``"device"`` (each warp walks the groups itself) or ``"auto"`` (host). ``sort_by_k`` visits
    the groups by K, descending, so that the longest tiles are dealt out first. fp32 inputs run the
    same kernel through TF32 (fp32-accurate 3xTF32 unless torch allows TF32 matmuls; then only
    groups averaging under 4 GFLOP, else cuBLAS per group); ``TORCH_GROUPED_FP32_KERNELS=0`` or
    ``1`` forces cuBLAS or the kernel (README).
    """
    a, b = list(a), list(b)
    if not a and not b:  # no groups: nothing to dispatch on, nothing to compute
        return []
    return _call(_ops.gemm, a, b, out_dtype=out_dtype, schedule=schedule, sort_by_k=sort_by_k)


def grouped_mm(a: torch.Tensor, b: torch.Tensor, offs: Optional[torch.Tensor] = None, *,
               out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """The MoE grouped matmul, with the semantics of ``torch._grouped_mm``.

    ``offs`` holds int32 cumulative group ends along the grouped axis:

    * 2D × 3D: ``a [T, K]``, ``b [G, K, N]``, rows of ``a`` grouped → ``[T, N]``
    * 3D × 2D: ``a [G, M, K]``, ``b [K, N]``, columns of ``b`` grouped → ``[M, N]``
    * 2D × 2D: ``a [M, K]``, ``b [K, N]``, K grouped → ``[G, M, N]``
    * 3D × 3D: batched, ``offs`` must be None → ``[G, M, N]``

    Rows (columns) past the last offset give zeros; K past it is not read. On Hopper with
    bf16/fp16 inputs every form runs in one persistent kernel that reads ``offs`` on the device:
    no synchronisation, capturable in a CUDA graph (an MoE layer's backward pass included). There,
    offsets that are not non-decreasing or exceed the grouped size cannot be reported; they are
    clamped, so the result is unspecified but memory is never touched outside the tensors. Other
    cases (fp32, fp64, other devices) read ``offs`` on the host and validate it.
    """
    return _call(_ops.grouped_mm, a, b, offs, out_dtype=out_dtype)


def syr2k(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor],
          c: Optional[Sequence[torch.Tensor]] = None, *, uplo: str = "L", alpha: float = 1.0,
          beta: float = 0.0) -> List[torch.Tensor]:
    """Grouped symmetric rank-2k update: ``alpha·(a[i] b[i]ᵀ + b[i] a[i]ᵀ) + beta·c[i]``.

    ``a[i]`` and ``b[i]`` are ``[N_i, K_i]``; ``c`` is None or one ``[N_i, N_i]`` per group, of
    which only the ``uplo`` ('L' or 'U') triangle is read. Only the triangle's tiles are computed;
    the result is the full matrix, exactly symmetric.
    """
    a, b, c = list(a), list(b), list(c) if c is not None else []
    if not a and not b and not c:  # no groups: nothing to dispatch on, nothing to compute
        if uplo not in ("L", "U"):
            raise ValueError(f"syr2k: uplo must be 'L' or 'U', got '{uplo}'")
        return []
    return _call(_ops.syr2k, a, b, c, uplo=uplo, alpha=alpha, beta=beta)


def streamk_mm(a: torch.Tensor, b: torch.Tensor, *, decomposition: str = "auto", splits: int = 0,
               grid: int = 0) -> torch.Tensor:
    """``a @ b`` with a chosen work decomposition.

    ``decomposition``: ``auto`` (the Stream-K paper's analytical model picks), ``data_parallel``,
    ``split_k`` (``splits`` slices of K), ``stream_k``, ``dp_one_tile_sk`` or ``two_tile_sk_dp``.
    ``splits`` and ``grid`` (persistent CTAs) are chosen automatically when 0. fp32 inputs take
    the Stream-K kernel through 3xTF32 (fp32-accurate) where M and N's harmonic mean is 1024 or
    more and torch does not allow TF32 matmuls, cuBLAS otherwise; ``TORCH_GROUPED_FP32_KERNELS=0``
    or ``1`` forces cuBLAS or the kernel (README).
    """
    return _call(_ops.streamk_mm, a, b, decomposition=decomposition, splits=splits, grid=grid)


def permute_copy(x: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
    """``x.permute(dims).contiguous()`` as a fresh tensor; rank ≤ 8, any dtype."""
    return _call(_ops.permute_copy, x, list(dims))


def layout_transform(x: torch.Tensor, src_layout: str, dst_layout: str) -> torch.Tensor:
    """Converts between TVM-style layouts, e.g. ``"NCHW"`` → ``"NCHW4c"`` or ``"NCHW8c"`` → ``"NHWC"``.

    Upper-case letters are axes, digits and a lower-case letter a split sub-axis. An axis that the
    split size does not divide is zero-padded.
    """
    return _call(_ops.layout_transform, x, src_layout, dst_layout)
