import itertools

import pytest
import torch
from hypothesis import given, settings, strategies as st

import reference
import torch_grouped as tg
from harness import kernels_launched

# Kernel variants of the CUDA path (TORCH_GROUPED_PERMUTE_KERNEL, read once per call): "" is the
# default (wider elements where whole runs move, the small-axis kernel where one axis of a transpose
# is short, TMA-loaded tiles, the fast gather; "next" is its old name), "tma" the TMA-loaded tiles
# alone, "tile2d" the same tiles with plain loads, "legacy" the box kernel with the plain gather
# (the default until run 22), "box" the box kernel even where no vector fits.
KERNEL_VARIANTS = ["", "tma", "tile2d", "legacy", "box"]

ALL_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
              torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64]


def _random(shape, dtype, device):
    x = torch.randn(shape, device=device) * 50
    return x > 0 if dtype == torch.bool else x.to(dtype)


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_every_permutation_of_small_ranks(rank, device):
    x = _random([3, 5, 1, 7][:rank], torch.float16, device)
    for perm in itertools.permutations(range(rank)):
        assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous()), perm


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=6), data=st.data(),
       dtype=st.sampled_from(ALL_DTYPES), step=st.integers(1, 2), offset=st.integers(0, 1))
def test_property_random_permutations(shape, data, dtype, step, offset):
    perm = data.draw(st.permutations(range(len(shape))))
    # a strided view with a storage offset: every other element of a larger tensor, shifted
    base = _random([s * step + offset for s in shape], dtype, "cpu")
    x = base[tuple(slice(offset, None, step) for _ in shape)]
    assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous())


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 20), h=st.integers(1, 5), w=st.integers(1, 5),
       f=st.sampled_from([2, 3, 4, 8, 16]), g=st.sampled_from([2, 4, 8]),
       dtype=st.sampled_from([torch.float32, torch.int8, torch.float16]))
def test_property_split_layouts(n, c, h, w, f, g, dtype):
    x = _random([n, c, h, w], dtype, "cpu")
    packed = tg.layout_transform(x, "NCHW", f"NCHW{f}c")
    assert torch.equal(packed, reference.layout_transform(x, "NCHW", f"NCHW{f}c"))
    repacked = tg.layout_transform(packed, f"NCHW{f}c", f"NHWC{g}c")
    assert torch.equal(repacked, reference.layout_transform(packed, f"NCHW{f}c", f"NHWC{g}c"))
    assert torch.equal(tg.layout_transform(packed, f"NCHW{f}c", "NCHW")[:, :c], x)


@pytest.mark.parametrize("dims, match", [
    ([0, 1], r"dims has 2 entries; expected one per dimension of x = 3"),
    ([0, 0, 1], r"dims\[1\] = 0 repeats a dimension"),
    ([0, 1, 3], r"dims\[2\] = 3 is out of range for a 3-D tensor"),
    ([0, 1, -4], r"dims\[2\] = -4 is out of range"),
])
def test_permute_bad_dims(dims, match):
    with pytest.raises(ValueError, match=match):
        tg.permute_copy(torch.randn(2, 3, 4), dims)


def test_permute_rank_above_eight():
    with pytest.raises(ValueError, match=r"x has 9 dimensions; at most 8 are supported"):
        tg.permute_copy(torch.randn([1] * 9), list(range(9)))


