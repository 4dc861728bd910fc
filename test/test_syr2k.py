import pytest
import torch
from hypothesis import given, settings, strategies as st

import reference
import torch_grouped as tg
from harness import HOPPER, kernels_launched


def _syr2k_composite(a, b, c, uplo, alpha, beta):
    """syr2k through torch ops, for autograd to differentiate: the `uplo` triangle of
    alpha·(A Bᵀ + B Aᵀ) + beta·c, mirrored."""
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        t = alpha * (x @ y.mT + y @ x.mT) + (beta * c[i] if c else 0)
        tri = t.tril() if uplo == "L" else t.triu()
        out.append(tri + tri.mT - torch.diag_embed(tri.diagonal()))
    return out


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("wanted", ["a", "b", "c", "a_and_c"])
def test_gradients_of_some_inputs_and_outputs(uplo, wanted):
    """Gradients only of the inputs that ask for them, with one output left out of the loss (its
    gradient counts as zeros): those of the composite of torch ops, float64."""
    g = torch.Generator().manual_seed(3)
    sizes = [(5, 3), (4, 2), (6, 4)]
    make = lambda shapes, grad: [torch.randn(*s, generator=g, dtype=torch.float64).requires_grad_(grad) for s in shapes]  # noqa: E731
    a = make(sizes, "a" in wanted)
    b = make(sizes, wanted == "b")
    c = make([(n, n) for n, _ in sizes], "c" in wanted)
    weights = [torch.randn(n, n, generator=g, dtype=torch.float64) for n, _ in sizes]
    leaves = [x for x in a + b + c if x.requires_grad]

    def grads(op):
        outs = op(a, b, c, uplo=uplo, alpha=0.75, beta=-1.5)
        loss = sum((o * w).sum() for o, w in zip(outs[1:], weights[1:]))  # output 0 left out
        return torch.autograd.grad(loss, leaves, allow_unused=True, materialize_grads=True)

    theirs = grads(lambda a, b, c, **kw: _syr2k_composite(a, b, c, kw["uplo"], kw["alpha"], kw["beta"]))
    for ours, ref in zip(grads(tg.syr2k), theirs, strict=True):
        torch.testing.assert_close(ours, ref)


def test_gradients_under_create_graph():
    """create_graph keeps syr2k's backward differentiable (its G + Gᵀ through ATen's add, not the
    private op, which has no derivative): second derivatives of a loss quadratic in the output, so
    that G itself depends on A and B and the second pass differentiates through G + Gᵀ, against the
    composite's, float64."""
    g = torch.Generator().manual_seed(5)
    a = torch.randn(6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, 6, generator=g, dtype=torch.float64)

    def second(op):
        out = op([a], [b], [], uplo="L", alpha=0.5, beta=0.0)[0]
        (da,) = torch.autograd.grad((out.square() * w).sum(), [a], create_graph=True)  # G = 2·out·w
        return torch.autograd.grad(da.square().sum(), [a, b])

    theirs = second(lambda a, b, c, **kw: _syr2k_composite(a, b, c, kw["uplo"], kw["alpha"], kw["beta"]))
    for ours, ref in zip(second(tg.syr2k), theirs, strict=True):
        torch.testing.assert_close(ours, ref)


SYMMETRIC_SUM_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", SYMMETRIC_SUM_DTYPES)
def test_symmetric_sum(dtype, device):
    """grouped::_symmetric_sum (syr2k's backward H = G + Gᵀ): bit for bit ATen's g + g.mT(), so
    exactly symmetric, for orders across the GPU kernel's 32 x 32 tiles, one call for all; a
    transposed view, an empty matrix and a group of another dtype through ATen; outputs contiguous.
    Freed memory is poisoned first, so an element the kernel leaves unwritten shows."""
    g = torch.Generator().manual_seed(1)
    mats = [torch.randn(n, n, generator=g).to(device, dtype) for n in (1, 31, 32, 33, 100, 257)]
    mats += [torch.randn(40, 40, generator=g).to(device, dtype).mT, torch.empty(0, 0, device=device, dtype=dtype),
             torch.randn(50, 50, generator=g).to(device, torch.float32 if dtype != torch.float32 else torch.float64)]
    torch.empty(1 << 22, device=device).fill_(float("nan"))  # freed: what the outputs reuse
    for x, h in zip(mats, torch.ops.grouped._symmetric_sum(mats), strict=True):
        assert h.dtype == x.dtype and h.is_contiguous() and torch.equal(h, x + x.mT)
        assert torch.equal(h, h.mT)


