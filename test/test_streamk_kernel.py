"""The Hopper Stream-K kernel behind streamk_mm: every decomposition against a float32 reference on
shapes where tiles < CTAs, tiles >> CTAs, K of one iteration, M, N, K off the 128x256x64 tile (and
the 128x128 one for N <= 128);
bitwise-repeatable results; grids smaller than the split count; CUDA-graph replay with the cached
tile counters; the paths the kernel hands to cuBLAS."""

import os
import subprocess
import sys

import pytest
import torch

import reference
import torch_grouped as tg
from harness import (HOPPER_ONLY, kernels_launched, matmul_configs, matmul_tiles, poison, row_copy_kernels,
                     transpose_kernels)

pytestmark = HOPPER_ONLY

DECOMPOSITIONS = ["auto", "data_parallel", "split_k", "stream_k", "dp_one_tile_sk", "two_tile_sk_dp"]
SHAPES = [
    (256, 512, 8192),    # 4 tiles on 132 CTAs: every tile shared by ~33 CTAs
    (1000, 3000, 64),    # one K iteration per tile
    (130, 250, 1000),    # M, N, K all off the tile
    (1920, 2816, 576),   # 165 tiles: one full wave and a ragged one
    (8, 8, 8),           # a single partial tile
    (256, 128, 20000),   # N <= 128: the 128x128 kernel, two tiles over long K
    (520, 72, 3000),     # the 128x128 kernel, N off the tile
    (128, 128, 65536),   # one tile over 132 CTAs: the fixup's two levels (12 runs of 11 segments)
]


def operands(m, n, k, dtype=torch.bfloat16, b_n_major=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).to("cuda", dtype)
    b = torch.randn(k, n, generator=g).to("cuda", dtype)
    return a, (b if b_n_major else b.T.contiguous().T)  # the same values, unit stride along K


def check(out, a, b):
    assert not out.isnan().any(), "unwritten elements"
    reference.assert_close(out, a.float() @ b.float(), a.dtype)


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", SHAPES)
def test_every_decomposition_matches_mm(decomposition, m, n, k):
    a, b = operands(m, n, k)
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition), a, b)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("b_n_major", [True, False])
@pytest.mark.parametrize("decomposition", ["stream_k", "split_k"])
def test_dtypes_and_b_layouts(dtype, b_n_major, decomposition):
    a, b = operands(300, 520, 4000, dtype, b_n_major)
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition, splits=3), a, b)


@pytest.mark.parametrize("decomposition, splits, grid", [
    ("split_k", 3, 2), ("split_k", 16, 5), ("split_k", 2, 132), ("stream_k", 0, 7), ("stream_k", 0, 33),
    ("dp_one_tile_sk", 0, 5), ("two_tile_sk_dp", 0, 9), ("stream_k", 0, 100000),
])
def test_grids_and_splits(decomposition, splits, grid):
    """Small grids give each CTA several tiles' partials to hand over, and a grid smaller than the
    split count one CTA several slices of a tile; a grid above the GPU's capacity is capped."""
    a, b = operands(700, 900, 3000)
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition, splits=splits, grid=grid), a, b)


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", [(512, 768, 12288), (128, 128, 65536)])
def test_bitwise_repeatable(decomposition, m, n, k):
    """A cut tile's partials are added in a fixed order by whichever segments arrive last (the
    second shape's fixup sums in two levels)."""
    a, b = operands(m, n, k)
    first = tg.streamk_mm(a, b, decomposition=decomposition)
    for _ in range(5):
        assert torch.equal(tg.streamk_mm(a, b, decomposition=decomposition), first)


def uses_separate_fixup(m, n, k, decomposition, splits):
    """Whether streamk_mm's plan hands its cut tiles to the separate fixup kernel (the dump's
    column 14, for the tile the op picks on this GPU)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a, b = torch.empty(m, k, device="cuda", dtype=torch.bfloat16), torch.empty(k, n, device="cuda", dtype=torch.bfloat16)
    tm, tn, tk = torch.ops.grouped._streamk_tile(a, b)
    rows = torch.ops.grouped._schedule_streamk(m, n, k, tm, tn, tk, decomposition, max(splits, 1), sms)
    return bool(rows[:, 14].any())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m, n, k, decomposition, splits", [
    (130, 250, 20000, "stream_k", 0),  # 2 tiles of ~66 segments; rows of 250 elements: unaligned stores, m off the tile
    (200, 120, 9000, "stream_k", 0),   # the 128x128 kernel, 2 tiles of ~66 segments
    (64, 300, 30000, "auto", 0),
    (128, 128, 65536, "stream_k", 0),  # 132 segments: some parts of 16, some of 17
    (128, 128, 65536, "split_k", 40),  # 40 slices on a grid of 40 CTAs (the plan launches no idle one)
])
def test_separate_fixup(dtype, m, n, k, decomposition, splits):
    """Tiles of 32 segments or more: the matmul kernel stores its partials in register order and
    the separate kernel sums them (sched::SeparateFixup, sched::PartialQuad); correct, fully
    written, and bitwise repeatable."""
    assert uses_separate_fixup(m, n, k, decomposition, splits)
    a, b = operands(m, n, k, dtype)
    poison()
    first = tg.streamk_mm(a, b, decomposition=decomposition, splits=splits)
    check(first, a, b)
    assert torch.equal(tg.streamk_mm(a, b, decomposition=decomposition, splits=splits), first)


def test_cuda_graph_replays_with_new_inputs():
    a, b = operands(256, 512, 8192)
    tg.streamk_mm(a, b, decomposition="stream_k")  # warm up outside the capture
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            out = tg.streamk_mm(a, b, decomposition="stream_k")
    for seed in (1, 2, 3):
        a2, b2 = operands(256, 512, 8192, seed=seed)
        a.copy_(a2), b.copy_(b2)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(out, a, b)
    check(tg.streamk_mm(a, b, decomposition="stream_k"), a, b)  # the counters were left at zero


def test_concurrent_streams_keep_their_own_counters():
    a, b = operands(256, 512, 8192)
    streams = [torch.cuda.Stream() for _ in range(3)]
    outs = []
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            outs.append([tg.streamk_mm(a, b, decomposition="stream_k") for _ in range(4)])
    torch.cuda.synchronize()
    for per_stream in outs:
        for out in per_stream:
            check(out, a, b)


@pytest.mark.parametrize("m, n, k", [(0, 64, 64), (64, 0, 64), (64, 64, 0), (200, 300, 12), (200, 300, 8),
                                     (710, 3686, 3282), (333, 77, 5003)])
def test_empty_and_unaligned(m, n, k):
    """K = 0 gives zeros; K or N not a multiple of 8 (rows not a multiple of 16 bytes): the
    kernel reads such operands by row copies (few tiles, even K and N) or pitched copies, and
    writes the odd-width output element-wise at the edges."""
    a, b = operands(m, n, k)
    out = tg.streamk_mm(a, b, decomposition="stream_k")
    assert out.shape == (m, n)
    if out.numel():
        check(out, a, b)


@pytest.mark.parametrize("k", [17, 24, 31])
def test_pitched_copies_at_every_2_byte_offset(monkeypatch, k):
    """Operands the pitched copy stages (row copies off): views at every 2-byte offset of one buffer,
    odd and even row lengths (odd ones: rows alternately on and off the 4-byte grid), single rows, the
    chunks holding a tensor's first and last elements: right and fully written."""
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "0")
    g = torch.Generator().manual_seed(k)
    buffer = torch.randn(8 + 3 * k + k * 41, generator=g).to("cuda", torch.bfloat16)
    for offset in range(8):
        for m in (1, 3):
            a = buffer[offset : offset + m * k].view(m, k)
            b = buffer[offset + 1 : offset + 1 + k * 41].view(k, 41)
            poison()
            names = kernels_launched(lambda: check(tg.streamk_mm(a, b), a, b))
            assert any("pitched_copy" in x for x in names), names


