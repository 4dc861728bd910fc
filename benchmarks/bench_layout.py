"""permute_copy and layout_transform against permute().contiguous(), the cases of ANCHORS.md."""
import os

import torch

import torch_grouped as tg
from common import Case, geomean, on_gpu, report_targets, work_of

ANCHOR_CASES = [((1, 384, 512, 128), (0, 3, 1, 2)), ((1, 128, 384, 512), (0, 2, 3, 1)),
                ((1, 576, 384, 256), (0, 3, 1, 2)), ((2, 72, 48, 960), (0, 3, 1, 2)),
                ((16, 3456, 3456), (0, 2, 1)), ((2048, 1024), (1, 0)), ((3, 1024, 1024, 7), (3, 1, 2, 0)),
                ((1024, 2, 32, 8), (3, 2, 0, 1)), ((64, 64, 64, 64), (3, 2, 1, 0)), ((8192, 8192), (1, 0)),
                ((32, 1024, 1024), (1, 0, 2))]
VARIANTS = [((1, 384, 512, 128), (0, 3, 1, 2), dt) for dt in (torch.float32, torch.bfloat16, torch.int8)]
VARIANTS += [((8192, 8192), (1, 0), torch.float32), ((64, 64, 64, 64), (3, 2, 1, 0), torch.int8)]
# Images with three channels, NCHW <-> NHWC (the short axis does not divide a 16-byte vector)
VARIANTS += [((64, 3, 224, 224), (0, 2, 3, 1), torch.float16), ((64, 224, 224, 3), (0, 3, 1, 2), torch.float16),
             ((64, 3, 224, 224), (0, 2, 3, 1), torch.uint8)]
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


# Kernel variants measured as extra peers of every GPU case (TORCH_GROUPED_PERMUTE_KERNEL, read on
# every call); "ours" is the choice in the environment at start (normally the default, "").
KERNEL_VARIANTS = ["legacy", "tile2d", "tma"]
_KNOB = "TORCH_GROUPED_PERMUTE_KERNEL"
_OURS = os.environ.get(_KNOB, "")


def _with_kernel(variant, fn):
    """fn under `variant`. The variable is left set and only written when it changes, so that a
    timing loop pays a dict lookup per call, not a putenv (small cases are host-bound); "ours" is
    wrapped too, so that it never runs under a variant left set by a peer."""
    def run():
        if os.environ.get(_KNOB) != variant:
            os.environ[_KNOB] = variant
        return fn()
    return run


def _variant_peers(fn, ref):
    """fn under each kernel variant; each is checked once against ref here (run.py checks only
    "ours"), and a wrong result is named in the peer's label rather than stopping the run."""
    peers = {}
    for variant in KERNEL_VARIANTS:
        run = _with_kernel(variant, fn)
        ok = torch.equal(run(), ref)
        peers[f"kernel={variant}" + ("" if ok else " WRONG RESULT")] = run
    return peers


def _same_size_copy(x):
    """A plain device-to-device copy of the same bytes: its ratio (its time / ours) is the fraction
    of copy speed at this size, launch and tail included (the run's ceiling is a 1 GB copy)."""
    src, dst = torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(x, memory_format=torch.contiguous_format)
    src.view(-1).copy_(x.reshape(-1))
    return {"copy_ of the same bytes": lambda: dst.copy_(src)}


def _permute_case(shape, perm, dtype, device, name=None):
    x = _random(shape, dtype, device)
    nbytes = 2.0 * x.numel() * x.element_size()
    peers = {"permute().contiguous()": lambda: x.permute(perm).contiguous()}
    ours = _with_kernel(_OURS, lambda: tg.permute_copy(x, perm))
    if on_gpu(device):
        peers.update(_variant_peers(lambda: tg.permute_copy(x, perm), x.permute(perm).contiguous()))
        peers.update(_same_size_copy(x))
    return Case("permute_copy", name or f"{tuple(shape)}->{tuple(perm)}", dtype, ours, peers, nbytes, "copy", 0.0,
                exact=True)


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
        fn = lambda x=x, src=src, dst=dst: tg.layout_transform(x, src, dst)  # noqa: E731
        ours = _with_kernel(_OURS, fn)
        ref = _composite_layout(x, src, dst)
        peers = {"reshape/pad/permute": lambda x=x, src=src, dst=dst: _composite_layout(x, src, dst)}
        if on_gpu(device):
            peers.update(_variant_peers(fn, ref))
            peers.update(_same_size_copy(ref))
        yield Case("layout_transform", f"{tuple(shape)} {src}->{dst}", dtype, ours, peers,
                   float((x.numel() + ref.numel()) * x.element_size()), "copy", 0.0, exact=True)


# Issue 4's targets on an H100, printed next to the figures; never asserted.
BIG_BYTES = 16 << 20  # "every case of 16 MB or more" (the tensor's size)
TARGETS = {"fraction_of_copy_big": 0.90, "geomean_vs_pytorch": 4.0, "min_vs_pytorch": 1.0}
COPY_PEER = "copy_ of the same bytes"


def summarize(results, out_dir):
    """permute_copy's figures against issue 4's targets, and the geomean it would reach if every
    case ran exactly at the speed of a same-size copy (`copy_` of the same bytes, measured in the
    same run): a permutation reads and writes every byte once, so that is what the case set
    allows. Saved as out_dir/layout_summary.json. GPU runs only (the copy peer)."""
    rows = [r for r in results if r["op"] == "permute_copy" and COPY_PEER in r["peers_ms"]]
    if not rows:
        return None
    tensor_bytes = lambda r: work_of(r) / 2  # noqa: E731  (work: read + written)
    big = [r for r in rows if tensor_bytes(r) >= BIG_BYTES]
    of_copy = {r["case"] + " " + r["dtype"]: r["ratios"][COPY_PEER] for r in big}
    summary = {"cases": len(rows), "geomean_vs_pytorch": geomean([r["ratio"] for r in rows]),
               "min_vs_pytorch": min(r["ratio"] for r in rows),
               "geomean_at_copy_speed": geomean([r["peers_ms"][r["headline_peer"]] / r["peers_ms"][COPY_PEER] for r in rows]),
               "big_cases": len(big), "fraction_of_copy_big": min(of_copy.values(), default=float("nan")),
               "below_90_percent_of_copy": sorted(k for k, v in of_copy.items() if v < 0.9)}
    print(f"\npermute_copy ({len(rows)} cases): {summary['geomean_vs_pytorch']:.2f}x permute().contiguous() "
          f"geomean (min {summary['min_vs_pytorch']:.2f}x); at exactly a same-size copy's speed every case "
          f"would give {summary['geomean_at_copy_speed']:.2f}x; {len(big)} cases of 16 MB or more, the slowest "
          f"at {100 * summary['fraction_of_copy_big']:.0f}% of a same-size copy")
    report_targets("issue 4 targets (H100)", summary, TARGETS, os.path.join(out_dir, "layout_summary.json"))
    return summary