@pytest.mark.parametrize("shape, src, dst, error, match", [
    ((2, 3, 4, 5), "", "NCHW", ValueError, r"src_layout is empty"),
    ((2, 3, 4, 5), "NCHW", "NCHW4", ValueError, r"dst_layout 'NCHW4' has a split size without its lower-case axis"),
    ((2, 3, 4, 5), "NCHW", "NCHW4x", ValueError, r"has the sub-axis x but not its axis X"),
    ((2, 3, 4, 5), "NCHC", "NCHW", ValueError, r"src_layout 'NCHC' names axis C twice"),
    ((2, 3, 4, 5), "NCH", "NCH", ValueError, r"x has 4 dimensions but src_layout 'NCH' has 3 axes"),
    ((2, 3, 4, 5, 3), "NCHW4c", "NCHW", RuntimeError, r"x.size\(4\) = 3 but src_layout 'NCHW4c' splits C by 4"),
    ((2, 3, 4, 5), "NCHW", "NHW", ValueError, r"dst_layout 'NHW' lacks axis C"),
    ((2, 3, 4, 5), "NCHW", "NCHWD", ValueError, r"dst_layout 'NCHWD' has axis D which src_layout 'NCHW' lacks"),
    ((2, 3, 4, 5), "NCHW", "NCHW0c", ValueError, r"splits an axis by 0"),
    ((2, 3, 4, 5), "NCHW", "NCHW4c2c", ValueError, r"splits axis C twice"),
    ((2, 3, 4, 5), "NC-W", "NCHW", ValueError, r"src_layout 'NC-W' has '-' at position 2"),
])
def test_layout_bad_strings(shape, src, dst, error, match):
    with pytest.raises(error, match=match):
        tg.layout_transform(torch.randn(shape), src, dst)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_huge_int8_above_2_to_the_31_elements():
    """64-bit indexing: a transpose and a 3-D permutation of a 2.15e9-element int8 tensor."""
    x = torch.randint(-128, 127, (65537, 32771), dtype=torch.int8, device="cuda")
    assert x.numel() > 2**31
    out = tg.permute_copy(x, [1, 0])
    assert torch.equal(out, x.T.contiguous())
    del out
    y = x.view(65537, 1, 32771).expand(65537, 1, 32771)
    out = tg.permute_copy(y, [2, 1, 0])
    assert out.shape == (32771, 1, 65537) and torch.equal(out[:, 0, :7], x[:7].T) and torch.equal(out[-3:, 0, -5:], x[-5:, -3:].T)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_unknown_kernel_variant_is_an_error(monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", "tiles")
    with pytest.raises(RuntimeError, match="TORCH_GROUPED_PERMUTE_KERNEL must be next, tma, tile2d, legacy or box"):
        tg.permute_copy(torch.ones(4, 8, device="cuda"), (1, 0))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant", KERNEL_VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.int8, torch.float64, torch.complex128])
def test_gpu_kernel_paths_bit_exact(dtype, variant, monkeypatch):
    """Shapes that take every kernel path: row copies, 2-D and 3-D tiles (tiny axes), misaligned
    and strided views (scalar and gather paths), broadcast (stride-0) inputs."""
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)
    cases = [((1, 384, 512, 128), (0, 3, 1, 2)), ((3, 1024, 7), (2, 1, 0)), ((2, 72, 48, 96), (0, 3, 1, 2)),
             ((1024, 2, 32, 8), (3, 2, 0, 1)), ((32, 64, 256), (1, 0, 2)), ((5, 7, 11, 13), (1, 3, 0, 2)),
             ((4, 8, 16, 3), (3, 0, 2, 1)), ((257, 129), (1, 0)), ((6, 5, 4, 3, 2, 3, 2, 2), (7, 5, 3, 1, 6, 4, 2, 0)),
             ((1, 96, 128, 128), (0, 3, 1, 2)), ((32, 32, 32, 32), (3, 2, 1, 0)),  # the benchmark's, smaller
             # tile2d: partial tiles on both axes, batch axes around and between the two axes
             ((3, 200, 48), (0, 2, 1)), ((272, 16, 5, 32), (3, 2, 0, 1)), ((2, 64, 48, 144), (0, 3, 1, 2))]
    for shape, perm in cases:
        base = _random([s + 1 for s in shape], dtype, "cuda")
        for x in (_random(shape, dtype, "cuda"),                       # contiguous
                  base[tuple(slice(1, None) for _ in shape)],            # offset view: misaligned
                  base[tuple(slice(0, s) for s in shape)]):              # strided view
            assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous()), (shape, perm)
    x = _random((64, 1, 96), dtype, "cuda").expand(64, 80, 96)
    assert torch.equal(tg.permute_copy(x, (2, 0, 1)), x.permute(2, 0, 1).contiguous())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant", KERNEL_VARIANTS)
