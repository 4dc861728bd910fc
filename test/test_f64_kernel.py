"""fp64 gemm (list API), grouped_mm (every form) and syr2k on Hopper's FP64 tensor cores, through
the DMMA kernels (kernels/dmma_grouped.cuh), forced here by TORCH_GROUPED_FP64_KERNELS=1 (the
measured rule that chooses them otherwise has a test of its own): float64's result to rounding,
every output element written (zeros for K = 0, empty groups and rows past the last offset),
operands in any layout read in place, the same bits whichever schedule walks the tiles, exactly
symmetric syr2k results, no host synchronisation, CUDA graphs with new offsets, gradients."""
import re

import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER, HOPPER_ONLY, kernels_launched, poison, replay_with_new_offsets

pytestmark = HOPPER_ONLY


@pytest.fixture(autouse=True, params=["128x64", "64x64"])
def fp64_kernels(request, monkeypatch):
    """Every test on both tile shapes of the kernel (TORCH_GROUPED_FP64_TILE forces one; unset, a
    model picks per call: test_tile_follows_the_model)."""
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "1")
    monkeypatch.setenv("TORCH_GROUPED_FP64_TILE", request.param)


def dmma_kernels(fn):
    """The DMMA kernels fn launches, as (rank2k, a_k_fast, b_k_fast, pairs, tma) each:
    dmma_kernel<Shape, Rank2K, AKFast, BKFast, Pairs, Tma>. (The profiler does not run under
    compute-sanitizer, so only the tests that check a kernel choice call this, and gpu_check's
    sanitizer areas leave those out.)"""
    flag = "(true|false)"
    found = (re.search(rf"dmma_kernel<.*?DmmaShape<[^>]*>, {', '.join([flag] * 5)}>", n) for n in kernels_launched(fn))
    return [tuple(flag == "true" for flag in m.groups()) for m in found if m]


def dmma_tiles(fn):
    """The tile rows (128 or 64; 64 columns) of the DMMA kernels fn launches."""
    found = (re.search(r"dmma_kernel<.*?DmmaShape<(\d+), 64,", n) for n in kernels_launched(fn))
    return [int(m[1]) for m in found if m]


def dmma_launches(fn, rank2k=False):
    """How many DMMA kernels (the GEMM walk's, or Rank2K's) fn launches."""
    return sum(1 for kernel in dmma_kernels(fn) if kernel[0] == rank2k)


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


# Sizes of the uniform lists: odd extents (copies of one double), and even ones, which let the
# kernels copy two at a time where the layout is 16-byte aligned too (pairs_ok in dmma_launch.h).
UNIFORM_SIZES = {"odd": [(1, 1, 1), (65, 63, 17), (130, 200, 33), (0, 5, 7), (9, 11, 0), (300, 70, 129), (16, 96, 5)],
                 "even": [(2, 2, 2), (66, 62, 18), (130, 200, 34), (0, 6, 8), (10, 12, 0), (300, 70, 130), (16, 96, 6)]}


def uniform_list_problem(a_layout, b_layout, parity="odd"):
    """Lists with one layout for every A and one for every B: a kernel of one operand orientation
    (an A in rows or offset rows has unit K stride, a B in columns)."""
    sizes = UNIFORM_SIZES[parity]
    a = [randn(m, k, seed=2 * i, layout=a_layout) for i, (m, n, k) in enumerate(sizes)]
    b = [randn(k, n, seed=2 * i + 1, layout=b_layout) for i, (m, n, k) in enumerate(sizes)]
    return a, b


