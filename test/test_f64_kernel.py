"""fp64 gemm (list API), grouped_mm (every form) and syr2k on Hopper's FP64 tensor cores, through
the DMMA kernels (kernels/dmma_grouped.cuh), which TORCH_GROUPED_FP64_KERNELS=1 turns on:
float64's result to rounding, every output element written (zeros for K = 0, empty groups and rows
past the last offset), operands in any layout read in place, the same bits whichever schedule
walks the tiles, exactly symmetric syr2k results, no host synchronisation, CUDA graphs with new
offsets, gradients."""
import re

import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER, HOPPER_ONLY, kernels_launched, poison, replay_with_new_offsets, set_env

pytestmark = HOPPER_ONLY


# Every test under the call's own tile choice and under each tile forced (TORCH_GROUPED_FP64_TILE).
@pytest.fixture(autouse=True, params=[None, "64x64", "128x128"], ids=["auto_tile", "64x64", "128x128"])
def tile(request, monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "1")
    set_env(monkeypatch, "TORCH_GROUPED_FP64_TILE", request.param)
    return request.param


def dmma_tiles(fn, rank2k=False):
    """The tiles ("128x128", ...) of the DMMA kernels (the GEMM walk, or Rank2K's) that fn launches.
    (The profiler does not run under compute-sanitizer, so only the *_takes_its_kernel tests call
    this, and gpu_check's sanitizer areas leave those out.)"""
    walk = "true" if rank2k else "false"
    found = (re.search(r"dmma_kernel<[\w:]*DmmaShape<(\d+), (\d+), .*, (true|false)>", n) for n in kernels_launched(fn))
    return [f"{m[1]}x{m[2]}" for m in found if m and m[3] == walk]


def randn(*shape, seed, layout="rows"):
    """On the GPU, fp64. layout: "rows" (contiguous), "cols" (the last two axes' values laid out
    transposed) or "offset" (a view one element into a wider buffer: odd row stride and base)."""
    g = torch.Generator().manual_seed(seed)
    if layout == "cols":
        return torch.randn(*shape[:-2], shape[-1], shape[-2], generator=g, dtype=torch.float64).cuda().mT
    if layout == "offset":
        return torch.randn(*shape[:-1], shape[-1] + 3, generator=g, dtype=torch.float64).cuda()[..., 1:-2]
    return torch.randn(*shape, generator=g, dtype=torch.float64).cuda()


LAYOUTS = ("rows", "cols", "offset")


def list_problem():
    """Ragged (m, n, k) with empty outputs, K = 0, tile edges on both sides, and every layout."""
    sizes = [(1, 1, 1), (64, 64, 16), (65, 63, 17), (130, 200, 33), (0, 5, 7), (7, 0, 3), (9, 11, 0),
             (300, 70, 129), (16, 96, 5)]
    a = [randn(m, k, seed=2 * i, layout=LAYOUTS[i % 3]) for i, (m, n, k) in enumerate(sizes)]
    b = [randn(k, n, seed=2 * i + 1, layout=LAYOUTS[(i + 1) % 3]) for i, (m, n, k) in enumerate(sizes)]
    return a, b


def check(out, ref):
    assert not out.isnan().any(), "unwritten elements"
    reference.assert_close(out, ref, torch.float64)


@pytest.mark.parametrize("schedule", ["auto", "host", "device"])
@pytest.mark.parametrize("sort_by_k", [False, True])
def test_gemm_matches_float64(schedule, sort_by_k):
    a, b = list_problem()
    poison()
    out = tg.gemm(a, b, schedule=schedule, sort_by_k=sort_by_k)
    for o, r, (x, y) in zip(out, reference.gemm(a, b), zip(a, b)):
        assert o.shape == (x.shape[0], y.shape[1]) and o.dtype == torch.float64
        check(o, r)
    assert (out[6] == 0).all()  # K = 0
    # Each tile is one CTA's, summed in one K order: the schedule moves tiles, not bits.
    again = tg.gemm(a, b, schedule="device", sort_by_k=not sort_by_k)
    assert all(torch.equal(x, y) for x, y in zip(out, again))


def test_gemm_many_small_groups():
    a = [randn(16 + i % 5, 24, seed=i) for i in range(128)]
    b = [randn(24, 32 - i % 3, seed=1000 + i) for i in range(128)]
    poison()
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        check(o, r)


def test_gemm_takes_its_kernel_only_when_asked(monkeypatch, tile):
    a, b = list_problem()
    assert dmma_tiles(lambda: tg.gemm(a, b)) == [tile or "64x64"]  # (few tiles: the square one)
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "0")
    assert dmma_tiles(lambda: tg.gemm(a, b)) == []
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP64_KERNELS must be 0 or 1"):
        tg.gemm(a, b)