def test_transposed_and_offset_operands():
    base = torch.randn(1100, 1100, device="cuda", dtype=torch.bfloat16)
    a = base[8:308, 16:1040]          # offset, row stride 1100 elements (2200 B: not a multiple of 16)
    b = base[:1024, :400].T.T         # a plain view
    check(tg.streamk_mm(a, b, decomposition="stream_k"), a, b)
    check(tg.streamk_mm(a.T.contiguous().T, b.T.contiguous().T, decomposition="split_k"), a, b)


def transposed_a(m, k, offset=False, seed=0):
    """A of m x k stored M-major (as xᵀ): dense, or an offset view with a padded row stride."""
    g = torch.Generator().manual_seed(seed)
    if offset:
        return torch.randn(k + 8, m + 24, generator=g).to("cuda", torch.bfloat16)[8:, 16:16 + m].T
    return torch.randn(k, m, generator=g).to("cuda", torch.bfloat16).T


@pytest.mark.parametrize("offset", [False, True])
@pytest.mark.parametrize("m, n, k", [(128, 128, 65536), (300, 520, 4000), (1000, 264, 1024)])
def test_transposed_a_matches_mm(m, n, k, offset):
    """A stored M-major of 1 MB or more (a = xᵀ, as streamk_mm's own backward passes it for dB),
    dense or an offset view with a padded stride: read where it lies where TMA addresses it so (row
    stride and start 16-byte aligned: M = 128 and 1000, dense or offset), else staged K-major (M =
    300: the layout ops' transpose when dense, the pitched copy for the offset view):
    right and fully written either way."""
    a = transposed_a(m, k, offset)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    poison()
    check(tg.streamk_mm(a, b), a, b)


def test_transposed_a_takes_its_kernel():
    """A M-major whose row stride TMA cannot address (M = 300: 600 bytes) is staged: the transpose
    (one launch, no pitched copy) for A of 1 MB or more; the pitched copy below."""
    a, b = transposed_a(300, 4000), torch.randn(4000, 520, device="cuda", dtype=torch.bfloat16)
    names = kernels_launched(lambda: tg.streamk_mm(a, b))
    assert transpose_kernels(names) == 1 and not any("pitched_copy" in x for x in names), names
    small = a[:, :1736]  # under 1 MB, K a multiple of 8
    names = kernels_launched(lambda: tg.streamk_mm(small, b[:1736]))
    assert transpose_kernels(names) == 0 and any("pitched_copy" in x for x in names), names


# A stored M-major that TMA addresses so (M a multiple of 8, B N-major): the kernel that reads A in
# 64-row boxes where it lies (kernels::streamk_a_m_major_kernel), nothing copied in front. M below,
# across and off the 64-row box; N at most 128 (the 128 x 128 kernel) and wider; K off the K step.
A_M_MAJOR_SHAPES = [
    (128, 128, 65536),   # one tile cut over every CTA (the fixup's two levels)
    (1000, 264, 1000),   # M, N, K off the tiles
    (8, 520, 3000),      # A narrower than one box
    (200, 72, 5000),     # the 128 x 128 kernel, N off the tile
    (1920, 2816, 576),   # a full wave and a ragged one
]


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", A_M_MAJOR_SHAPES)
def test_a_m_major_read_in_place(decomposition, m, n, k):
    for dtype in (torch.bfloat16, torch.float16):
        a = transposed_a(m, k).to(dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        poison()
        check(tg.streamk_mm(a, b, decomposition=decomposition, splits=3), a, b)


def test_a_m_major_takes_its_kernel(monkeypatch):
    """An addressable M-major A with B N-major: one launch of the A-M-major kernel (the
    configuration's A K-major argument false), no copy; TORCH_GROUPED_STREAMK_A_M_MAJOR=0 stages it
    (the transpose) and gives the same values; B K-major stages it too (no such kernel); another
    setting is an error."""
    a = transposed_a(1000, 4000)
    b = torch.randn(4000, 520, device="cuda", dtype=torch.bfloat16)
    monkeypatch.delenv("TORCH_GROUPED_STREAMK_A_M_MAJOR", raising=False)
    names = kernels_launched(lambda: tg.streamk_mm(a, b))
    assert matmul_configs(names) == {(1, False, False)} and transpose_kernels(names) == 0, names
    assert not any("pitched_copy" in x for x in names), names
    in_place = tg.streamk_mm(a, b)
    b_k_major = b.T.contiguous().T
    names = kernels_launched(lambda: tg.streamk_mm(a, b_k_major))
    assert transpose_kernels(names) == 1 and all(c[2] for c in matmul_configs(names)), names
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_A_M_MAJOR", "0")
    names = kernels_launched(lambda: tg.streamk_mm(a, b))
    assert transpose_kernels(names) == 1 and all(c[2] for c in matmul_configs(names)), names
    reference.assert_close(tg.streamk_mm(a, b), in_place.float(), a.dtype)
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_A_M_MAJOR", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_STREAMK_A_M_MAJOR"):
        tg.streamk_mm(a, b)


