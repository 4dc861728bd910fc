"""permute_copy and layout_transform against permute().contiguous(), the cases of ANCHORS.md."""
import os

import torch

import torch_grouped as tg
from common import Case, on_gpu

ANCHOR_CASES = [((1, 384, 512, 128), (0, 3, 1, 2)), ((1, 128, 384, 512), (0, 2, 3, 1)),
                ((1, 576, 384, 256), (0, 3, 1, 2)), ((2, 72, 48, 960), (0, 3, 1, 2)),
                ((16, 3456, 3456), (0, 2, 1)), ((2048, 1024), (1, 0)), ((3, 1024, 1024, 7), (3, 1, 2, 0)),
                ((1024, 2, 32, 8), (3, 2, 0, 1)), ((64, 64, 64, 64), (3, 2, 1, 0)), ((8192, 8192), (1, 0)),
                ((32, 1024, 1024), (1, 0, 2))]
VARIANTS = [((1, 384, 512, 128), (0, 3, 1, 2), dt) for dt in (torch.float32, torch.bfloat16, torch.int8)]
VARIANTS += [((8192, 8192), (1, 0), torch.float32), ((64, 64, 64, 64), (3, 2, 1, 0), torch.int8)]
SMALL = [((32, 48), (1, 0)), ((4, 16, 16, 8), (0, 3, 1, 2)), ((7, 5, 3), (2, 0, 1))]
LAYOUTS = [((8, 64, 56, 56), "NCHW", "NCHW4c"), ((8, 16, 56, 56, 4), "NCHW4c", "NCHW"),
           ((8, 8, 56, 56, 8), "NCHW8c", "NHWC"), ((8, 62, 56, 56), "NCHW", "NCHW8c")]
CPU_CASES = [((64, 96, 32), (2, 0, 1)), ((256, 128), (1, 0)), ((8, 16, 24, 10), (0, 3, 1, 2))]


def _random(shape, dtype, device):
    x = torch.randn(shape, device=device)
    return (x * 40).to(dtype) if not dtype.is_floating_point else x.to(dtype)


def _composite_layout(x, src, dst):
    """What a user writes for these layout changes: pad, reshape, permute, contiguous."""
    if (src, dst) == ("NCHW", "NCHW4c") or (src, dst) == ("NCHW", "NCHW8c"):
        f = int(dst[4:-1])
        n, c, h, w = x.shape
        pad = (-c) % f
        if pad:
            x = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, pad))
        return x.reshape(n, (c + pad) // f, f, h, w).permute(0, 1, 3, 4, 2).contiguous()
    if (src, dst) == ("NCHW4c", "NCHW"):
        n, co, h, w, ci = x.shape
        return x.permute(0, 1, 4, 2, 3).reshape(n, co * ci, h, w).contiguous()
    if (src, dst) == ("NCHW8c", "NHWC"):
        n, co, h, w, ci = x.shape
        return x.permute(0, 2, 3, 1, 4).reshape(n, h, w, co * ci).contiguous()
    raise ValueError((src, dst))


# Kernel variants measured as extra peers of every GPU permute case (TORCH_GROUPED_PERMUTE_KERNEL,
# read on every call); "ours" is the default choice.
KERNEL_VARIANTS = ["tile2d", "tma", "next"]


def _with_kernel(variant, fn):
    def run():
        old = os.environ.get("TORCH_GROUPED_PERMUTE_KERNEL")
        os.environ["TORCH_GROUPED_PERMUTE_KERNEL"] = variant
        try:
            return fn()
        finally:
            if old is None:
                del os.environ["TORCH_GROUPED_PERMUTE_KERNEL"]
            else:
                os.environ["TORCH_GROUPED_PERMUTE_KERNEL"] = old
    return run


def _permute_case(shape, perm, dtype, device, name=None):
    x = _random(shape, dtype, device)
    nbytes = 2.0 * x.numel() * x.element_size()
    peers = {"permute().contiguous()": lambda: x.permute(perm).contiguous()}
    if on_gpu(device):
        for variant in KERNEL_VARIANTS:
            fn = _with_kernel(variant, lambda: tg.permute_copy(x, perm))
            # an extra peer is timed, not checked by run.py: check it here, once (a wrong result
            # is named in the peer's label rather than stopping the run)
            ok = torch.equal(fn(), x.permute(perm).contiguous())
            peers[f"kernel={variant}" + ("" if ok else " WRONG RESULT")] = fn
    return Case("permute_copy", name or f"{tuple(shape)}->{tuple(perm)}", dtype,
                lambda: tg.permute_copy(x, perm), peers, nbytes, "copy", 0.0, exact=True)


def cases(device):
    if not on_gpu(device):
        for shape, perm in CPU_CASES:
            yield _permute_case(shape, perm, torch.float32, device)
        yield from _layout_cases([((2, 16, 14, 14), "NCHW", "NCHW4c"), ((2, 8, 14, 14, 8), "NCHW8c", "NHWC")],
                                 torch.float32, device)
        return
    for shape, perm in ANCHOR_CASES:
        yield _permute_case(shape, perm, torch.float16, device)
    for shape, perm, dtype in VARIANTS:
        yield _permute_case(shape, perm, dtype, device)
    for shape, perm in SMALL:
        yield _permute_case(shape, perm, torch.float16, device, f"small {tuple(shape)}->{tuple(perm)}")
    yield from _layout_cases(LAYOUTS, torch.float16, device)


def _layout_cases(layouts, dtype, device):
    for shape, src, dst in layouts:
        x = _random(shape, dtype, device)
        out_numel = tg.layout_transform(x, src, dst).numel()
        yield Case("layout_transform", f"{tuple(shape)} {src}->{dst}", dtype,
                   lambda x=x, src=src, dst=dst: tg.layout_transform(x, src, dst),
                   {"reshape/pad/permute": lambda x=x, src=src, dst=dst: _composite_layout(x, src, dst),
                    **({f"kernel={v}": _with_kernel(v, lambda x=x, src=src, dst=dst: tg.layout_transform(x, src, dst))
                        for v in KERNEL_VARIANTS} if on_gpu(device) else {})},
                   float((x.numel() + out_numel) * x.element_size()), "copy", 0.0, exact=True)
