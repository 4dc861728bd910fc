import pytest
import torch
from hypothesis import given, settings, strategies as st

import reference
import torch_grouped as tg

DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.tuples(*[st.integers(0, 24)] * 3), max_size=5),
       dtype=st.sampled_from(DTYPES), transpose=st.booleans())
def test_property_random_groups(sizes, dtype, transpose):
    a = [torch.randn(k, m, dtype=dtype).t() if transpose else torch.randn(m, k, dtype=dtype) for m, _, k in sizes]
    b = [torch.randn(k, n, dtype=dtype) for _, n, k in sizes]
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        reference.assert_close(o, r, dtype)


@pytest.mark.parametrize("schedule", ["auto", "host", "device"])
@pytest.mark.parametrize("sort_by_k", [True, False])
def test_schedule_options_do_not_change_the_result(schedule, sort_by_k, device):
    """The options steer the GPU kernel's tile order only; every path gives the product."""
    g = torch.Generator().manual_seed(0)
    shapes = [(33, 20, 16), (0, 8, 8), (64, 24, 0), (130, 136, 72)]
    a = [torch.randn(m, k, generator=g).to(device) for m, _, k in shapes]
    b = [torch.randn(k, n, generator=g).to(device) for _, n, k in shapes]
    for o, r in zip(tg.gemm(a, b, schedule=schedule, sort_by_k=sort_by_k), reference.gemm(a, b)):
        reference.assert_close(o, r, torch.float32)


@pytest.mark.parametrize("a, b, kwargs, error, match", [
    ([torch.randn(2, 3)], [], {}, ValueError, r"a has 1 tensors but b has 0"),
    ([torch.randn(2, 3, 1)], [torch.randn(3, 4)], {}, RuntimeError, r"a\[0\] must be 2-D \[M, K\]"),
    ([torch.randn(2, 3)], [torch.randn(4, 5)], {}, RuntimeError,
     r"group 0: .* b\[0\].size\(0\) must equal a\[0\].size\(1\) = 3"),
    ([torch.ones(2, 3, dtype=torch.int32)], [torch.ones(3, 4, dtype=torch.int32)], {}, RuntimeError,
     r"a\[0\] has dtype Int; expected one of"),
    ([torch.randn(2, 3)], [torch.randn(3, 4, dtype=torch.float64)], {}, RuntimeError,
     r"b\[0\] has dtype Double but a\[0\] has Float"),
    ([torch.randn(2, 3), torch.randn(2, 3, dtype=torch.float64)],
     [torch.randn(3, 4), torch.randn(3, 4, dtype=torch.float64)], {}, RuntimeError, r"a\[1\] has dtype Double but a\[0\]"),
    ([torch.randn(2, 3)], [torch.randn(3, 4)], {"out_dtype": torch.float16}, ValueError,
     r"out_dtype Half is not supported for Float inputs"),
    ([torch.randn(2, 3)], [torch.randn(3, 4)], {"schedule": "fast"}, ValueError,
     r"gemm: schedule must be one of auto, host, device; got 'fast'"),
])
def test_bad_inputs(a, b, kwargs, error, match):
    with pytest.raises(error, match=match):
        tg.gemm(a, b, **kwargs)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_mixed_devices():
    with pytest.raises(RuntimeError, match=r"b\[0\] is on cpu but a\[0\] is on cuda"):
        tg.gemm([torch.randn(2, 3, device="cuda")], [torch.randn(3, 4)])