# The epilogue through TMA stores: streamk_mm's default for 128x256 tiles and 16-byte aligned output
# rows; TORCH_GROUPED_TMA_STORE=0 turns it off (the threads store), =1 on. The tests force the wide
# tile (`auto` takes 128 x 128 tiles on some of these shapes, which always use the threads' stores).
TMA_STORE_SHAPES = [
    (1000, 3000, 64),     # many tiles of one K block: the epilogue is most of the work
    (136, 264, 1000),     # M and N just past a tile: boxes clipped on both edges
    (1920, 2816, 576),    # a full wave and a ragged one
    (256, 512, 8192),     # every tile cut: the last arriver's store
    (200, 4104, 300),     # N a multiple of 8 but not of 64: a clipped 128-byte box
]


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", TMA_STORE_SHAPES)
def test_tma_store_epilogue(decomposition, m, n, k, monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", "128x256")
    for dtype, b_n_major in ((torch.bfloat16, True), (torch.float16, False)):
        a, b = operands(m, n, k, dtype, b_n_major)
        monkeypatch.delenv("TORCH_GROUPED_TMA_STORE", raising=False)
        poison()
        out = tg.streamk_mm(a, b, decomposition=decomposition, splits=3)
        check(out, a, b)
        monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", "0")
        assert torch.equal(out, tg.streamk_mm(a, b, decomposition=decomposition, splits=3)), "differs from the thread stores"


def test_tma_store_takes_its_kernel(monkeypatch):
    """By default an aligned 128x256 output runs the TMA-store variant; rows that are not 16-byte
    aligned (N = 1001) and TORCH_GROUPED_TMA_STORE=0 keep the thread stores; another value is an
    error."""
    monkeypatch.delenv("TORCH_GROUPED_TMA_STORE", raising=False)
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", "128x256")

    def tma_stores(n):
        a, b = operands(512, n, 256)
        out = []
        names = kernels_launched(lambda: out.append(tg.streamk_mm(a, b, decomposition="data_parallel")))
        check(out[0], a, b)
        return {tma for _, tma, _ in matmul_configs(names)}

    assert tma_stores(1024) == {True}
    assert tma_stores(1001) == {False}
    monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", "0")
    assert tma_stores(1024) == {False}
    monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_TMA_STORE must be 0 or 1"):
        tma_stores(1024)


@pytest.mark.parametrize("decomposition", ["auto", "data_parallel", "stream_k"])
@pytest.mark.parametrize("m, n, k", [(704, 830, 144), (300, 1000, 5000), (178, 455, 1095)])
def test_forced_narrow_tile(monkeypatch, decomposition, m, n, k):
    """TORCH_GROUPED_STREAMK_TILE=128x128 (for the sweeps) on outputs wider than 128: correct on
    every decomposition, odd N included."""
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", "128x128")
    a, b = operands(m, n, k)
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition), a, b)


TALL_SHAPES = [
    (1664, 1664, 4096),  # 9 x 13 tiles: one wave, the last row of tiles a third full
    (200, 300, 20000),   # M just past one tile, N off the tile: every tile cut over long K
    (576, 1000, 64),     # one K block, M a whole number of tiles
    (8, 8, 8),           # a single partial tile
    (130, 250, 1000),    # M, N, K all off the tile; rows of 250 elements: unaligned stores
]


def forced_tile_matches_mm(monkeypatch, tile, decomposition, m, n, k):
    """Under TORCH_GROUPED_STREAMK_TILE=tile: correct in both dtypes and B layouts, fully written,
    and bitwise repeatable."""
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", tile)
    for dtype, b_n_major in ((torch.bfloat16, True), (torch.float16, False)):
        a, b = operands(m, n, k, dtype, b_n_major)
        poison()
        out = tg.streamk_mm(a, b, decomposition=decomposition, splits=3)
        check(out, a, b)
        assert torch.equal(out, tg.streamk_mm(a, b, decomposition=decomposition, splits=3))


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", TALL_SHAPES)
def test_forced_tall_tile(monkeypatch, decomposition, m, n, k):
    """TORCH_GROUPED_STREAMK_TILE=192x128 (three consumer warpgroups, each with its own fixup
    counter): right on every decomposition (forced_tile_matches_mm)."""
    forced_tile_matches_mm(monkeypatch, "192x128", decomposition, m, n, k)


SMALL_SHAPES = [
    (290, 136, 248),     # 5 x 3 tiles, the last row and column partial
    (384, 384, 128),     # 36 whole tiles, two K blocks
    (708, 830, 140),     # 156 tiles: more than one a CTA at one CTA an SM; rows TMA cannot address
    (200, 300, 20000),   # 4 x 5 tiles cut over a long K
    (64, 64, 65536),     # one tile over every CTA: the fixup's two levels
    (8, 8, 8),           # a single partial tile
    (130, 250, 1000),    # M, N, K all off the tile; rows of 250 elements: unaligned stores
]


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", SMALL_SHAPES)
def test_forced_small_tile(monkeypatch, decomposition, m, n, k):
    """TORCH_GROUPED_STREAMK_TILE=64x64 (one consumer warpgroup, two CTAs an SM): right on every
    decomposition (forced_tile_matches_mm; row copies where TMA cannot address an operand)."""
    forced_tile_matches_mm(monkeypatch, "64x64", decomposition, m, n, k)