def test_gpu_permute_in_cuda_graph(variant, monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)  # (32, 6144) transpose: tile2d / tma apply
    x = torch.randn(64, 96, 32, device="cuda", dtype=torch.float16)
    tg.permute_copy(x, [2, 0, 1])  # warm up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.permute_copy(x, [2, 0, 1])
    x.copy_(torch.randn_like(x))
    graph.replay()
    assert torch.equal(out, x.permute(2, 0, 1).contiguous())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant", KERNEL_VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.float64,
                                   torch.complex128])
def test_gpu_transposes_bit_exact(dtype, variant, monkeypatch):
    """Batched 2-D transposes (tile2d's shapes): exact and ragged tile counts, 16-byte aligned
    strided views (a slice of a wider tensor), a broadcast batch axis, layout_transform."""
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)
    cases = [((512, 256), (1, 0)), ((48, 1040), (1, 0)), ((4, 384, 136), (0, 2, 1)), ((4, 384, 136), (2, 0, 1)),
             ((3, 128, 5, 64), (2, 3, 0, 1)), ((16, 2, 128, 16), (3, 1, 0, 2)),
             # two batch axes (simplified (2, 1280, 3, 72)): the TMA map's 5 dimensions all used
             ((2, 72, 3, 4, 5, 64), (0, 3, 4, 5, 2, 1)),
             # three batch axes (simplified (2, 3, 64, 5, 72)): beyond TMA's 5, tma falls back to tile2d
             ((3, 2, 72, 5, 64), (1, 0, 4, 3, 2))]
    for shape, perm in cases:
        x = _random(shape, dtype, "cuda")
        assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous()), (shape, perm, variant)
        wide = _random(shape[:-1] + (shape[-1] + 32,), dtype, "cuda")[..., 16:16 + shape[-1]]
        assert torch.equal(tg.permute_copy(wide, perm), wide.permute(perm).contiguous()), (shape, perm, "view")
    x = _random((1, 256, 96), dtype, "cuda").expand(6, 256, 96)
    assert torch.equal(tg.permute_copy(x, (0, 2, 1)), x.permute(0, 2, 1).contiguous())
    if dtype in (torch.float16, torch.float32, torch.int8):
        y = _random((2, 64, 24, 40), dtype, "cuda")
        assert torch.equal(tg.layout_transform(y, "NCHW", "NHWC"), reference.layout_transform(y, "NCHW", "NHWC"))
        z = _random((2, 8, 24, 40, 16), dtype, "cuda")
        assert torch.equal(tg.layout_transform(z, "NCHW16c", "NCHW"), reference.layout_transform(z, "NCHW16c", "NCHW"))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant,shape,perm,expand,kernel", [
    ("tile2d", (2, 72, 3, 4, 5, 64), (0, 3, 4, 5, 2, 1), None, "tile2d_copy"),
    ("tma", (2, 72, 3, 4, 5, 64), (0, 3, 4, 5, 2, 1), None, "tile2d_tma_copy"),
    ("tma", (512, 256), (1, 0), None, "tile2d_tma_copy"),
    ("tma", (3, 2, 72, 5, 64), (1, 0, 4, 3, 2), None, "tile2d_copy"),  # three batch axes
    ("tma", (1, 256, 96), (0, 2, 1), (6, 256, 96), "tile2d_copy"),     # broadcast batch axis
    ("", (512, 256), (1, 0), None, "tile2d_tma_copy"),
    ("next", (512, 256), (1, 0), None, "tile2d_tma_copy"),  # the default's old name
    ("legacy", (512, 256), (1, 0), None, "box_copy"),
    ("legacy", (3, 64, 64, 7), (3, 1, 2, 0), None, "gather_copy"),
    ("", (8, 16, 4, 24, 40), (0, 1, 3, 4, 2), None, "small_axis_copy"),  # NCHW -> NCHW4c
    ("", (8, 16, 24, 40, 4), (0, 1, 4, 2, 3), None, "small_axis_copy"),  # NCHW4c -> NCHW
    ("", (4, 3, 32, 48), (0, 2, 3, 1), None, "small_axis_copy"),  # NCHW -> NHWC, RGB
    ("", (4, 32, 48, 3), (0, 3, 1, 2), None, "small_axis_copy"),  # NHWC -> NCHW, RGB
    # a 16-byte short axis whose partner is not adjacent to it (c between them), both directions
    ("", (64, 2, 32, 8), (3, 2, 0, 1), None, "small_axis_copy"),
    ("", (8, 32, 64, 2), (2, 3, 1, 0), None, "small_axis_copy"),
    # NCHW8c -> NHWC: whole 16-byte runs move, a transpose of 16-byte elements with a short
    # output-inner axis (960 x 8): a gather of whole vectors
    ("", (8, 8, 24, 40, 8), (0, 2, 3, 1, 4), None, "gather_fast_copy"),
    ("", (32, 64, 256), (1, 0, 2), None, "gather_fast_copy"),  # rows of widened 16-byte elements
    ("", (3, 64, 64, 7), (3, 1, 2, 0), None, "pair_swap_copy"),  # two short inner axes swap
    ("", (2, 3, 48, 40, 5), (0, 4, 2, 3, 1), None, "pair_swap_copy"),  # ... with a batch axis
    ("", (3, 63, 65, 7), (3, 1, 2, 0), None, "gather_fast_copy"),  # H·W = 4095: not in 16-position chunks
    ("", (32, 48), (1, 0), None, "gather_fast_copy"),  # 3 KB: launch-bound, the gather whatever the layout
])
def test_gpu_variant_takes_its_kernel(variant, shape, perm, expand, kernel, monkeypatch):
    """The variant tests above pass whichever kernel runs; this one checks that the variant's
    kernel (or its documented fallback) is the one launched, so that they test what they name."""
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)
    x = _random(shape, torch.float16, "cuda")
    if expand is not None:
        x = x.expand(expand)
    names = kernels_launched(lambda: tg.permute_copy(x, perm))
    assert any(f"::{kernel}<" in n for n in names), names
    if variant in ("", "next") and perm == (0, 2, 3, 1, 4):
        assert any(f"{kernel}<uint4>" in n for n in names), names  # widened to 16-byte elements
    assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant", KERNEL_VARIANTS)
