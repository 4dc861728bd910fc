import pytest
import torch
from hypothesis import given, settings, strategies as st

import reference
import torch_grouped as tg

DECOMPOSITIONS = ["auto", "data_parallel", "split_k", "stream_k", "dp_one_tile_sk", "two_tile_sk_dp"]


@settings(max_examples=30, deadline=None)
@given(m=st.integers(0, 200), n=st.integers(0, 200), k=st.integers(0, 400),
       decomposition=st.sampled_from(DECOMPOSITIONS), grid=st.integers(0, 13), splits=st.integers(0, 6))
def test_property_every_decomposition(m, n, k, decomposition, grid, splits):
    a, b = torch.randn(m, k, dtype=torch.float64), torch.randn(k, n, dtype=torch.float64)
    out = tg.streamk_mm(a, b, decomposition=decomposition, grid=grid, splits=splits)
    reference.assert_close(out, a @ b, torch.float64)


@pytest.mark.parametrize("decomposition, grid, splits, segments, separate", [
    ("stream_k", 40, 0, 40, True), ("stream_k", 9, 0, 9, False), ("split_k", 13, 16, 16, False)])
def test_two_level_fixup(decomposition, grid, splits, segments, separate):
    """One 64x64 CPU tile of 64 K iterations cut into 40 segments (the separate fixup kernel's
    order: 8 parts of 5), 9 and 16 (FixupTree: runs, then the runs): still the product."""
    plan = torch.ops.grouped._schedule_streamk(64, 64, 2048, 64, 64, 32, decomposition, max(splits, 1), grid)
    assert len(plan) == segments and bool(plan[:, 14].all()) == separate  # the path the case names
    a, b = torch.randn(64, 2048, dtype=torch.float64), torch.randn(2048, 64, dtype=torch.float64)
    out = tg.streamk_mm(a, b, decomposition=decomposition, grid=grid, splits=splits)
    reference.assert_close(out, a @ b, torch.float64)


def test_auto_plans_remembered_per_shape(device):
    """`auto` remembers its plan per set of inputs (common/streamk_plan_cache.h): shapes that
    differ in one size only, called in turn, each get their own plan (a plan of another K would
    skip or repeat K blocks, of another M or N leave tiles out), on the second call as on the first."""
    shapes = [(300, 200, 700), (300, 200, 704), (300, 264, 700), (364, 200, 700), (300, 200, 40)]
    operands = [(torch.randn(m, k, device=device), torch.randn(k, n, device=device)) for m, n, k in shapes]
    for _ in range(2):
        for a, b in operands:
            reference.assert_close(tg.streamk_mm(a, b), a.double() @ b.double(), torch.float32)


@pytest.mark.parametrize("decomposition", DECOMPOSITIONS)
def test_bitwise_repeatable(decomposition, device):
    a = torch.randn(300, 700, device=device)
    b = torch.randn(700, 200, device=device)
    first = tg.streamk_mm(a, b, decomposition=decomposition)
    for _ in range(3):
        assert torch.equal(tg.streamk_mm(a, b, decomposition=decomposition), first)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"decomposition": "magic"}, ValueError, r"decomposition must be one of auto, .*; got 'magic'"),
    ({"splits": -1}, ValueError, r"splits must be >= 0"),
    ({"grid": -2}, ValueError, r"grid must be >= 0"),
])
def test_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        tg.streamk_mm(torch.randn(4, 5), torch.randn(5, 6), **kwargs)


@pytest.mark.parametrize("a, b, match", [
    (torch.randn(4, 5), torch.randn(6, 7), r"b.size\(0\) must equal a.size\(1\) = 5"),
    (torch.randn(4, 5, 1), torch.randn(5, 7), r"a must be 2-D \[M, K\]"),
    (torch.randn(4, 5), torch.randn(5, 7, dtype=torch.float16), r"b has dtype Half but a has Float"),
    (torch.ones(4, 5, dtype=torch.int8), torch.ones(5, 7, dtype=torch.int8), r"a has dtype Char; expected one of"),
    (torch.randn(4, 3), torch.randn(3), r"b must be 2-D \[K, N\], got shape \[3\]"),
    (torch.randn(4, 3), torch.randn(2, 3, 5), r"b must be 2-D \[K, N\], got shape \[2, 3, 5\]"),
])
def test_bad_inputs(a, b, match):
    with pytest.raises(RuntimeError, match=match):
        tg.streamk_mm(a, b)


def test_model_from_the_environment(monkeypatch):
    """TORCH_GROUPED_STREAMK_MODEL replaces `auto`'s constants: where iterations cost nothing and
    a cut tile costs much, `auto` is data-parallel; where iterations cost much and the workspace
    nothing, it spreads the single tile's K over the CTAs (here the schedule dump and the op on
    the CPU; on the GPU the value is read once per device). The result is right under both."""
    m, n, k = 64, 64, 4096  # one 64x64 CPU tile, 128 K iterations
    schedule = lambda d: torch.ops.grouped._schedule_streamk(m, n, k, 64, 64, 32, d, 1, 8)  # noqa: E731
    a, b = torch.randn(m, k, dtype=torch.float64), torch.randn(k, n, dtype=torch.float64)
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_MODEL", "0,1000,0,1000,1000,1000")
    assert torch.equal(schedule("auto"), schedule("data_parallel"))
    reference.assert_close(tg.streamk_mm(a, b), a @ b, torch.float64)
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_MODEL", "0,0,1,0")  # four constants: e = f = 0
    assert len(schedule("auto")) > 1  # the tile is cut
    reference.assert_close(tg.streamk_mm(a, b), a @ b, torch.float64)


def test_tile_of_the_cpu_path():
    """_streamk_tile says which tile streamk_mm runs: on the CPU always the CPU path's 64 x 64 x 32;
    its inputs are checked as the op's."""
    assert torch.ops.grouped._streamk_tile(torch.randn(300, 700), torch.randn(700, 900)) == [64, 64, 32]
    with pytest.raises(RuntimeError, match=r"b.size\(0\) must equal a.size\(1\) = 5"):
        torch.ops.grouped._streamk_tile(torch.randn(4, 5), torch.randn(6, 7))


@pytest.mark.parametrize("value", ["1,2,3", "1,2,3,4,5", "1,2,3,4,5,6,7", "1,x,3,4", "1,2,,4", "1,-2,3,4", "1,2,3,inf"])
def test_model_from_the_environment_rejects(value, monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_MODEL", value)
    with pytest.raises(ValueError, match="TORCH_GROUPED_STREAMK_MODEL must be four or six non-negative numbers"):
        torch.ops.grouped._schedule_streamk(64, 64, 4096, 64, 64, 32, "auto", 1, 8)
    with pytest.raises(ValueError, match="TORCH_GROUPED_STREAMK_MODEL must be four or six"):
        tg.streamk_mm(torch.randn(64, 256), torch.randn(256, 64))