def test_small_tile_walks_two_ctas_an_sm(monkeypatch):
    """The 64 x 64 tile's plan walks with two CTAs an SM (its kernel's occupancy), or the grid asked
    for, capped there; _streamk_tile reports the forced tile."""
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", "64x64")
    a, b = operands(1000, 1000, 512)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert torch.ops.grouped._streamk_tile(a, b) == [64, 64, 64]
    assert torch.ops.grouped._streamk_walk(a, b) == [64, 2 * sms]
    assert torch.ops.grouped._streamk_walk(a, b, 40) == [64, 40]
    assert torch.ops.grouped._streamk_walk(a, b, 100000) == [64, 2 * sms]
    poison()
    check(tg.streamk_mm(a, b, decomposition="stream_k", grid=40), a, b)


@pytest.mark.parametrize("m, n, k", [(708, 830, 140), (300, 1000, 512), (4096, 4096, 1024), (200, 120, 9000),
                                     (290, 136, 248), (1463, 1017, 265)])
def test_auto_tile_takes_its_kernel(m, n, k):
    """`auto` picks the tile per shape (64 x 64 for the small problems, sched::small_tile_pays; else
    the calibrated models, 128 x 128 where N <= 128), and every decomposition of the shape runs the
    kernel of the tile _streamk_tile reports."""
    a, b = operands(m, n, k)
    tile_m, tile_n = torch.ops.grouped._streamk_tile(a, b)[:2]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert ((tile_m, tile_n) == (64, 64)) == torch.ops.grouped._streamk_small_tile_pays(m, n, k, sms)
    assert (tile_m, tile_n) in ((64, 64), (128, 128), (128, 256), (192, 128)) and (tile_n <= 128 or n > 128)
    for decomposition in ("auto", "data_parallel", "stream_k"):
        names = kernels_launched(lambda: tg.streamk_mm(a, b, decomposition=decomposition))
        assert any(f"bfloat16_t, {tile_m}, {tile_n}," in name for name in names), (decomposition, names)


def _calibrated_models():
    """This GPU's entry of sched/streamk_calibration.h as lists of constants in the header's order
    (wide, narrow, rows[, wide_unaligned, narrow_unaligned[, tall]]), or None where it has none; read as
    benchmarks/calibrate_streamk.py, which writes the header, reads it."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import calibrate_streamk

    with open(calibrate_streamk.HEADER) as f:
        entry = calibrate_streamk.header_entries(f.read()).get(torch.cuda.get_device_name())
    return None if entry is None else [[float(v) for v in m.split(",")] for m in entry]


def test_unaligned_shapes_take_their_models():
    """`auto` weighs a shape the TMA kernel cannot read and write in place (K or N not a multiple
    of 8: pitched copies, shifted output rows) with the calibration's unaligned models, an aligned
    one with the others (and the 192 x 128 tile's, where the entry has one): _streamk_tile answers
    what sched::choose_streamk_tile says with each set.
    858 x 4901 x 10339 is a shape the two sets disagree on (on the H100: 128 x 256 against
    128 x 128, 357 against 428 µs), so the test sees which set the op took."""
    models = _calibrated_models()
    if models is None or len(models) < 5:
        pytest.skip(f"no unaligned models calibrated for {torch.cuda.get_device_name()}")
    wide, narrow, _, wide_unaligned, narrow_unaligned = models[:5]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    choose = torch.ops.grouped._choose_streamk_tile
    assert choose(858, 4901, 10339, sms, wide, narrow) != choose(858, 4901, 10339, sms, wide_unaligned, narrow_unaligned)
    for m, n, k in [(858, 4901, 10339), (6839, 249, 24823), (1956, 1535, 2232), (1126, 980, 40163)]:
        a, b = operands(m, n, k)
        assert torch.ops.grouped._streamk_tile(a, b)[:2] == choose(m, n, k, sms, wide_unaligned, narrow_unaligned), (m, n, k)
    tall = models[5] if len(models) > 5 else None  # (weighed on shapes read in place only)
    for m, n, k in [(864, 4904, 10344), (1024, 1024, 16384), (2176, 2176, 4096), (1664, 1664, 4096)]:
        a, b = operands(m, n, k)
        assert torch.ops.grouped._streamk_tile(a, b)[:2] == choose(m, n, k, sms, wide, narrow, tall), (m, n, k)


@pytest.mark.parametrize("m, n, k", [(0, 300, 64), (300, 300, 0), (0, 0, 0), (64, 0, 64)])
def test_tile_of_empty_problems(m, n, k):
    """_streamk_tile answers for empty problems too (no plan to weigh), and streamk_mm returns the
    empty or zero output."""
    a, b = operands(m, n, k)
    assert torch.ops.grouped._streamk_tile(a, b)[1] in (128, 256)
    out = tg.streamk_mm(a, b)
    assert out.shape == (m, n) and (out == 0).all()


def test_forced_tile_takes_its_kernel(monkeypatch):
    """TORCH_GROUPED_STREAMK_TILE runs the kernel it names; another value is an error."""
    a, b = operands(300, 1000, 512)
    for tile in ("128x128", "128x256", "192x128", "64x64"):
        monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", tile)
        tile_m, tile_n = map(int, tile.split("x"))
        assert torch.ops.grouped._streamk_tile(a, b)[:2] == [tile_m, tile_n]
        names = kernels_launched(lambda: tg.streamk_mm(a, b))
        assert any(f"bfloat16_t, {tile_m}, {tile_n}," in name for name in names), names
    # (a 192-row tile where the operands would be read by row copies: K = 140, 280-byte rows)
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", "192x128")
    a, b = operands(708, 830, 140)
    names = kernels_launched(lambda: check(tg.streamk_mm(a, b), a, b))
    assert any("bfloat16_t, 192, 128," in name for name in names), names
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_TILE", "64x128")
    with pytest.raises(ValueError, match="TORCH_GROUPED_STREAMK_TILE must be 128x128, 128x256, 192x128 or 64x64; got '64x128'"):
        tg.streamk_mm(a, b)


@pytest.mark.parametrize("decomposition", ["auto", "data_parallel", "stream_k"])
def test_dependent_launch_chain(decomposition):
    """The matmul kernels launch as programmatic dependents of the kernel before them (their
    prologue overlaps its tail): each call of a chain reads the previous call's output at once,
    through an operand copy (K = 130: rows of 260 bytes that TMA cannot address) or directly."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(700, 130, generator=g).to("cuda", torch.bfloat16)
    weights = [torch.randn(130, n, generator=g).to("cuda", torch.bfloat16) / 10 for n in (130, 130, 264, 130)]
    for w in weights:
        poison()
        y = tg.streamk_mm(x[:, : w.shape[0]], w, decomposition=decomposition)
        check(y, x[:, : w.shape[0]], w)
        x = y


def test_dependent_launch_chain_through_the_separate_fixup():
    """The separate fixup kernel launches as a programmatic dependent of the matmul kernel: it
    must wait for every partial before summing (a tile of ~66 segments here), and the next call's
    matmul reads its output at once."""
    g = torch.Generator().manual_seed(2)
    a = torch.randn(130, 20000, generator=g).to("cuda", torch.bfloat16)
    b = torch.randn(20000, 250, generator=g).to("cuda", torch.bfloat16) / 100
    c = torch.randn(250, 20000, generator=g).to("cuda", torch.bfloat16) / 10
    assert uses_separate_fixup(130, 250, 20000, "stream_k", 0)
    for _ in range(3):
        poison()
        y = tg.streamk_mm(a, b, decomposition="stream_k")
        z = tg.streamk_mm(y, c)
        check(y, a, b)
        check(z, y, c)


def test_dependent_launch_switch():
    """TORCH_GROUPED_PDL=0 launches the matmul kernels plainly, with bitwise the same results (a
    fresh process each: the switch is read once); another value is an error."""
    script = ("import torch, torch_grouped as tg\n"
              "g = torch.Generator().manual_seed(0)\n"
              "a = torch.randn(708, 140, generator=g).cuda().bfloat16()\n"
              "b = torch.randn(140, 830, generator=g).cuda().bfloat16()\n"
              "print(tg.streamk_mm(tg.streamk_mm(a, b)[:, :140], b).float().sum().item())\n")

    def run(value):
        env = {**os.environ, "TORCH_GROUPED_PDL": value}
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)

    on, off = run("1"), run("0")
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    assert on.stdout == off.stdout
    bad = run("yes")
    assert bad.returncode != 0 and "TORCH_GROUPED_PDL must be 0 or 1; got 'yes'" in bad.stderr