@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.float32, torch.float64])
def test_gpu_blocked_layouts_bit_exact(dtype, variant, monkeypatch):
    """NCHW <-> NCHWxc (the small-axis kernel's and widening's shapes under "next"), padded
    splits, a short axis of 2, and sliced (offset, strided) inputs."""
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)
    for shape, src, dst in [((8, 64, 24, 40), "NCHW", "NCHW4c"), ((8, 16, 24, 40, 4), "NCHW4c", "NCHW"),
                            ((8, 8, 24, 40, 8), "NCHW8c", "NHWC"), ((8, 64, 24, 40), "NCHW", "NCHW8c"),
                            ((8, 62, 24, 40), "NCHW", "NCHW8c"), ((2, 6, 24, 40), "NCHW", "NCHW2c"),
                            ((2, 3, 24, 40, 2), "NCHW2c", "NCHW"), ((2, 3, 7, 5, 4), "NCHW4c", "NCHW")]:
        x = _random(shape, dtype, "cuda")
        assert torch.equal(tg.layout_transform(x, src, dst), reference.layout_transform(x, src, dst)), (shape, src, dst)
        # slices of a larger tensor along H (strided views), the second offset by one row
        for start in (0, 1):
            big = _random(shape[:2] + (shape[2] + 1,) + shape[3:], dtype, "cuda")
            view = big[:, :, start:start + shape[2]]
            assert torch.equal(tg.layout_transform(view, src, dst), reference.layout_transform(view, src, dst))
        flat = _random((x.numel() + 1,), dtype, "cuda")[1:].view(shape)  # offset by one element
        assert torch.equal(tg.layout_transform(flat, src, dst), reference.layout_transform(flat, src, dst))