@pytest.mark.parametrize("a_layout", LAYOUTS)
@pytest.mark.parametrize("b_layout", LAYOUTS)
@pytest.mark.parametrize("parity", ["odd", "even"])
def test_gemm_orientation_takes_its_kernel(a_layout, b_layout, parity):
    """The kernel compiled for the operands' orientation (unit K stride in every A (B) or not), and
    copies of two where every operand is aligned and has even extents: any layout but the offset
    views (one element in) at even sizes."""
    a, b = uniform_list_problem(a_layout, b_layout, parity)
    pairs = parity == "even" and "offset" not in (a_layout, b_layout)
    tma = parity == "even" and a_layout == "rows" and b_layout == "cols"  # (K-contiguous, 16-byte rows)
    assert dmma_kernels(lambda: tg.gemm(a, b)) == [(False, a_layout != "cols", b_layout == "cols", pairs and not tma, tma)]
    mixed_a, mixed_b = list_problem()
    assert dmma_kernels(lambda: tg.gemm(mixed_a, mixed_b)) == [(False, False, False, False, False)]


def test_tile_follows_the_model(monkeypatch):
    """Unset, the tile is sched/dmma_tile_choice.h's (its cases are in test_sched.py): 64 x 64 where
    128 x 64 tiles would leave most CTAs idle (a small syr2k), 128 x 64 on a list of many deep
    tiles (4 x 2048^3: 1024 of them, 2048-deep)."""
    monkeypatch.delenv("TORCH_GROUPED_FP64_TILE")
    small = [randn(300, 24, seed=1)]
    assert dmma_tiles(lambda: tg.syr2k(small, small)) == [64]
    a = [randn(2048, 2048, seed=2 + i) for i in range(4)]
    b = [randn(2048, 2048, seed=12 + i) for i in range(4)]
    assert dmma_tiles(lambda: tg.gemm(a, b)) == [128]
    monkeypatch.setenv("TORCH_GROUPED_FP64_TILE", "96x64")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP64_TILE must be 128x64 or 64x64"):
        tg.gemm(a, b)