# Operands TMA cannot address whose rows start on 4-byte boundaries (an even K or N, an offset
# view), copied row by row straight into the kernel's stages (kernels/row_copy.cuh): pieces of 4,
# 8 and 16 bytes, K and N tails inside a 64-element line and rows past M zero-filled. streamk_mm
# takes them by default where sched::row_copies_pay says they pay; the tests force them
# (TORCH_GROUPED_ROW_COPIES=1). Rows only 2-byte aligned (odd K or N) go through pitched copies
# (the other operand's rows still by row copies).
@pytest.fixture
def row_copies(monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "1")
    return monkeypatch


ROW_COPY_SHAPES = [
    (708, 830, 140),     # A rows of 280 bytes (8-byte pieces), B rows of 1660 (4-byte pieces)
    (333, 78, 5002),     # 4-byte pieces both; B's N-major lines clipped at 78, odd M
    (200, 300, 12),      # K shorter than one line
    (130, 250, 1000),    # A through TMA (rows of 2000 bytes), B by rows of 500 bytes
    (128, 100, 20002),   # one tile over the whole grid: Stream-K segments of a deep K
    (1, 10, 66),         # a single row
]


def _row_copy_operands(m, n, k, dtype, b_layout, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).to("cuda", dtype)
    b = torch.randn(k, n, generator=g).to("cuda", dtype)
    if b_layout == "k_major":
        b = b.T.contiguous().T
    elif b_layout == "offset":  # base 4 bytes past 16-byte alignment, row stride n + 6
        b = torch.randn(k, n + 6, generator=g).to("cuda", dtype)[:, 2 : n + 2]
    return a, b


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", ROW_COPY_SHAPES)
def test_row_copies_match_mm(decomposition, m, n, k, row_copies):
    a, b = _row_copy_operands(m, n, k, torch.bfloat16, "n_major")
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition), a, b)


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k, b_layout", [
    (708, 830, 140, "n_major"),   # 4 column tiles, the last 62 wide: N-major lines clipped in its third box
    (497, 212, 4762, "k_major"),  # one column tile, 212 of its 256 rows of B: the rest zero-filled
    (333, 78, 5002, "offset"),    # B's 78 columns in a 256-wide tile, 4 bytes off the 16-byte grid
])
def test_wide_row_copies_match_mm(decomposition, m, n, k, b_layout, row_copies):
    """The 128 x 256 row-copy kernel (its producer copies 256 lines of B a stage, in four column
    boxes when B is N-major), on every decomposition: the reference, every element written."""
    row_copies.setenv("TORCH_GROUPED_STREAMK_TILE", "128x256")
    a, b = _row_copy_operands(m, n, k, torch.bfloat16, b_layout)
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition), a, b)