def _check_poisoned_offset_strided(shape, perm, dtype, row_pad):
    """permute_copy bit-exact on a fresh tensor (its output carved from poisoned memory, so that an
    unwritten element shows), on one offset by an element, and on rows `row_pad` elements longer
    than they are seen (strided)."""
    x = _random(shape, dtype, "cuda")
    torch.empty(1 << 24, device="cuda").fill_(7)  # poison what the output reuses
    assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous())
    flat = _random((x.numel() + 1,), dtype, "cuda")[1:].view(shape)
    assert torch.equal(tg.permute_copy(flat, perm), flat.permute(perm).contiguous())
    wide = _random(shape[:-1] + (shape[-1] + row_pad,), dtype, "cuda")[..., :shape[-1]]
    assert torch.equal(tg.permute_copy(wide, perm), wide.permute(perm).contiguous())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant", ["", "tma", "tile2d"])
@pytest.mark.parametrize("dtype, shape", [(torch.int8, (64, 64, 64, 64)), (torch.int8, (80, 7, 5, 96)),
                                          (torch.float16, (72, 6, 3, 40)), (torch.bfloat16, (136, 2, 9, 48)),
                                          (torch.float32, (64, 4, 3, 20))])
def test_gpu_short_inner_axis_takes_the_next_bit_exact(dtype, shape, variant, monkeypatch):
    """A full reversal whose input-inner axis holds 64-127 bytes: the tile kernels extend the
    tile's i axis by the next input axis (contiguous in the input, apart in the output: two output
    strides), with partial tiles along both axes; offset and strided inputs (other kernels)."""
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)
    _check_poisoned_offset_strided(shape, (3, 2, 1, 0), dtype, row_pad=16)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16])
@pytest.mark.parametrize("shape, perm", [((64, 3, 224, 224), (0, 2, 3, 1)), ((67, 4, 30, 152), (0, 2, 3, 1)),
                                         ((64, 224, 224, 3), (0, 3, 1, 2))])
def test_gpu_small_axis_many_trips_bit_exact(shape, perm, dtype):
    """The small-axis kernel where each warp makes several grid-stride trips (more 16-byte blocks
    than the grid's threads), batch rows that end inside a warp (30·152 positions) and a last
    warp only partly busy: the planes-in direction's staged stores (lanes exchange their output
    offsets) write every element once; the reverse direction beside it."""
    _check_poisoned_offset_strided(shape, perm, dtype, row_pad=8)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.bfloat16, torch.int16, torch.float32])
@pytest.mark.parametrize("shape, perm", [((3, 50, 32, 7), (3, 1, 2, 0)), ((2, 3, 48, 40, 5), (0, 4, 2, 3, 1)),
                                         ((7, 16, 3), (2, 1, 0)), ((2, 2, 96, 15), (3, 1, 2, 0))])