def test_tile_choice_takes_its_kernel(monkeypatch, tile):
    """The wide tile once its tiles fill every resident CTA (one an SM), the square one below."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = 128 * sms  # 128 x 128 tiles: exactly one an SM with n = 128
    a, b = [randn(rows, 8, seed=1)], [randn(8, 128, seed=2)]
    assert dmma_tiles(lambda: tg.gemm(a, b)) == [tile or "128x128"]
    a, b = [randn(rows - 128, 8, seed=1)], [randn(8, 128, seed=2)]
    assert dmma_tiles(lambda: tg.gemm(a, b)) == [tile or "64x64"]
    monkeypatch.setenv("TORCH_GROUPED_FP64_TILE", "128x64")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP64_TILE must be 64x64 or 128x128; got '128x64'"):
        tg.gemm(a, b)


def offsets(ends):
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


# (name, a, b, offs) over the four forms: empty groups, rows past the last offset, sizes off the
# tile, B either way round, offset views.
def grouped_problems():
    yield "moe", randn(300, 40, seed=1), randn(5, 40, 72, seed=2), offsets([64, 64, 130, 250, 290])
    yield "moe_b_cols", randn(200, 33, seed=3, layout="offset"), randn(3, 33, 65, seed=4, layout="cols"), offsets([0, 100, 200])
    yield "3d_2d", randn(3, 70, 24, seed=5), randn(24, 150, seed=6, layout="cols"), offsets([10, 10, 129])
    yield "3d_3d", randn(4, 65, 31, seed=7, layout="offset"), randn(4, 31, 66, seed=8), None
    yield "k_grouped", randn(90, 300, seed=9, layout="cols"), randn(300, 70, seed=10), offsets([0, 100, 100, 250, 300])


PROBLEMS = {name: (a, b, offs) for name, a, b, offs in grouped_problems()} if HOPPER else {}


@pytest.mark.parametrize("name", ["moe", "moe_b_cols", "3d_2d", "3d_3d", "k_grouped"])
def test_grouped_mm_matches_float64(name):
    a, b, offs = PROBLEMS[name]
    poison()
    out = tg.grouped_mm(a, b, offs)
    check(out, reference.grouped_mm(a, b, offs))
    if name == "moe":
        assert (out[290:] == 0).all() and (out[:64] != 0).all()
    if name == "k_grouped":
        assert (out[0] == 0).all() and (out[2] == 0).all()  # experts that got no rows


def test_grouped_mm_takes_its_kernel(tile):
    for a, b, offs in PROBLEMS.values():
        assert dmma_tiles(lambda: tg.grouped_mm(a, b, offs)) == [tile or "64x64"]


def test_grouped_mm_reads_offs_on_the_device_only():
    a, b, offs = PROBLEMS["moe"]
    tg.grouped_mm(a, b, offs)  # (warm-up)
    torch.cuda.set_sync_debug_mode("error")  # a synchronising call now raises
    try:
        tg.grouped_mm(a, b, offs)
        tg.grouped_mm(*PROBLEMS["k_grouped"])
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_cuda_graph_with_new_offsets():
    a, b, offs = (x.clone() for x in PROBLEMS["moe"])
    replay_with_new_offsets(lambda: tg.grouped_mm(a, b, offs), a, b, offs,
                            ([0, 300, 300, 300, 300], [1, 2, 3, 150, 299]),
                            lambda out: check(out, reference.grouped_mm(a, b, offs)))


def test_moe_gradients():
    """Backward through our ops (dA by the 2-D x 3-D form, dB by the K-grouped one), against
    float64 autograd on the reference."""
    a, b, offs = (x.clone().requires_grad_() if x.is_floating_point() else x for x in PROBLEMS["moe"])
    grad = randn(300, 72, seed=11)
    tg.grouped_mm(a, b, offs).backward(grad)
    a_ref, b_ref = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    reference.grouped_mm(a_ref, b_ref, offs).backward(grad)
    check(a.grad, a_ref.grad)
    check(b.grad, b_ref.grad)


# syr2k (the Rank2K kernel): orders at and off both tiles, K = 0 and 1, every layout.
SYR2K_SIZES = [(1, 1), (64, 16), (65, 37), (130, 0), (200, 1), (90, 129), (300, 24)]


def syr2k_problem():
    a = [randn(n, k, seed=100 + i, layout=LAYOUTS[i % 3]) for i, (n, k) in enumerate(SYR2K_SIZES)]
    b = [randn(n, k, seed=200 + i, layout=LAYOUTS[(i + 2) % 3]) for i, (n, k) in enumerate(SYR2K_SIZES)]
    c = [randn(n, n, seed=300 + i, layout=LAYOUTS[(i + 1) % 3]) for i, (n, _) in enumerate(SYR2K_SIZES)]
    return a, b, c


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("with_c", [False, True])
def test_syr2k_matches_float64_and_is_symmetric(uplo, with_c):
    a, b, c = syr2k_problem()
    c = c if with_c else None
    poison()
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=0.7, beta=-1.3)
    for o, r in zip(out, reference.syr2k(a, b, c, uplo, 0.7, -1.3)):
        check(o, r)
        assert torch.equal(o, o.T), "not exactly symmetric"


def test_syr2k_takes_its_kernel(tile):
    a, b, c = syr2k_problem()
    assert dmma_tiles(lambda: tg.syr2k(a, b, c, uplo="L", beta=1.0), rank2k=True) == [tile or "64x64"]


def test_syr2k_gemm_scheduler(monkeypatch):
    """The same kernel over every tile (the benchmark's comparison): the same values."""
    a, b, c = syr2k_problem()
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_SCHEDULER", "gemm")
    for o, r in zip(tg.syr2k(a, b, c, uplo="L", alpha=2.0, beta=0.5), reference.syr2k(a, b, c, "L", 2.0, 0.5)):
        check(o, r)


def test_syr2k_gradients():
    """Backward through our ops (the fp64 gemm of dA, dB and the folded dc) against float64 autograd."""
    a, b, c = (x.clone().requires_grad_() for x in (randn(70, 20, seed=1), randn(70, 20, seed=2), randn(70, 70, seed=3)))
    grad = randn(70, 70, seed=4)
    tg.syr2k([a], [b], [c], uplo="U", alpha=1.5, beta=0.25)[0].backward(grad)
    refs = [x.detach().clone().requires_grad_() for x in (a, b, c)]
    reference.syr2k([refs[0]], [refs[1]], [refs[2]], "U", 1.5, 0.25)[0].backward(grad)
    for x, r in zip((a, b, c), refs):
        check(x.grad, r.grad)