@pytest.mark.gpu
@pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU and a CUDA build")
def test_symmetric_sum_takes_its_kernel():
    """One launch of the tiled kernel for a call's groups of one dtype, and syr2k's backward uses it."""
    g = [torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for n in (300, 64, 1000)]
    names = kernels_launched(lambda: torch.ops.grouped._symmetric_sum(g))
    assert sum("symmetric_sum_kernel" in x for x in names) == 1, names
    a = torch.randn(300, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out = tg.syr2k([a], [a.detach().clone().requires_grad_()])[0]
    names = kernels_launched(lambda: torch.autograd.grad(out, a, g[0]))
    assert sum("symmetric_sum_kernel" in x for x in names) == 1, names


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("odd_start", [False, True])
def test_symmetric_sum_of_even_orders(dtype, odd_start, device):
    """Even orders only: on the GPU the 16-bit pairs in 64-wide tiles, unless a matrix starts off
    the 4-byte grid (a contiguous view one element in), which takes single elements for the call."""
    g = torch.Generator().manual_seed(2)
    mats = [torch.randn(n, n, generator=g).to(device, dtype) for n in (2, 30, 64, 66, 100, 130, 258)]
    if odd_start:
        mats.append(torch.randn(36 * 36 + 1, generator=g).to(device, dtype)[1:].view(36, 36))
    torch.empty(1 << 22, device=device).fill_(float("nan"))  # freed: what the outputs reuse
    for x, h in zip(mats, torch.ops.grouped._symmetric_sum(mats), strict=True):
        assert torch.equal(h, x + x.mT) and torch.equal(h, h.mT)


def test_symmetric_sum_checks_its_input(device):
    with pytest.raises(RuntimeError, match="must be a square matrix"):
        torch.ops.grouped._symmetric_sum([torch.randn(3, 3, device=device), torch.randn(3, 4, device=device)])


def test_symmetric_sum_opcheck(device):
    torch.library.opcheck(torch.ops.grouped._symmetric_sum.default,
                          ([torch.randn(33, 33, device=device), torch.randn(5, 5, device=device)],))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_output_is_exactly_symmetric(dtype, uplo, device):
    a = [torch.randn(n, 11, dtype=dtype, device=device) for n in (1, 64, 97, 200)]
    b = [torch.randn_like(x) for x in a]
    c = [torch.randn(x.shape[0], x.shape[0], dtype=dtype, device=device) for x in a]
    for out in tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0):
        assert torch.equal(out, out.T)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_reads_only_the_uplo_triangle_of_c(uplo, device):
    a, b = torch.randn(70, 5, device=device), torch.randn(70, 5, device=device)
    c = torch.randn(70, 70, device=device)
    poisoned = c.clone()
    other = torch.ones(70, 70, dtype=torch.bool, device=device).triu(1)
    poisoned[other if uplo == "L" else other.T] = float("nan")
    clean = tg.syr2k([a], [b], [c], uplo=uplo, beta=1.0)[0]
    dirty = tg.syr2k([a], [b], [poisoned], uplo=uplo, beta=1.0)[0]
    assert not dirty.isnan().any() and torch.equal(clean, dirty)


def test_beta_zero_ignores_c():
    a, b = torch.randn(20, 3), torch.randn(20, 3)
    c = torch.full((20, 20), float("nan"))
    assert not tg.syr2k([a], [b], [c], beta=0.0)[0].isnan().any()


@settings(max_examples=20, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(0, 150), st.integers(0, 20)), min_size=1, max_size=4),
       uplo=st.sampled_from(["L", "U"]), alpha=st.floats(-2, 2), beta=st.floats(-2, 2),
       with_c=st.booleans())