def test_wide_row_copies_takes_its_kernel(row_copies):
    """The forced 128 x 256 tile with row copies runs the one row-copy kernel of 128 x 256 tiles (the
    profiler's kernel names; not under compute-sanitizer, which hides them)."""
    row_copies.setenv("TORCH_GROUPED_STREAMK_TILE", "128x256")
    for b_layout in ("n_major", "k_major"):
        a, b = _row_copy_operands(497, 212, 4762, torch.bfloat16, b_layout)
        names = kernels_launched(lambda: tg.streamk_mm(a, b))
        assert row_copy_kernels(names) == 1 and matmul_tiles(names) == {(128, 256)}, names


# (m, n, k, B layout): every case has an operand TMA cannot address, so the two runs below take
# different paths; in (1000, 136, 136) only the offset B (A goes through TMA beside its row copies);
# in the last two one operand's rows are 2-byte aligned (an odd K, an odd N): a pitched copy of it
# beside the other's row copies.
BITWISE_CASES = [(m, n, k, layout) for m, n, k in [(333, 78, 5002), (708, 830, 140)]
                 for layout in ("n_major", "k_major", "offset")] + [
    (1000, 136, 136, "offset"), (333, 78, 5001, "n_major"), (333, 77, 5002, "n_major")]


@pytest.mark.parametrize("tile", ["128x128", "128x256", "64x64"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m, n, k, b_layout", BITWISE_CASES)
def test_row_copies_are_bitwise_the_copies(dtype, m, n, k, b_layout, tile, row_copies):
    """The row copies put exactly what TMA reads from the pitched copies into the stages: with the
    same tile (so the same plan; 128 x 128, 128 x 256 or 64 x 64, the tiles with a row-copy kernel)
    the results are bitwise equal, for both B layouts, both dtypes and an offset B. (Clusters off:
    the pitched copies' 128 x 256 plan would run over pair tiles, which the row copies never do.)"""
    a, b = _row_copy_operands(m, n, k, dtype, b_layout)
    row_copies.setenv("TORCH_GROUPED_STREAMK_TILE", tile)
    row_copies.setenv("TORCH_GROUPED_STREAMK_CLUSTER", "0")
    poison()
    rows = tg.streamk_mm(a, b, decomposition="stream_k")
    row_copies.setenv("TORCH_GROUPED_ROW_COPIES", "0")
    copies = tg.streamk_mm(a, b, decomposition="stream_k")
    check(rows, a, b)
    assert torch.equal(rows, copies)


def test_row_copies_of_offset_and_broadcast_rows(row_copies):
    """Views at every 2-byte offset of a shared buffer (even offsets: row copies of 4-, 8- or
    16-byte pieces; odd ones: pitched copies), and a broadcast A (row stride 0: TMA refuses it,
    the row copies read the one row M times)."""
    base = torch.randn(1200, 1202, device="cuda", dtype=torch.bfloat16)
    for offset in range(8):
        a = base[offset : offset + 301, offset : offset + 1001]
        b = base[offset + 5 : offset + 1006, 4 : 4 + 202]
        check(tg.streamk_mm(a, b, decomposition="stream_k"), a, b)
    a = torch.randn(1, 777, device="cuda", dtype=torch.bfloat16).expand(300, 777)
    b = base[:777, :130]
    check(tg.streamk_mm(a, b, decomposition="data_parallel"), a, b)


def test_row_copies_graph_replays_with_new_inputs(row_copies):
    """Captured in a CUDA graph (no host synchronisation): replays read the operands' new values."""
    a, b = _row_copy_operands(333, 78, 5002, torch.bfloat16, "n_major")
    out = tg.streamk_mm(a, b, decomposition="stream_k")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.streamk_mm(a, b, decomposition="stream_k")
    a.copy_(torch.randn_like(a))
    b.copy_(torch.randn_like(b))
    graph.replay()
    check(out, a, b)


def test_row_copies_plan_with_their_own_model():
    """`auto` plans the row-copy kernel with its own model (the H100's fitted `rows` entry, or
    TORCH_GROUPED_STREAMK_MODEL_ROWS), not the 128 x 128 TMA kernel's: with the rows model making
    cut tiles dear `auto` is bitwise the data-parallel plan, with it making only iterations count
    the Stream-K plan on every SM, whatever TORCH_GROUPED_STREAMK_MODEL_NARROW says (a fresh process
    each: the models are read once; row copies forced, since a GPU whose copies are cheap sends this
    deep-K shape to the pitched copies by default); a malformed value is an error."""
    script = ("import torch, torch_grouped as tg\n"
              "g = torch.Generator().manual_seed(0)\n"
              "a = torch.randn(497, 4762, generator=g).cuda().bfloat16()\n"  # K and N in 4-byte rows
              "b = torch.randn(4762, 212, generator=g).cuda().bfloat16()\n"
              "auto, dp, sk = (tg.streamk_mm(a, b, decomposition=d) for d in ('auto', 'data_parallel', 'stream_k'))\n"
              "print(torch.equal(auto, dp), torch.equal(auto, sk), torch.equal(dp, sk))\n")
    cut_dear, iterations_only = "0,1000,0,1000,1000,1000", "0,0,1,0"

    def run(rows, narrow):
        env = {**os.environ, "TORCH_GROUPED_STREAMK_MODEL_ROWS": rows, "TORCH_GROUPED_STREAMK_MODEL_NARROW": narrow,
               "TORCH_GROUPED_ROW_COPIES": "1"}
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)

    data_parallel, stream_k = run(cut_dear, iterations_only), run(iterations_only, cut_dear)
    assert data_parallel.returncode == 0 and stream_k.returncode == 0, data_parallel.stderr + stream_k.stderr
    assert data_parallel.stdout.split() == ["True", "False", "False"]
    assert stream_k.stdout.split() == ["False", "True", "False"]
    bad = run("1,2,x", iterations_only)
    assert bad.returncode != 0 and "TORCH_GROUPED_STREAMK_MODEL_ROWS must be four or six" in bad.stderr


def test_row_copies_takes_its_kernel(monkeypatch):
    """By default (sched::row_copies_pay) a shape of few tiles (497 x 212: 8 on 132 SMs) whose
    operands TMA cannot address but whose rows are 4-byte aligned takes the row-copy kernel and no
    copy kernel, as does one wave of 8- and 4-byte pieces (708 x 830: 42 tiles); many tiles with
    both operands in 4-byte pieces (1051 x 2898: 207) take the pitched copies;
    TORCH_GROUPED_ROW_COPIES=1 takes the row copies there too, =0 never; a forced 128 x 256 tile
    takes them as well, a forced 192 x 128 one (no row-copy kernel) copies; an odd K (A's rows
    2-byte aligned) copies A beside B's row copies; an aligned call never takes them; another value
    is an error. Deep K over few tiles (497 x 212 x 20004) and the many tiles with row copies forced
    run the row-copy kernel's 128 x 256 tiles, which the stand-in model (StreamKModels::rows_wide)
    prefers there on every GPU's entry; B alone copied in 4-byte pieces beside a pitched A
    (154 x 1234 x 24001) keeps 128 x 128 tiles (rows_wide_b4). (K = 254 and a B of 8.5 MB beside
    the odd K: where copies are cheap, as on an H200, the rule takes row copies in one wave only
    for K <= 256, and beside a pitched copy only for 8 MB or more; these shapes take them on both
    kinds of GPU.)"""
    def taken(a, b):
        names = kernels_launched(lambda: tg.streamk_mm(a, b))
        rows, copies = row_copy_kernels(names), any("pitched_copy" in n for n in names)
        assert rows <= 1 and (rows or copies), names
        return "both" if rows and copies else "rows" if rows else "copies"

    few = _row_copy_operands(497, 212, 254, torch.bfloat16, "n_major")
    wave = _row_copy_operands(708, 830, 140, torch.bfloat16, "n_major")
    many = _row_copy_operands(1051, 2898, 542, torch.bfloat16, "n_major")
    odd = _row_copy_operands(497, 212, 20001, torch.bfloat16, "n_major")
    deep = _row_copy_operands(497, 212, 20004, torch.bfloat16, "n_major")  # 8-byte pieces both
    assert (taken(*few), taken(*wave), taken(*many), taken(*odd)) == ("rows", "rows", "copies", "both")
    assert torch.ops.grouped._streamk_tile(*few)[:2] == [64, 64]  # (a small problem: the 64 x 64 row-copy kernel)
    assert taken(*deep) == "rows" and torch.ops.grouped._streamk_tile(*deep)[:2] == [128, 256]
    b_only = _row_copy_operands(154, 1234, 24001, torch.bfloat16, "n_major")
    assert taken(*b_only) == "both" and torch.ops.grouped._streamk_tile(*b_only)[:2] == [128, 128]
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "1")
    assert (taken(*few), taken(*many), taken(*odd)) == ("rows", "rows", "both")
    assert torch.ops.grouped._streamk_tile(*many)[:2] == [128, 256]
    with monkeypatch.context() as env:
        env.setenv("TORCH_GROUPED_STREAMK_TILE", "128x256")
        assert taken(*few) == "rows"
        env.setenv("TORCH_GROUPED_STREAMK_TILE", "192x128")
        assert taken(*few) == "copies"
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "0")
    assert (taken(*few), taken(*many), taken(*odd)) == ("copies", "copies", "copies")
    aligned = _row_copy_operands(704, 832, 144, torch.bfloat16, "n_major")
    assert row_copy_kernels(kernels_launched(lambda: tg.streamk_mm(*aligned))) == 0
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_ROW_COPIES must be 0 or 1; got 'yes'"):
        tg.streamk_mm(*few)


