"""Shared sample inputs per op: correctness (CPU and GPU), gradcheck, opcheck and compile tests
all draw from these. Inputs are fresh random normals, never zeros."""
import dataclasses
from typing import Any, Dict, Tuple

import torch


@dataclasses.dataclass
class Sample:
    name: str
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def __repr__(self):
        return self.name


def _rand(*shape, dtype, device, transposed=False, requires_grad=False):
    if transposed:  # the last two axes transposed, as a view of a contiguous tensor
        t = torch.randn(*shape[:-2], shape[-1], shape[-2], dtype=dtype, device=device).mT
    else:
        t = torch.randn(shape, dtype=dtype, device=device)
    return t.requires_grad_(requires_grad)


def _offs(ends, device):
    return torch.tensor(ends, dtype=torch.int32, device=device)


def gemm_samples(dtype, device, requires_grad=False):
    r = lambda *s, t=False: _rand(*s, dtype=dtype, device=device, transposed=t, requires_grad=requires_grad)
    ragged = [(5, 3, 6), (0, 4, 2), (7, 0, 3), (16, 8, 0), (33, 17, 9)]
    yield Sample("ragged_with_zero_sizes", ([r(m, k) for m, _, k in ragged], [r(k, n) for _, n, k in ragged]))
    yield Sample("transposed_views", ([r(9, 5, t=True), r(4, 12)], [r(5, 3), r(12, 7, t=True)]))
    yield Sample("one_group", ([r(20, 10)], [r(10, 30)]))
    yield Sample("no_groups", ([], []))
    if dtype in (torch.float16, torch.bfloat16):
        yield Sample("fp32_out", ([r(6, 5), r(3, 4)], [r(5, 2), r(4, 8)]), {"out_dtype": torch.float32})


def grouped_mm_samples(dtype, device, requires_grad=False):
    r = lambda *s, t=False: _rand(*s, dtype=dtype, device=device, transposed=t, requires_grad=requires_grad)
    yield Sample("2d_3d_empty_group_and_tail", (r(20, 8), r(4, 8, 6), _offs([3, 3, 10, 15], device)))
    yield Sample("2d_3d_b_transposed", (r(12, 8), r(3, 8, 6, t=True), _offs([4, 8, 12], device)))
    yield Sample("3d_2d", (r(3, 5, 4), r(4, 12), _offs([4, 4, 9], device)))
    yield Sample("2d_2d_k_groups", (r(5, 14), r(14, 6), _offs([5, 5, 12], device)))
    yield Sample("3d_3d", (r(3, 4, 5), r(3, 5, 6), None))
    yield Sample("2d_3d_all_empty", (r(6, 4), r(2, 4, 3), _offs([0, 0], device)))
    if dtype in (torch.float16, torch.bfloat16):
        yield Sample("fp32_out", (r(10, 8), r(2, 8, 4), _offs([5, 10], device)), {"out_dtype": torch.float32})


def syr2k_samples(dtype, device, requires_grad=False):
    r = lambda *s: _rand(*s, dtype=dtype, device=device, requires_grad=requires_grad)
    sizes = [(70, 9), (1, 3), (0, 4), (33, 0), (130, 17)]
    yield Sample("ragged_lower", ([r(n, k) for n, k in sizes], [r(n, k) for n, k in sizes], []))
    yield Sample("upper_alpha", ([r(n, k) for n, k in sizes[:2]], [r(n, k) for n, k in sizes[:2]], []),
                 {"uplo": "U", "alpha": -0.5})
    for uplo in ("L", "U"):
        yield Sample(f"beta_c_{uplo}", ([r(65, 7), r(40, 3)], [r(65, 7), r(40, 3)], [r(65, 65), r(40, 40)]),
                     {"uplo": uplo, "alpha": 0.75, "beta": 1.5})
    yield Sample("no_groups", ([], [], []))


def streamk_samples(dtype, device, requires_grad=False):
    r = lambda *s, t=False: _rand(*s, dtype=dtype, device=device, transposed=t, requires_grad=requires_grad)
    for d in ("auto", "data_parallel", "split_k", "stream_k", "dp_one_tile_sk", "two_tile_sk_dp"):
        yield Sample(f"{d}_ragged", (r(130, 300), r(300, 70)), {"decomposition": d})
    yield Sample("stream_k_many_tiles", (r(300, 100), r(100, 260, t=True)), {"decomposition": "stream_k", "grid": 7})
    yield Sample("split_k_3", (r(65, 200), r(200, 40)), {"decomposition": "split_k", "splits": 3})
    yield Sample("one_iteration", (r(64, 32), r(32, 64)), {"decomposition": "stream_k"})
    yield Sample("k_zero", (r(50, 0), r(0, 20)), {"decomposition": "stream_k"})
    yield Sample("m_zero", (r(0, 10), r(10, 5)), {"decomposition": "two_tile_sk_dp"})


def permute_samples(dtype, device, requires_grad=False):
    r = lambda *s: _rand(*s, dtype=dtype, device=device, requires_grad=requires_grad)
    yield Sample("nhwc_to_nchw", (r(2, 5, 7, 3), [0, 3, 1, 2]))
    yield Sample("transpose", (r(33, 17), [1, 0]))
    yield Sample("reverse_rank5", (r(2, 3, 1, 4, 5), [4, 3, 2, 1, 0]))
    yield Sample("negative_dims", (r(3, 4, 5), [-1, 0, -2]))
    yield Sample("identity", (r(6, 7), [0, 1]))
    yield Sample("non_contiguous", (r(8, 10, 6)[:, ::2, 1:], [2, 0, 1]))
    yield Sample("rank0", (r(), []))
    yield Sample("empty", (r(0, 3, 4), [2, 0, 1]))


def layout_samples(dtype, device, requires_grad=False):
    r = lambda *s: _rand(*s, dtype=dtype, device=device, requires_grad=requires_grad)
    yield Sample("nchw_to_nchw4c", (r(2, 8, 3, 5), "NCHW", "NCHW4c"))
    yield Sample("nchw_to_nchw4c_padded", (r(2, 6, 3, 5), "NCHW", "NCHW4c"))
    yield Sample("nchw8c_to_nhwc", (r(2, 2, 3, 4, 8), "NCHW8c", "NHWC"))
    yield Sample("nchw4c_to_nchw8c_padded", (r(1, 3, 2, 2, 4), "NCHW4c", "NCHW8c"))
    yield Sample("nhwc_to_nchw", (r(2, 4, 5, 3), "NHWC", "NCHW"))
    yield Sample("split_two_axes", (r(3, 10, 6), "ABC", "BAC4a3c"))


def to_float(x):
    return x.float() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
