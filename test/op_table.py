"""Every op with its Python API, its reference, its samples and the dtypes it supports: the
generic tests (test_ops.py, test_compile.py) walk this table."""
import dataclasses
from typing import Callable, List

import torch

import reference
import samples
import torch_grouped as tg

MATMUL_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]
LAYOUT_DTYPES = MATMUL_DTYPES + [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
                                 torch.complex64]


@dataclasses.dataclass
class OpInfo:
    name: str
    api: Callable
    ref: Callable  # reference over the same (args, kwargs)
    samples: Callable
    overload: object
    dtypes: List[torch.dtype]

    def __repr__(self):
        return self.name


def _ref_grouped_mm(a, b, offs=None, out_dtype=None):
    return reference.grouped_mm(a, b, offs)


def _ref_syr2k(a, b, c=None, uplo="L", alpha=1.0, beta=0.0):
    return reference.syr2k(a, b, c or [], uplo, alpha, beta)


def _ref_permute(x, dims):
    return x.permute(dims).contiguous()


OPS = [
    OpInfo("gemm", tg.gemm, lambda a, b, out_dtype=None: reference.gemm(a, b), samples.gemm_samples,
           torch.ops.grouped.gemm.default, MATMUL_DTYPES),
    OpInfo("grouped_mm", tg.grouped_mm, _ref_grouped_mm, samples.grouped_mm_samples,
           torch.ops.grouped.grouped_mm.default, MATMUL_DTYPES),
    OpInfo("syr2k", tg.syr2k, _ref_syr2k, samples.syr2k_samples, torch.ops.grouped.syr2k.default, MATMUL_DTYPES),
    OpInfo("streamk_mm", tg.streamk_mm, lambda a, b, **kw: a.double() @ b.double(), samples.streamk_samples,
           torch.ops.grouped.streamk_mm.default, MATMUL_DTYPES),
    OpInfo("permute_copy", tg.permute_copy, _ref_permute, samples.permute_samples,
           torch.ops.grouped.permute_copy.default, LAYOUT_DTYPES),
    OpInfo("layout_transform", tg.layout_transform, reference.layout_transform, samples.layout_samples,
           torch.ops.grouped.layout_transform.default, LAYOUT_DTYPES),
]
