"""fp32 streamk_mm on the Hopper Stream-K kernel through TF32 WGMMA (TORCH_GROUPED_FP32_KERNELS=1, else
where it beats cuBLAS):
fp32-accurate by default (3xTF32: both operands staged as TF32 hi and lo parts, K three times as
long), one TF32 pass where torch allows TF32 matmuls; every decomposition, K off the 32-element
step, operands TMA cannot address, transposed and offset views, bitwise repeats, CUDA graphs; and
which of our kernel and cuBLAS runs by default."""
import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER_ONLY, allow_tf32, kernels_launched, poison, set_env
from reference import TF32_SPLIT_TOLERANCE, TF32_TOLERANCE

pytestmark = HOPPER_ONLY

DECOMPOSITIONS = ["auto", "data_parallel", "split_k", "stream_k", "dp_one_tile_sk", "two_tile_sk_dp"]
SHAPES = [
    (300, 520, 4000),    # 12 tiles of 128 x 128 over 132 CTAs
    (1000, 900, 64),     # two K steps of 32 per part
    (130, 250, 1000),    # M, N off the tile; K off the step (hi padded to 1024, lo after it)
    (1920, 640, 576),    # 75 tiles
    (8, 8, 8),           # one partial tile, K under one step
    (128, 128, 20000),   # one tile over 132 CTAs: the separate fixup kernel
    (200, 120, 37),      # K = 37: rows TMA cannot address (148 bytes), staged either way
]
KERNEL = "GroupedGemmConfig<cutlass::tfloat32_t"