def cluster_sizes(names):
    """The cluster sizes of the matmul kernels among kernel names (an aligned 128 x 256 output
    without clusters takes the TMA-store variant: the other fields of matmul_configs vary)."""
    return {cluster for cluster, _, _ in matmul_configs(names)}


@pytest.fixture
def clusters(monkeypatch):
    """TORCH_GROUPED_STREAMK_CLUSTER=1: the plan over 256-row pair tiles, in 2 x 1 clusters."""
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_CLUSTER", "1")
    return monkeypatch


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", [
    (1000, 3000, 576),   # 4 pair rows of 12 tiles: one wave of 66 clusters and a ragged one
    (300, 520, 4000),    # 3 tile rows: the second pair's lower half past M
    (130, 250, 20000),   # one pair row, its second half 2 rows deep: the separate fixup with pair slots
    (256, 128, 20000),   # N <= 128: the 128x128 pair kernel, one pair over long K
    (128, 128, 65536),   # one pair, its lower half past M: the fixup's two levels
    (8, 8, 8),
])
@pytest.mark.parametrize("inputs", ["bf16-bn", "bf16-bk", "f16-bn"])
def test_clusters_match_mm(decomposition, m, n, k, inputs, clusters):
    """Every decomposition over pair tiles, B N-major and K-major (each CTA's half of a K-major B
    tile is one box of its map), bf16 and fp16: the reference, every element written, and the same
    bits on a second run (both CTAs' partials in their own slots, summed in K order)."""
    dtype, layout = inputs.split("-")
    a, b = operands(m, n, k, torch.bfloat16 if dtype == "bf16" else torch.float16, layout == "bn")
    poison()
    first = tg.streamk_mm(a, b, decomposition=decomposition)
    check(first, a, b)
    assert torch.equal(tg.streamk_mm(a, b, decomposition=decomposition), first)


@pytest.mark.parametrize("decomposition, splits, grid", [
    ("split_k", 3, 4), ("stream_k", 0, 9), ("two_tile_sk_dp", 0, 2), ("stream_k", 0, 1), ("split_k", 2, 1),
])
def test_clusters_on_small_grids(decomposition, splits, grid, clusters):
    """A grid of a few CTAs is half as many clusters (an odd grid: its last CTA unused), each with
    several pair tiles' partials to hand over; a grid of one CTA runs without clusters."""
    a, b = operands(700, 900, 3000)
    poison()
    check(tg.streamk_mm(a, b, decomposition=decomposition, splits=splits, grid=grid), a, b)


