"""Float64 references, written independently of the implementations, and the error measure."""
import torch

from torch_grouped import _layout

# ‖out − ref‖ / ‖ref‖ allowed per input dtype (fp32 on the GPU may use TF32 when enabled).
TOLERANCE = {torch.float64: 1e-12, torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
# fp32 on the TF32 kernels: 3xTF32 keeps about fp32's accuracy (hi·lo products exact, lo rounded to
# TF32: ~2^-22 per product); one TF32 pass (torch's allow_tf32) loses ~2^-11 per operand.
TF32_SPLIT_TOLERANCE = 2e-6
TF32_TOLERANCE = 5e-3


def rel_error(out, ref):
    out, ref = out.double().cpu(), ref.double().cpu()
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert not out.isnan().any(), "NaN in the output"
    if ref.numel() == 0:
        return 0.0
    # The floor (an RMS of 0.1 per element; test inputs are standard normal, so results are of
    # order 1 or more) keeps a nearly cancelled result, such as a 1x1 syr2k of a 3-term dot
    # product, from turning rounding noise into a huge ratio.
    denom = max(ref.norm().item(), 0.1 * ref.numel() ** 0.5)
    return (out - ref).norm().item() / denom


def assert_close(out, ref, dtype):
    err = rel_error(out, ref)
    assert err <= TOLERANCE[dtype], f"relative error {err:.3g} > {TOLERANCE[dtype]:.3g} for {dtype}"


def gemm(a, b):
    return [x.double() @ y.double() for x, y in zip(a, b)]


def grouped_mm(a, b, offs):
    a, b = a.double(), b.double()
    if offs is None:
        return a @ b
    ends = offs.tolist()
    starts = [0] + ends[:-1]
    if a.dim() == 2 and b.dim() == 3:
        out = torch.zeros(a.shape[0], b.shape[2], dtype=torch.float64, device=a.device)
        for g, (s, e) in enumerate(zip(starts, ends)):
            out[s:e] = a[s:e] @ b[g]
    elif a.dim() == 3:
        out = torch.zeros(a.shape[1], b.shape[1], dtype=torch.float64, device=a.device)
        for g, (s, e) in enumerate(zip(starts, ends)):
            out[:, s:e] = a[g] @ b[:, s:e]
    else:
        out = torch.zeros(len(ends), a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
        for g, (s, e) in enumerate(zip(starts, ends)):
            out[g] = a[:, s:e] @ b[s:e]
    return out


def syr2k(a, b, c, uplo, alpha, beta):
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = x.double(), y.double()
        r = alpha * (x @ y.T + y @ x.T)
        if c and beta != 0:
            ci = c[i].double()
            tri = ci.tril() if uplo == "L" else ci.triu()
            r = r + beta * (tri + tri.T - torch.diag_embed(ci.diagonal()))
        out.append(r)
    return out


def layout_transform(x, src, dst):
    """Element by element: out[idx] = x[source of idx], or 0 where idx lies in the padding."""
    ext = _layout.extents(x.shape, src)
    shape = _layout.out_sizes(x.shape, src, dst)
    dst_axes, src_axes = _layout.parse(dst), _layout.parse(src)
    dst_f = {a: f for a, f in dst_axes if f}
    src_f = {a: f for a, f in src_axes if f}
    grids = torch.meshgrid(*[torch.arange(s, device=x.device) for s in shape], indexing="ij")
    logical = {}
    for g, (a, f) in zip(grids, dst_axes):
        logical[a] = logical.get(a, 0) + (g if f else g * dst_f.get(a, 1))
    valid = torch.ones(shape, dtype=torch.bool, device=x.device)
    for a, v in logical.items():
        valid &= v < ext[a]
    index = []
    for a, f in src_axes:
        v = torch.where(valid, logical[a], 0)
        index.append(v % f if f else v // src_f.get(a, 1))
    return torch.where(valid, x[tuple(index)], torch.zeros((), dtype=x.dtype, device=x.device))