@pytest.fixture(autouse=True)
def tf32_kernel(monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_FP32_KERNELS", "1")


def operands(m, n, k, seed=0, b_k_major=False, a_transposed=False):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(k, m, generator=g).cuda().T if a_transposed else torch.randn(m, k, generator=g).cuda()
    b = torch.randn(n, k, generator=g).cuda().T if b_k_major else torch.randn(k, n, generator=g).cuda()
    return a, b


def error(out, a, b):
    assert not out.isnan().any(), "unwritten elements"
    return reference.rel_error(out, a.double() @ b.double())


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
@pytest.mark.parametrize("m, n, k", SHAPES)
def test_fp32_accurate_by_default(decomposition, m, n, k):
    """3xTF32 over each decomposition's work units (a unit's K range may cut the three parts
    anywhere): the float64 reference within fp32-level error, the same bits on a second run."""
    a, b = operands(m, n, k, seed=m + k)
    poison()
    with allow_tf32(False):
        out = tg.streamk_mm(a, b, decomposition=decomposition)
        again = tg.streamk_mm(a, b, decomposition=decomposition)
    assert out.dtype == torch.float32
    assert error(out, a, b) <= TF32_SPLIT_TOLERANCE
    assert torch.equal(again, out), "not repeatable"


@pytest.mark.parametrize("b_k_major", [False, True])
@pytest.mark.parametrize("a_transposed", [False, True])
@pytest.mark.parametrize("tf32", [False, True])
@pytest.mark.parametrize("k", [5, 64, 300])
def test_operand_layouts(b_k_major, a_transposed, tf32, k):
    """B N-major (its columns staged as rows) or K-major (read in place by one TF32 pass where its
    rows are 16-byte aligned), A transposed, K whose rows TMA cannot address (5): every path of
    the staging, in both modes."""
    a, b = operands(260, 300, k, seed=k, b_k_major=b_k_major, a_transposed=a_transposed)
    poison()
    with allow_tf32(tf32):
        out = tg.streamk_mm(a, b, decomposition="stream_k")
    assert error(out, a, b) <= (TF32_TOLERANCE if tf32 else TF32_SPLIT_TOLERANCE)


def test_offset_views():
    """Operands that start inside larger tensors (no 16-byte aligned base)."""
    base_a, base_b = operands(400, 400, 500, seed=3)
    a, b = base_a[1:300, 3:403], base_b[3:403, 2:259]
    poison()
    with allow_tf32(False):
        out = tg.streamk_mm(a, b, decomposition="two_tile_sk_dp")
    assert error(out, a, b) <= TF32_SPLIT_TOLERANCE


def test_tf32_where_torch_allows_it():
    """allow_tf32 on: one TF32 pass, TF32's error, far above the split's."""
    a, b = operands(700, 500, 1000, seed=4)
    with allow_tf32(True):
        tf32 = tg.streamk_mm(a, b)
    with allow_tf32(False):
        split = tg.streamk_mm(a, b)
    assert error(tf32, a, b) <= TF32_TOLERANCE
    assert error(tf32, a, b) > 10 * error(split, a, b), "allow_tf32 changed nothing"


def test_split_is_as_accurate_as_cublas_fp32():
    """Against fp32 cuBLAS (TF32 off) on K = 4096: within 4x its error."""
    a, b = operands(512, 384, 4096, seed=7)
    with allow_tf32(False):
        ours, peer = tg.streamk_mm(a, b), a @ b
    assert error(ours, a, b) <= 4 * error(peer, a, b), (error(ours, a, b), error(peer, a, b))


@pytest.mark.parametrize("decomposition, splits, grid", [("split_k", 3, 2), ("split_k", 16, 5), ("stream_k", 0, 7)])
def test_grids_and_splits(decomposition, splits, grid):
    a, b = operands(700, 900, 3000, seed=5)
    poison()
    with allow_tf32(False):
        out = tg.streamk_mm(a, b, decomposition=decomposition, splits=splits, grid=grid)
    assert error(out, a, b) <= TF32_SPLIT_TOLERANCE


@pytest.mark.parametrize("tf32", [False, True])
def test_fp32_takes_its_kernel(tf32):
    """The TF32 Stream-K kernel runs, after the staging kernel (B N-major is staged in both modes).
    (The profiler sees no kernels under compute-sanitizer.)"""
    a, b = operands(300, 520, 4000)
    with allow_tf32(tf32):
        names = kernels_launched(lambda: tg.streamk_mm(a, b))
    assert any(KERNEL in n for n in names), names
    assert any("tf32_operand_kernel" in n for n in names), names


@pytest.mark.parametrize("setting, tf32, m, n, ours", [
    (None, False, 1024, 1024, True),   # 3xTF32 where m and n's harmonic mean reaches 1024
    (None, False, 300, 520, False),    # smaller: the staging outweighs the gain
    (None, True, 1024, 1024, False),   # one TF32 pass: cuBLAS's TF32 is faster
    ("0", False, 1024, 1024, False),
    ("1", True, 300, 520, True),
])
def test_default_dispatch(monkeypatch, setting, tf32, m, n, ours):
    """TORCH_GROUPED_FP32_KERNELS unset: our kernel where it was measured faster than cuBLAS;
    0: cuBLAS; 1: our kernel (the fixture's setting); another value is an error."""
    a, b = operands(m, n, 512)
    set_env(monkeypatch, "TORCH_GROUPED_FP32_KERNELS", setting)
    with allow_tf32(tf32):
        names = kernels_launched(lambda: tg.streamk_mm(a, b))
        assert any(KERNEL in n for n in names) == ours, names
        assert (torch.ops.grouped._streamk_tile(a, b)[2] == 32) == ours  # the TF32 kernel's K step


def test_bad_setting(monkeypatch):
    a, b = operands(300, 520, 64)
    monkeypatch.setenv("TORCH_GROUPED_FP32_KERNELS", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP32_KERNELS must be 0 or 1"):
        tg.streamk_mm(a, b)


@pytest.mark.parametrize("tf32", [False, True])
def test_cuda_graph(tf32):
    """Captured once (the staging included), replayed with new operand values."""
    a, b = operands(640, 384, 2000, seed=6)
    with allow_tf32(tf32):
        tg.streamk_mm(a, b, decomposition="stream_k")  # warm up outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = tg.streamk_mm(a, b, decomposition="stream_k")
        for seed in (11, 12):
            fresh_a, fresh_b = operands(640, 384, 2000, seed=seed)
            a.copy_(fresh_a), b.copy_(fresh_b)
            out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            assert torch.equal(out, tg.streamk_mm(a, b, decomposition="stream_k"))
