import pytest
import torch
from hypothesis import given, settings, strategies as st

import reference
import torch_grouped as tg


def routed_offsets(tokens, experts, top_k, generator):
    """Group ends from a random top-k routing, as an MoE layer would produce them."""
    choice = torch.rand(tokens, experts, generator=generator).topk(top_k, dim=1).indices.flatten()
    counts = torch.bincount(choice, minlength=experts)
    return counts.cumsum(0).to(torch.int32)


@settings(max_examples=20, deadline=None)
@given(tokens=st.integers(0, 40), experts=st.integers(1, 6), top_k=st.integers(1, 2),
       k=st.integers(0, 12), n=st.integers(1, 12), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([torch.float64, torch.float32, torch.bfloat16]))
def test_property_routed_2d_3d(tokens, experts, top_k, k, n, seed, dtype):
    top_k = min(top_k, experts)
    g = torch.Generator().manual_seed(seed)
    offs = routed_offsets(tokens, experts, top_k, g)
    a = torch.randn(tokens * top_k, k, generator=g).to(dtype)
    b = torch.randn(experts, k, n, generator=g).to(dtype)
    reference.assert_close(tg.grouped_mm(a, b, offs), reference.grouped_mm(a, b, offs), dtype)


@pytest.mark.parametrize("form", ["2d_3d", "3d_2d", "2d_2d"])
def test_rows_past_last_offset_are_zero(form, device):
    offs = torch.tensor([2, 5], dtype=torch.int32, device=device)
    if form == "2d_3d":
        out = tg.grouped_mm(torch.randn(9, 4, device=device), torch.randn(2, 4, 3, device=device), offs)
        tail = out[5:]
    elif form == "3d_2d":
        out = tg.grouped_mm(torch.randn(2, 4, 3, device=device), torch.randn(3, 8, device=device), offs)
        tail = out[:, 5:]
    else:  # K past the last offset contributes nothing; the groups hold only their slices
        a, b = torch.randn(3, 8, device=device), torch.randn(8, 4, device=device)
        out = tg.grouped_mm(a, b, offs)
        tail = out[1] - a[:, 2:5] @ b[2:5]
    assert torch.all(tail.abs() < 1e-5)


def test_gradient_of_expert_without_rows_is_zero():
    a = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    offs = torch.tensor([3, 3, 6], dtype=torch.int32)
    tg.grouped_mm(a, b, offs).sum().backward()
    assert torch.equal(b.grad[1], torch.zeros(4, 5, dtype=torch.float64))


def test_gradient_of_group_without_columns_is_zero():
    """The 3-D x 2-D form (columns of b grouped by offs): a group given no columns gets a zero
    gradient in a, as an expert given no rows does in b."""
    a = torch.randn(3, 6, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    offs = torch.tensor([2, 2, 5], dtype=torch.int32)
    tg.grouped_mm(a, b, offs).sum().backward()
    assert torch.equal(a.grad[1], torch.zeros(6, 4, dtype=torch.float64))
    assert a.grad[0].abs().sum() > 0 and a.grad[2].abs().sum() > 0


def _i32(*v):
    return torch.tensor(v, dtype=torch.int32)


@pytest.mark.parametrize("a, b, offs, error, match", [
    (torch.randn(6, 4), torch.randn(2, 4, 3), torch.tensor([3, 6]), RuntimeError,
     r"offs has dtype Long; expected Int"),
    (torch.randn(6, 4), torch.randn(2, 4, 3), _i32(3, 6, 6), RuntimeError,
     r"offs has 3 entries; expected one per group = 2"),
    (torch.randn(6, 4), torch.randn(2, 4, 3), _i32(4, 2), ValueError, r"offs must be non-decreasing"),
    (torch.randn(6, 4), torch.randn(2, 4, 3), _i32(3, 7), ValueError, r"offs\[1\] = 7 exceeds a.size\(0\) = 6"),
    (torch.randn(6, 4), torch.randn(2, 4, 3), None, ValueError, r"offs is required when a is 2-D and b is 3-D"),
    (torch.randn(2, 6, 4), torch.randn(2, 4, 3), _i32(1, 2), ValueError, r"offs must be None"),
    (torch.randn(6, 5), torch.randn(2, 4, 3), _i32(3, 6), RuntimeError, r"b.size\(-2\) must equal a.size\(-1\) = 5"),
    (torch.randn(6), torch.randn(2, 4, 3), _i32(3, 6), RuntimeError, r"a and b must be 2-D or 3-D"),
    (torch.randn(6, 4), torch.randn(2, 4, 3, dtype=torch.float64), _i32(3, 6), RuntimeError,
     r"b has dtype Double but a has Float"),
    (torch.randn(6, 4), torch.randn(2, 4, 3), _i32(3, 6).reshape(1, 2), RuntimeError, r"offs must be 1-D"),
    (torch.randn(6, 4), torch.randn(2, 4, 3), _i32(-1, 6), ValueError,
     r"offs must be non-decreasing and start at >= 0, got offs\[0\] = -1"),
    (torch.randn(2, 4, 8), torch.randn(3, 8, 5), None, RuntimeError,
     r"b.size\(0\) must equal the group count a.size\(0\) = 2"),
    (torch.randn(4, 8), torch.randn(8, 5), None, ValueError, r"offs is required when a is 2-D and b is 2-D"),
    (torch.randn(4, 8), torch.randn(8, 5), _i32(4, 9), ValueError, r"offs\[1\] = 9 exceeds a.size\(1\) = 8"),
    (torch.randn(2, 4, 8), torch.randn(8, 5), _i32(3, 6), ValueError, r"offs\[1\] = 6 exceeds b.size\(1\) = 5"),
    (torch.ones(6, 4, dtype=torch.int32), torch.ones(2, 4, 3, dtype=torch.int32), _i32(3, 6), RuntimeError,
     r"a has dtype Int; expected one of Half, BFloat16, Float, Double"),
])
def test_bad_inputs(a, b, offs, error, match):
    with pytest.raises(error, match=match):
        tg.grouped_mm(a, b, offs)


def test_out_dtype_other_than_the_inputs_or_fp32_is_refused():
    with pytest.raises(ValueError, match=r"out_dtype Half is not supported for Float inputs; expected Float"):
        tg.grouped_mm(torch.randn(6, 4), torch.randn(2, 4, 3), _i32(3, 6), out_dtype=torch.float16)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_offsets_on_another_device():
    with pytest.raises(RuntimeError, match=r"offs is on cpu but a is on cuda"):
        tg.grouped_mm(torch.randn(6, 4, device="cuda"), torch.randn(2, 4, 3, device="cuda"), _i32(3, 6))
