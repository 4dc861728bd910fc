"""Fake (meta) implementations: output shapes from input shapes only, never from values."""
import torch

from . import _layout


def _out_dtype(x, out_dtype):
    return out_dtype if out_dtype is not None else x.dtype


@torch.library.register_fake("grouped::gemm")
def _gemm_fake(a, b, *, out_dtype=None, schedule="auto", sort_by_k=True):
    torch._check(len(a) == len(b), lambda: f"gemm: a has {len(a)} tensors but b has {len(b)}")
    return [x.new_empty((x.shape[0], y.shape[1]), dtype=_out_dtype(x, out_dtype)) for x, y in zip(a, b)]


@torch.library.register_fake("grouped::grouped_mm")
def _grouped_mm_fake(a, b, offs=None, *, out_dtype=None):
    torch._check(a.dim() in (2, 3) and b.dim() in (2, 3), lambda: "grouped_mm: a and b must be 2-D or 3-D")
    if a.dim() == 2 and b.dim() == 3:
        shape = (a.shape[0], b.shape[2])
    elif a.dim() == 3 and b.dim() == 2:
        shape = (a.shape[1], b.shape[1])
    elif a.dim() == 2:
        torch._check(offs is not None, lambda: "grouped_mm: offs is required when a is 2-D and b is 2-D")
        shape = (offs.shape[0], a.shape[0], b.shape[1])
    else:
        shape = (a.shape[0], a.shape[1], b.shape[2])
    return a.new_empty(shape, dtype=_out_dtype(a, out_dtype))


@torch.library.register_fake("grouped::syr2k")
def _syr2k_fake(a, b, c, *, uplo="L", alpha=1.0, beta=0.0):
    return [x.new_empty((x.shape[0], x.shape[0])) for x in a]


@torch.library.register_fake("grouped::_symmetric_sum")
def _symmetric_sum_fake(g):
    for i, x in enumerate(g):
        torch._check(x.dim() == 2 and x.shape[0] == x.shape[1], lambda: f"_symmetric_sum: g[{i}] must be a square matrix")
    return [torch.empty_like(x, memory_format=torch.contiguous_format) for x in g]


@torch.library.register_fake("grouped::streamk_mm")
def _streamk_mm_fake(a, b, *, decomposition="auto", splits=0, grid=0):
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.register_fake("grouped::permute_copy")
def _permute_copy_fake(x, dims):
    rank = x.dim()
    return x.new_empty([x.shape[d % rank if rank else 0] for d in dims])


@torch.library.register_fake("grouped::layout_transform")
def _layout_transform_fake(x, src_layout, dst_layout):
    return x.new_empty(_layout.out_sizes(x.shape, src_layout, dst_layout))