@pytest.mark.parametrize("setting", ["1", "0"])
def test_cluster_switch_takes_its_kernel(setting, monkeypatch):
    """TORCH_GROUPED_STREAMK_CLUSTER=1 runs the clustered kernel where one exists (bf16 and fp16,
    either B layout, either tile), one CTA per walker otherwise (row copies, TF32); 0 never;
    another value is an error. (The profiler sees no kernels under compute-sanitizer.)"""
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_CLUSTER", setting)
    for n, dtype, b_n_major, clustered in ((120, torch.bfloat16, True, True), (3000, torch.bfloat16, True, True),
                                           (3000, torch.float16, True, True), (3000, torch.bfloat16, False, True),
                                           (120, torch.float16, False, True)):
        a, b = operands(512, n, 4096, dtype, b_n_major)  # (16-byte rows: TMA reads B; K past the 64 x 64 tile's)
        names = kernels_launched(lambda: tg.streamk_mm(a, b, decomposition="stream_k"))
        assert cluster_sizes(names) == {2 if clustered and setting == "1" else 1}, names
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "1")
    a, b = operands(512, 100, 1024)  # B's rows 200 bytes apart: row copies
    names = kernels_launched(lambda: tg.streamk_mm(a, b))
    assert cluster_sizes(names) == {1} and row_copy_kernels(names) == 1, names
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_CLUSTER", "2")
    with pytest.raises(ValueError, match="TORCH_GROUPED_STREAMK_CLUSTER must be 0 or 1; got '2'"):
        tg.streamk_mm(a, b)


@pytest.mark.parametrize("m, n, k", [
    (1000, 3000, 1030),  # K off the 16-byte grid (a pitched copy of A)
    (1000, 3000, 1024),  # read and written in place: no clusters
    (2900, 1500, 571),   # A copied, output rows unaligned
    (500, 1500, 571),    # the same with a few tiles
    (3000, 120, 2571),   # 128 x 128 tiles: 24 of them (K past the 64 x 64 tile's rule)
])
def test_clusters_by_default(m, n, k, monkeypatch):
    """Unset, the clusters run where sched::streamk_clusters_pay says (rules tested in
    test_sched.py): here in place means contiguous operands with K and N on the 16-byte grid; the
    result is the reference's either way."""
    monkeypatch.delenv("TORCH_GROUPED_STREAMK_CLUSTER", raising=False)
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "0")
    a, b = operands(m, n, k)
    tile_m, tile_n = torch.ops.grouped._streamk_tile(a, b)[:2]
    in_place = (2 * k) % 16 == 0 and (2 * n) % 16 == 0
    expect = tile_m == 128 and torch.ops.grouped._streamk_clusters_pay(m, n, tile_n, in_place=in_place)
    names = kernels_launched(lambda: tg.streamk_mm(a, b))
    assert cluster_sizes(names) == {2 if expect else 1}, (tile_n, names)
    poison()
    check(tg.streamk_mm(a, b), a, b)


@pytest.mark.parametrize("m, n, k", [
    (1000, 3000, 1030),  # a pitched copy of A, 128 x 256 tiles: in clusters
    (1000, 3000, 1024),  # read and written in place: no clusters
    (3000, 120, 2571),   # 128 x 128 tiles, 24 of them: no clusters (K past the 64 x 64 tile's rule)
    (290, 136, 248),     # the 64 x 64 tiles: two CTAs an SM
    (2900, 1500, 571),   # unaligned, many tiles
])
def test_walk_reports_the_plan_that_runs(m, n, k, monkeypatch):
    """_streamk_walk (the sweeps' features read the plan through it) reports the walk streamk_mm
    runs: 256-row pair tiles over the resident clusters (at most half the grid) where the call runs
    in clusters, else the tile's rows (128, 192 where `auto` takes the tall tile, 64 for the small
    problems, whose kernel runs two CTAs an SM) over the grid;
    under a smaller grid and a forced setting too;
    a dtype our kernel does not take (fp32: its TF32 path has no clustered walk) is refused."""
    monkeypatch.delenv("TORCH_GROUPED_STREAMK_CLUSTER", raising=False)
    monkeypatch.setenv("TORCH_GROUPED_ROW_COPIES", "0")
    a, b = operands(m, n, k)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    clustered = cluster_sizes(kernels_launched(lambda: tg.streamk_mm(a, b))) == {2}
    tile_m, walkers = torch.ops.grouped._streamk_walk(a, b)
    rows = torch.ops.grouped._streamk_tile(a, b)[0]
    if clustered:
        assert tile_m == 256 and sms // 2 - 8 <= walkers <= sms // 2, walkers
        assert torch.ops.grouped._streamk_walk(a, b, 10) == [256, 5]
    else:
        assert [tile_m, walkers] == [rows, 2 * sms if rows == 64 else sms]
        assert torch.ops.grouped._streamk_walk(a, b, 10) == [torch.ops.grouped._streamk_tile(a, b, 10)[0], 10]
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_CLUSTER", "0")
    assert torch.ops.grouped._streamk_walk(a, b) == [rows, 2 * sms if rows == 64 else sms]
    with pytest.raises(ValueError, match="_streamk_walk: our kernel's walk is reported for bf16 and fp16"):
        torch.ops.grouped._streamk_walk(a.float(), b.float())


def test_clusters_in_cuda_graph(clusters):
    """The clustered kernel with its cached counters, captured and replayed on new inputs."""
    a, b = operands(300, 700, 6000)
    run = lambda: tg.streamk_mm(a, b, decomposition="stream_k")  # noqa: E731
    run()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = run()
    for _ in range(3):
        a.normal_(), b.normal_()
        graph.replay()
        check(out, a, b)
