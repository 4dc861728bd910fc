"""Autograd of syr2k and the layout ops (the matmul ops' is C++: csrc/common/matmul_autograd.cpp);
each backward calls torch.ops.grouped.* again."""
import torch

_ops = torch.ops.grouped


def _grad_or_zeros(g, like_shape, like):
    # An output that took no part in the loss has no gradient; treat it as zeros.
    return g.to(like.dtype) if g is not None else like.new_zeros(like_shape)


# syr2k: the output keeps the `uplo` triangle of T = alpha(ABᵀ + BAᵀ) + beta·c and mirrors it, so
# dT = the `uplo` triangle of G + Gᵀ (diagonal G_ii); then dA = alpha(G + Gᵀ)B, dB = alpha(G + Gᵀ)A,
# dc = beta·dT.
def _fold_grad(g, uplo):
    folded = g + g.mT - torch.diag_embed(torch.diagonal(g))
    return folded.tril() if uplo == "L" else folded.triu()


def _syr2k_setup(ctx, inputs, keyword_only_inputs, output):
    a, b, c = inputs[0], inputs[1], inputs[2]
    ctx.groups, ctx.has_c = len(a), len(c) > 0
    ctx.uplo = keyword_only_inputs["uplo"]
    ctx.alpha, ctx.beta = keyword_only_inputs["alpha"], keyword_only_inputs["beta"]
    ctx.save_for_backward(*a, *b)


def _syr2k_backward(ctx, grads):
    saved = ctx.saved_tensors
    a, b = saved[: ctx.groups], saved[ctx.groups:]
    g = [_grad_or_zeros(gi, (ai.shape[0], ai.shape[0]), ai) for gi, ai in zip(grads, a)]
    h = [gi + gi.mT for gi in g]
    both = _ops.gemm(h + h, list(b) + list(a))
    da = [x * ctx.alpha for x in both[: ctx.groups]]
    db = [x * ctx.alpha for x in both[ctx.groups:]]
    dc = [_fold_grad(gi, ctx.uplo) * ctx.beta for gi in g] if ctx.has_c else []
    return da, db, dc


def _permute_setup(ctx, inputs, output):
    x, dims = inputs
    rank = x.dim()
    inverse = [0] * rank
    for i, d in enumerate(dims):
        inverse[d % rank] = i
    ctx.inverse = inverse


def _permute_backward(ctx, grad):
    return _ops.permute_copy(grad, ctx.inverse), None


# layout_transform: the inverse transform, cropped to x's shape where the forward zero-padded.
def _layout_setup(ctx, inputs, output):
    x, ctx.src, ctx.dst = inputs
    ctx.shape = x.shape


def _layout_backward(ctx, grad):
    back = _ops.layout_transform(grad, ctx.dst, ctx.src)
    for dim, size in enumerate(ctx.shape):
        if back.shape[dim] != size:
            back = back.narrow(dim, 0, size)
    return back, None, None


torch.library.register_autograd("grouped::syr2k", _syr2k_backward, setup_context=_syr2k_setup)
torch.library.register_autograd("grouped::permute_copy", _permute_backward, setup_context=_permute_setup)
torch.library.register_autograd("grouped::layout_transform", _layout_backward, setup_context=_layout_setup)