def test_gpu_two_short_axes_swapped_bit_exact(shape, perm, dtype):
    """The two short inner axes of (3, H, W, 7) -> (7, H, W, 3) (pair_swap_copy where both hold less
    than 16 bytes): chunks with a partial last one, a batch axis, one of two elements; offset
    and strided inputs (which take the gather kernel); every output element written."""
    _check_poisoned_offset_strided(shape, perm, dtype, row_pad=1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("shape, perm", [((64, 2, 32, 8), (3, 2, 0, 1)), ((8, 32, 64, 2), (2, 3, 1, 0)),
                                         ((4000, 3, 8), (2, 1, 0)), ((8, 3, 4000), (2, 1, 0)),
                                         ((64, 16, 6, 4), (3, 1, 2, 0)), ((4, 16, 6, 64), (3, 1, 2, 0))])
def test_gpu_short_axis_apart_bit_exact(shape, perm, dtype):
    """A short axis of one 16-byte vector (8 fp16, 4 fp32, 2 fp64) transposed with a long axis that
    is not adjacent to it on the interleaved side ((1024, 2, 32, 8) -> (3, 2, 0, 1)): the
    small-axis kernel with strided runs where the sizes fit it, other kernels elsewhere; offset
    and strided inputs; every output element written."""
    _check_poisoned_offset_strided(shape, perm, dtype, row_pad=2)


PADDED_SPLITS = [((8, 62, 24, 40), "NCHW8c"), ((2, 3, 24, 40), "NCHW8c"), ((1, 13, 8, 16), "NCHW4c"),
                 ((3, 9, 6, 16), "NHWC8c"), ((2, 30, 24, 40), "NCHW16c")]
PADDED_DTYPES = [torch.int8, torch.float16, torch.bfloat16, torch.float32]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", PADDED_DTYPES)
@pytest.mark.parametrize("shape, dst", PADDED_SPLITS)
def test_gpu_padded_split_bit_exact(shape, dst, dtype):
    """A split that does not divide the axis (C = 62 into 8c; C = 3 into one padded block), in one
    kernel where the small-axis kernel applies, after a padding pass elsewhere: bit-exact, offset
    inputs included, every output element written."""
    x = _random(shape, dtype, "cuda")
    torch.empty(1 << 24, device="cuda").fill_(7)  # poison what the output reuses
    assert torch.equal(tg.layout_transform(x, "NCHW", dst), reference.layout_transform(x, "NCHW", dst))
    flat = _random((x.numel() + 8,), dtype, "cuda")[8:].view(shape)  # offset by 8 elements
    assert torch.equal(tg.layout_transform(flat, "NCHW", dst), reference.layout_transform(flat, "NCHW", dst))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", PADDED_DTYPES)
@pytest.mark.parametrize("shape, dst", PADDED_SPLITS)
def test_gpu_padded_split_takes_its_kernel(shape, dst, dtype):
    """Where the small-axis kernel applies (NCHW -> NCHWxc, x at most 8 elements and 16 bytes,
    H·W a multiple of a 16-byte vector) it reads x and writes the padding's zeros itself: the only
    kernel launched."""
    x = _random(shape, dtype, "cuda")
    short, size = int(dst[4:-1]), x.element_size()
    names = kernels_launched(lambda: tg.layout_transform(x, "NCHW", dst))
    if dst.startswith("NCHW") and short <= 8 and short * size <= 16 and shape[2] * shape[3] * size % 16 == 0:
        assert len(names) == 1 and "small_axis_copy" in names[0], names
    else:
        assert len(names) >= 2, names  # the padding pass, then the permutation


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("variant", KERNEL_VARIANTS)
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("channels", [2, 3, 5, 6, 7, 8])
def test_gpu_few_channels_nchw_nhwc_bit_exact(channels, dtype, variant, monkeypatch):
    """NCHW <-> NHWC with a few channels (RGB images): the small-axis kernel for every short size
    from 2 to 8, whether or not it divides a 16-byte vector, plus offset and strided inputs."""
    monkeypatch.setenv("TORCH_GROUPED_PERMUTE_KERNEL", variant)
    for shape, perm in [((3, channels, 24, 48), (0, 2, 3, 1)), ((3, 24, 48, channels), (0, 3, 1, 2)),
                        ((3, channels, 7, 9), (0, 2, 3, 1))]:
        x = _random(shape, dtype, "cuda")
        assert torch.equal(tg.permute_copy(x, perm), x.permute(perm).contiguous()), (shape, perm)
        flat = _random((x.numel() + 1,), dtype, "cuda")[1:].view(shape)  # offset by one element
        assert torch.equal(tg.permute_copy(flat, perm), flat.permute(perm).contiguous()), (shape, perm)
        wide = _random(shape[:-1] + (shape[-1] + 8,), dtype, "cuda")[..., :shape[-1]]  # strided rows
        assert torch.equal(tg.permute_copy(wide, perm), wide.permute(perm).contiguous()), (shape, perm)