def test_gemm_takes_its_kernel_only_when_asked(monkeypatch):
    a, b = list_problem()
    assert dmma_launches(lambda: tg.gemm(a, b)) == 1
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "0")
    assert dmma_launches(lambda: tg.gemm(a, b)) == 0
    monkeypatch.setenv("TORCH_GROUPED_FP64_KERNELS", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP64_KERNELS must be 0 or 1"):
        tg.gemm(a, b)


def test_measured_rule_takes_its_kernel_by_size(monkeypatch):
    """Unset: gemm and syr2k lists of problems under 1 GFLOP each on average take the kernel,
    bigger ones cuBLAS; every grouped_mm the kernel."""
    monkeypatch.delenv("TORCH_GROUPED_FP64_KERNELS")
    a, b = list_problem()
    assert dmma_launches(lambda: tg.gemm(a, b)) == 1
    big_a, big_b = [randn(1024, 512, seed=1)], [randn(512, 1024, seed=2)]  # 2mnk: 1.07 GFLOP
    assert dmma_launches(lambda: tg.gemm(big_a, big_b)) == 0
    assert dmma_launches(lambda: tg.gemm(big_a + a, big_b + b)) == 1  # (1.1 GFLOP over 10 problems)
    sa, sb, sc = syr2k_problem()
    assert dmma_launches(lambda: tg.syr2k(sa, sb, sc), rank2k=True) == 1
    big = [randn(1024, 512, seed=3)]  # 2n(n + 1)k: 1.07 GFLOP
    assert dmma_launches(lambda: tg.syr2k(big, big), rank2k=True) == 0
    assert dmma_launches(lambda: tg.grouped_mm(*PROBLEMS["moe"])) == 1


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
    # aligned, even layouts whose paired axis offs sizes (odd offsets): copies of one
    yield "moe_a_cols", randn(300, 40, seed=11, layout="cols"), randn(4, 40, 72, seed=12), offsets([33, 33, 101, 250])
    yield "3d_2d_b_rows", randn(3, 70, 24, seed=13), randn(24, 150, seed=14), offsets([11, 11, 129])
    yield "k_grouped_k_fast", randn(90, 300, seed=15), randn(300, 70, seed=16, layout="cols"), offsets([0, 101, 101, 251, 300])


# Whether each problem's kernel copies two doubles at a time (pairs_ok: aligned, even strides and
# extents, and no pairs along an axis that offs sizes).
PAIRED = {"moe": True, "moe_b_cols": False, "3d_2d": True, "3d_3d": False, "k_grouped": True, "moe_a_cols": False,
          "3d_2d_b_rows": False, "k_grouped_k_fast": False}


PROBLEMS = {name: (a, b, offs) for name, a, b, offs in grouped_problems()} if HOPPER else {}


@pytest.mark.parametrize("name", list(PAIRED))
def test_grouped_mm_matches_float64(name):
    a, b, offs = PROBLEMS[name]
    poison()
    out = tg.grouped_mm(a, b, offs)
    check(out, reference.grouped_mm(a, b, offs))
    if name == "moe":
        assert (out[290:] == 0).all() and (out[:64] != 0).all()
    if name == "k_grouped":
        assert (out[0] == 0).all() and (out[2] == 0).all()  # experts that got no rows


def test_grouped_mm_takes_its_kernel():
    for name, (a, b, offs) in PROBLEMS.items():
        assert [kernel[3:] for kernel in dmma_kernels(lambda: tg.grouped_mm(a, b, offs))] == [(PAIRED[name], False)], name


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


# syr2k (the Rank2K kernel): orders at and off the tiles (128 x 64), K = 0 and 1, every layout.
SYR2K_SIZES = [(1, 1), (64, 16), (65, 37), (130, 0), (200, 1), (90, 129), (300, 24)]
EVEN_SYR2K_SIZES = [(2, 2), (64, 16), (66, 38), (130, 0), (200, 2), (90, 130), (300, 24)]  # (copies of two)


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


def test_syr2k_takes_its_kernel():
    a, b, c = syr2k_problem()
    assert dmma_launches(lambda: tg.syr2k(a, b, c, uplo="L", beta=1.0), rank2k=True) == 1


def uniform_syr2k_problem(a_layout, b_layout, parity="odd"):
    sizes = SYR2K_SIZES if parity == "odd" else EVEN_SYR2K_SIZES
    a = [randn(n, k, seed=100 + i, layout=a_layout) for i, (n, k) in enumerate(sizes)]
    b = [randn(n, k, seed=200 + i, layout=b_layout) for i, (n, k) in enumerate(sizes)]
    return a, b


@pytest.mark.parametrize("op", ["gemm", "syr2k"])
@pytest.mark.parametrize("a_layout", LAYOUTS)
@pytest.mark.parametrize("b_layout", LAYOUTS)
@pytest.mark.parametrize("parity", ["odd", "even"])
def test_every_operand_orientation(op, a_layout, b_layout, parity):
    """Lists of one layout per operand: each kernel of an orientation (gemm's four, syr2k's two),
    with copies of one double and (even sizes, aligned layouts: the *_takes_its_kernel tests) two."""
    poison()
    if op == "gemm":
        a, b = uniform_list_problem(a_layout, b_layout, parity)
        pairs = zip(tg.gemm(a, b), reference.gemm(a, b))
    else:
        a, b = uniform_syr2k_problem(a_layout, b_layout, parity)
        pairs = zip(tg.syr2k(a, b, uplo="U", alpha=-0.5), reference.syr2k(a, b, None, "U", -0.5, 0.0))
    for o, r in pairs:
        check(o, r)
        assert op == "gemm" or torch.equal(o, o.T), "not exactly symmetric"


@pytest.mark.parametrize("a_layout", LAYOUTS)
@pytest.mark.parametrize("b_layout", LAYOUTS)
@pytest.mark.parametrize("parity", ["odd", "even"])
def test_syr2k_orientation_takes_its_kernel(a_layout, b_layout, parity):
    """The passes swap a and b between the tile's slots, so one orientation serves both: the
    unit-K-stride kernel where every a and b allows it, else the general one, whose copies of two
    walk rows of unit stride: pairs (at even sizes) where a and b are both rows or both columns;
    TMA loads where both are rows of whole 16-byte steps (even sizes)."""
    a, b = uniform_syr2k_problem(a_layout, b_layout, parity)
    fast = a_layout != "cols" and b_layout != "cols"
    pairs = parity == "even" and a_layout == b_layout != "offset"
    tma = parity == "even" and a_layout == b_layout == "rows"
    assert dmma_kernels(lambda: tg.syr2k(a, b)) == [(True, fast, fast, pairs and not tma, tma)]


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


def tma_lists(op, count=48):
    """Lists that take the TMA-loading kernels (K-contiguous operands, even K: 16-byte rows) with
    more tiles than resident CTAs and K tails of many lengths, so that a CTA's stage barriers go
    through their phases across tiles and (syr2k) passes."""
    if op == "gemm":
        sizes = [(256 - 2 * i, 192 - i % 3, 2 + 6 * i) for i in range(count)]
        return ([randn(m, k, seed=i) for i, (m, n, k) in enumerate(sizes)],
                [randn(k, n, seed=1000 + i, layout="cols") for i, (m, n, k) in enumerate(sizes)])
    sizes = [(130 + 5 * i, 2 + 6 * i) for i in range(count)]
    return ([randn(n, k, seed=i) for i, (n, k) in enumerate(sizes)],
            [randn(n, k, seed=1000 + i) for i, (n, k) in enumerate(sizes)])


def run_list(op, a, b):
    """(ours, float64's) of a list."""
    if op == "gemm":
        return tg.gemm(a, b), reference.gemm(a, b)
    return tg.syr2k(a, b, uplo="L", alpha=0.5), reference.syr2k(a, b, None, "L", 0.5, 0.0)


@pytest.mark.parametrize("op", ["gemm", "syr2k"])
def test_tma_loads_over_many_tiles_per_cta(op):
    a, b = tma_lists(op)
    poison()
    out, ref = run_list(op, a, b)
    for o, r in zip(out, ref):
        check(o, r)
        assert op == "gemm" or torch.equal(o, o.T), "not exactly symmetric"


@pytest.mark.parametrize("op", ["gemm", "syr2k"])
def test_tma_list_takes_its_kernel_unless_told(op, monkeypatch):
    """TORCH_GROUPED_FP64_TMA=0 keeps the copying kernel of the same orientation (its K order
    differs, so the values agree to rounding, not bits); any other value than 0 or 1 is an error.
    The lists are those test_tma_loads_over_many_tiles_per_cta checks (under compute-sanitizer,
    where the profiler that tells the kernel does not run)."""
    a, b = tma_lists(op)
    rank2k = op == "syr2k"
    assert dmma_kernels(lambda: run_list(op, a, b)[0]) == [(rank2k, True, True, False, True)]
    monkeypatch.setenv("TORCH_GROUPED_FP64_TMA", "0")
    assert dmma_kernels(lambda: run_list(op, a, b)[0]) == [(rank2k, True, True, True, False)]
    poison()
    out, ref = run_list(op, a, b)
    for o, r in zip(out, ref):
        check(o, r)
    monkeypatch.setenv("TORCH_GROUPED_FP64_TMA", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP64_TMA must be 0 or 1"):
        run_list(op, a, b)


def test_list_with_an_unaligned_group_takes_its_kernel_with_copies():
    """One group whose rows are not whole 16-byte steps (odd K) keeps the whole list on copies."""
    a, b = tma_lists("gemm", 4)
    a.append(randn(40, 7, seed=99))
    b.append(randn(7, 30, seed=98, layout="cols"))
    assert dmma_kernels(lambda: tg.gemm(a, b)) == [(False, True, True, False, False)]
