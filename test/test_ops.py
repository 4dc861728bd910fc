"""The shared checks of every op over its samples: correctness against a float64 reference (or
bit-exactness for the layout ops), gradcheck on CPU, gradients against PyTorch's, opcheck."""
import pytest
import torch
from torch.utils._pytree import tree_flatten

import reference
import torch_grouped as tg
from harness import HOPPER, check_gradcheck, check_gradients_match, check_opcheck
from op_table import OPS

EXACT_OPS = {"permute_copy", "layout_transform"}


def _sample_dtype_cases():
    for op in OPS:
        for dtype in op.dtypes:
            yield pytest.param(op, dtype, id=f"{op.name}-{str(dtype)[6:]}")


def _make(op, dtype, device, requires_grad=False):
    if dtype.is_floating_point or dtype.is_complex:
        return op.samples(dtype, device, requires_grad)
    # integer and bool inputs for the layout ops: random values of that dtype
    def convert(x):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return (x * 40).to(dtype) if dtype != torch.bool else x > 0
        return x
    return [type(s)(s.name, tuple(tree_map_list(convert, a) for a in s.args), s.kwargs)
            for s in op.samples(torch.float32, device)]


def tree_map_list(fn, x):
    return [fn(v) for v in x] if isinstance(x, list) else fn(x)


@pytest.mark.parametrize("op, dtype", list(_sample_dtype_cases()))
def test_matches_reference(op, dtype, device):
    for s in _make(op, dtype, device):
        out = op.api(*s.args, **s.kwargs)
        ref = op.ref(*s.args, **s.kwargs)
        outs, refs = tree_flatten(out)[0], tree_flatten(ref)[0]
        assert len(outs) == len(refs), s
        for o, r in zip(outs, refs):
            assert o.is_contiguous() and o.device.type == device, s
            if op.name in EXACT_OPS:
                assert o.dtype == r.dtype and o.shape == r.shape and torch.equal(o.cpu(), r.cpu()), s
            else:
                assert o.dtype == s.kwargs.get("out_dtype", dtype), s
                reference.assert_close(o, r, dtype)


@pytest.mark.parametrize("op", OPS, ids=str)
def test_gradcheck(op):
    for s in op.samples(torch.float64, "cpu", requires_grad=True):
        check_gradcheck(op.api, s)


@pytest.mark.parametrize("op", OPS, ids=str)
def test_gradients_match_pytorch(op, device):
    for s in op.samples(torch.float32, device, requires_grad=True):
        check_gradients_match(op.api, op.ref, s, torch.float32)


@pytest.mark.parametrize("op", OPS, ids=str)
def test_opcheck(op, device):
    for s in op.samples(torch.float32, device, requires_grad=True):
        check_opcheck(op.overload, s)


@pytest.mark.parametrize("op", OPS, ids=str)
def test_graph_recorded_only_where_a_gradient_flows(op, device):
    """The C++ autograd kernels call the op below autograd unless grad mode is on and some input
    requires grad (csrc/common/autograd_apply.h): no graph node then, and a node whenever a single
    tensor of the call, the last of a list included, requires grad."""
    def outputs(args, kwargs):
        return [t for t in tree_flatten(op.api(*args, **kwargs))[0] if isinstance(t, torch.Tensor)]

    for s in op.samples(torch.float32, device):
        args = [list(a) if isinstance(a, list) else a for a in s.args]
        assert all(o.grad_fn is None and not o.requires_grad for o in outputs(args, s.kwargs)), s
        floating = [t for t in tree_flatten(args)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
        if not floating:  # (no groups)
            continue
        floating[-1].requires_grad_(True)
        assert all(o.grad_fn is not None for o in outputs(args, s.kwargs)), s
        with torch.no_grad():
            assert all(o.grad_fn is None and not o.requires_grad for o in outputs(args, s.kwargs)), s


@pytest.mark.gpu
@pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU")
@pytest.mark.parametrize("name", ["gemm", "syr2k", "grouped_mm"])
def test_opcheck_on_the_hopper_kernels(name):
    """bf16 on Hopper takes the kernels (the fp32 samples above may take PyTorch's instead). The
    list ops' outputs lie in one allocation: each must still be a fresh tensor with a storage of
    its own, as the schema says. grouped_mm's offsets stay on the device: its fake kernel must
    give the kernel's shapes and strides without reading them."""
    op = next(o for o in OPS if o.name == name)
    for s in op.samples(torch.bfloat16, "cuda"):
        check_opcheck(op.overload, s)


@pytest.mark.gpu
@pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU")
def test_list_outputs_outlive_their_siblings():
    """Outputs sharing one allocation: distinct storages, and one output's values survive the
    others' deletion and the allocator's reuse of freed memory."""
    a = [torch.randn(n, 40, device="cuda", dtype=torch.bfloat16) for n in (64, 200, 129)]
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    out = tg.syr2k(a, a)
    assert len({o.untyped_storage().data_ptr() for o in out}) == 3
    assert all(o.untyped_storage().nbytes() == o.numel() * o.element_size() for o in out)
    middle, expected = out[1], out[1].clone()
    del out  # the other two outputs die
    torch.cuda.synchronize()
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # reuse of anything freed
    assert torch.equal(middle, expected)
    del middle, expected  # the last output dies: the allocation goes back
    assert torch.cuda.memory_allocated() == before