def test_property_random_groups(sizes, uplo, alpha, beta, with_c):
    a = [torch.randn(n, k, dtype=torch.float64) for n, k in sizes]
    b = [torch.randn(n, k, dtype=torch.float64) for n, k in sizes]
    c = [torch.randn(n, n, dtype=torch.float64) for n, _ in sizes] if with_c else []
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=alpha, beta=beta)
    for o, r in zip(out, reference.syr2k(a, b, c, uplo, alpha, beta)):
        reference.assert_close(o, r, torch.float64)


@pytest.mark.parametrize("a, b, c, kwargs, error, match", [
    ([torch.randn(4, 2)], [torch.randn(4, 2)], [], {"uplo": "X"}, ValueError, r"uplo must be 'L' or 'U', got 'X'"),
    ([torch.randn(4, 2)], [torch.randn(4, 3)], [], {}, RuntimeError, r"group 0: b\[0\] is \[4, 3\]; expected the shape"),
    ([torch.randn(4, 2)], [torch.randn(4, 2)], [torch.randn(4, 5)], {}, RuntimeError,
     r"group 0: c\[0\] is \[4, 5\]; expected \[4, 4\]"),
    ([torch.randn(4, 2)], [torch.randn(4, 2)], [torch.randn(4, 4)] * 2, {}, ValueError,
     r"c has 2 tensors; expected none or one per group = 1"),
    ([torch.randn(4, 2)], [], [], {}, ValueError, r"a has 1 tensors but b has 0"),
    ([torch.randn(4)], [torch.randn(4)], [], {}, RuntimeError, r"a\[0\] must be 2-D \[N, K\]"),
    ([torch.ones(4, 2, dtype=torch.int64)], [torch.ones(4, 2, dtype=torch.int64)], [], {}, RuntimeError,
     r"a\[0\] has dtype Long; expected one of"),
    ([torch.randn(4, 2)], [torch.randn(4, 2)], [torch.randn(4, 4, dtype=torch.float64)], {}, RuntimeError,
     r"c\[0\] has dtype Double but a\[0\] has Float"),
    ([torch.randn(4, 3)], [torch.randn(4, 3, dtype=torch.float64)], [], {}, RuntimeError,
     r"b\[0\] has dtype Double but a\[0\] has Float; expected the same dtype"),
    ([torch.randn(4, 3), torch.randn(4, 3, dtype=torch.float64)], [torch.randn(4, 3), torch.randn(4, 3, dtype=torch.float64)],
     [], {}, RuntimeError, r"a\[1\] has dtype Double but a\[0\] has Float; expected the same dtype"),
    ([torch.randn(4, 3)], [torch.randn(4, 3)], [torch.randn(4)], {}, RuntimeError, r"group 0: c\[0\] is \[4\]; expected \[4, 4\]"),
])
def test_bad_inputs(a, b, c, kwargs, error, match):
    with pytest.raises(error, match=match):
        tg.syr2k(a, b, c, **kwargs)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_gpu_large_fp32_fp64_groups(dtype, uplo, monkeypatch):
    """fp64 (cuBLAS forced: lists this small take the DMMA kernel otherwise, test_f64_kernel.py; and
    fp32 off Hopper or without the CUDA kernels): orders >= 1024 run cuBLAS ?syr2k and the mirror
    kernel (order 1100: partial 32-wide mirror tiles), smaller ones two addmm and the mirror kernel,
    in one call; fp32 on Hopper the TF32 Rank2K kernel (test_syr2k_tf32.py); transposed operands,
    c with beta: the reference, exactly symmetric, every element written."""
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "0")
    g = torch.Generator().manual_seed(5)
    sizes = [(1100, 70), (300, 40), (1024, 1)]
    a = [torch.randn(n, k, generator=g, dtype=dtype).cuda() for n, k in sizes]
    b = [torch.randn(k, n, generator=g, dtype=dtype).cuda().T for n, k in sizes]  # column-major views
    c = [torch.randn(n, n, generator=g, dtype=dtype).cuda() for n, _ in sizes]
    torch.empty(1 << 25, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=0.75, beta=-1.5)
    for o, r in zip(out, reference.syr2k(a, b, c, uplo, 0.75, -1.5)):
        assert not o.isnan().any(), "unwritten elements"
        assert torch.equal(o, o.T)
        reference.assert_close(o, r, dtype)
