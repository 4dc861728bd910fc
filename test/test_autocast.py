"""The matmul ops under torch.autocast (csrc/common/autocast.cpp): the same results, bit for bit,
as the op called on inputs cast by hand; gradients that reach fp32 leaves in fp32; fp64 inputs,
out_dtype and the layout ops left alone; mixed bf16 / fp32 inputs accepted only under autocast;
and a compiled MoE layer under autocast as eager runs it (each op compiled under autocast:
test_compile.py)."""
import pytest
import torch
from torch.utils._pytree import tree_flatten, tree_map

import torch_grouped as tg
from op_table import OPS
from test_compile import MoE

MATMUL_OPS = [op for op in OPS if op.name in ("gemm", "grouped_mm", "syr2k", "streamk_mm")]
LAYOUT_OPS = [op for op in OPS if op not in MATMUL_OPS]
AUTOCAST_DTYPES = [torch.bfloat16, torch.float16]


def _cast(args, dtype):
    return tree_map(lambda x: x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x, args)


def _autocast_works(device, dtype):
    """Whether torch's own mm autocasts to `dtype` on `device` (the policy ours follows)."""
    x = torch.randn(2, 2, device=device)
    with torch.autocast(device, dtype=dtype):
        return (x @ x).dtype == dtype


@pytest.mark.parametrize("dtype", AUTOCAST_DTYPES, ids=str)
@pytest.mark.parametrize("op", MATMUL_OPS, ids=str)
def test_fp32_inputs_run_as_if_cast_by_hand(op, dtype, device):
    if not _autocast_works(device, dtype):
        pytest.skip(f"torch does not autocast to {dtype} on {device}")
    for s in op.samples(torch.float32, device):
        with torch.autocast(device, dtype=dtype):
            out = op.api(*s.args, **s.kwargs)
        expected = op.api(*_cast(s.args, dtype), **s.kwargs)
        outs, refs = tree_flatten(out)[0], tree_flatten(expected)[0]
        assert len(outs) == len(refs), s
        for o, r in zip(outs, refs):
            assert o.dtype == dtype, s
            assert torch.equal(o, r), s


@pytest.mark.parametrize("op", MATMUL_OPS, ids=str)
def test_gradients_reach_fp32_leaves_through_the_cast(op, device):
    dtype = torch.bfloat16
    if not _autocast_works(device, dtype):
        pytest.skip(f"torch does not autocast to {dtype} on {device}")
    for s in op.samples(torch.float32, device, requires_grad=True):
        leaves = [x for x in tree_flatten(s.args)[0] if isinstance(x, torch.Tensor) and x.requires_grad]
        if not leaves:
            continue

        def grads(run):
            out = [o for o in tree_flatten(run())[0] if o.numel()]
            if not out:
                return None
            weights = [torch.randn(o.shape, generator=torch.Generator().manual_seed(i)).to(o) for i, o in enumerate(out)]
            return torch.autograd.grad(sum((o * w).sum() for o, w in zip(out, weights)), leaves, allow_unused=True)

        def under_autocast():
            with torch.autocast(device, dtype=dtype):
                return op.api(*s.args, **s.kwargs)

        got, expected = grads(under_autocast), grads(lambda: op.api(*_cast(s.args, dtype), **s.kwargs))
        if got is None:
            continue
        for leaf, g, e in zip(leaves, got, expected):
            assert (g is None) == (e is None), s
            if g is not None:
                assert g.dtype == leaf.dtype == torch.float32, s
                assert torch.equal(g, e), s


def test_fp64_inputs_and_out_dtype_are_kept(device):
    a, b = torch.randn(9, 7, device=device, dtype=torch.float64), torch.randn(7, 5, device=device, dtype=torch.float64)
    x, w = torch.randn(12, 8, device=device), torch.randn(3, 8, 4, device=device)
    offs = torch.tensor([4, 4, 12], dtype=torch.int32, device=device)
    with torch.autocast(device, dtype=torch.bfloat16):
        assert tg.gemm([a], [b])[0].dtype == torch.float64
        assert tg.streamk_mm(a, b).dtype == torch.float64
        kept = tg.grouped_mm(x, w, offs, out_dtype=torch.float32)
    assert kept.dtype == torch.float32
    assert torch.equal(kept, tg.grouped_mm(x.bfloat16(), w.bfloat16(), offs, out_dtype=torch.float32))


@pytest.mark.parametrize("op", LAYOUT_OPS, ids=str)
def test_layout_ops_are_left_alone(op, device):
    for s in op.samples(torch.float32, device):
        with torch.autocast(device, dtype=torch.bfloat16):
            out = op.api(*s.args, **s.kwargs)
        assert out.dtype == torch.float32 and torch.equal(out, op.api(*s.args, **s.kwargs)), s


def test_mixed_activations_and_weights(device):
    """bf16 activations (an autocast Linear's output) against fp32 expert weights: an error
    without autocast, the bf16 product under it."""
    x = torch.randn(10, 8, device=device, dtype=torch.bfloat16)
    w = torch.randn(2, 8, 6, device=device, requires_grad=True)
    offs = torch.tensor([3, 10], dtype=torch.int32, device=device)
    with pytest.raises((RuntimeError, ValueError, TypeError), match="dtype"):
        tg.grouped_mm(x, w, offs)
    with torch.autocast(device, dtype=torch.bfloat16):
        out = tg.grouped_mm(x, w, offs)
    assert out.dtype == torch.bfloat16
    assert torch.equal(out, tg.grouped_mm(x, w.detach().bfloat16(), offs))
    out.float().sum().backward()
    assert w.grad.dtype == torch.float32 and w.grad.abs().sum() > 0


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_moe_layer_under_autocast_compiles(backend, device):
    """The fp32 MoE layer of test_compile.py under bf16 autocast: compiled with dynamic shapes and
    fullgraph, the same output (bf16) and fp32 weight gradients as eager autocast."""
    torch._dynamo.reset()
    torch.manual_seed(1)
    model = MoE(4, 16, 32).to(device)
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=backend)
    for tokens in (24, 37):
        x = torch.randn(tokens, 16, device=device)
        results = []
        for run in (model, compiled):
            with torch.autocast(device, dtype=torch.bfloat16):
                out = run(x)
            out.float().square().sum().backward()
            results.append((out, [p.grad.clone() for p in (model.w1, model.w2)]))
            model.zero_grad()
        (eager_out, eager_grads), (out, grads) = results
        assert out.dtype == torch.bfloat16
        torch.testing.assert_close(out, eager_out)
        for g, e in zip(grads, eager_grads):
            assert g.dtype == torch.float32
            torch.testing.assert_close(g, e)
    torch._dynamo.reset()
