"""fp32 gemm (list API) on the Hopper grouped kernel through TF32 WGMMA
(TORCH_GROUPED_FP32_KERNELS=1, else where it beats cuBLAS): fp32-accurate by default (3xTF32: each A and each Bᵀ staged as
TF32 hi and lo parts, K three times as long), one TF32 pass where torch allows TF32 matmuls;
ragged groups with empty ones, mixed B layouts, K that TMA cannot address, both scheduler modes,
sorted or not, CUDA graphs; and which of our kernel and the loop of cuBLAS runs by default."""
import random

import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER_ONLY, allow_tf32, gemm_replayed, kernels_launched, poison, set_env
from reference import TF32_SPLIT_TOLERANCE, TF32_TOLERANCE

pytestmark = HOPPER_ONLY

KERNEL = "GroupedGemmConfig<cutlass::tfloat32_t"


@pytest.fixture(autouse=True)
def fp32_kernels(monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_FP32_KERNELS", "1")


def list_problem(seed, groups):
    """Ragged groups: empty ones (M, N or K = 0), K off the 32-element step and K = 5 (rows TMA
    cannot address), B N-major or K-major by turns."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    a, b = [], []
    for i in range(groups):
        m = rng.choice([0, 1, 64, 127, 128, 129, 333])
        n = rng.choice([0, 8, 120, 128, 264])
        k = rng.choice([0, 5, 8, 64, 136, 512])
        a.append(torch.randn(m, k, generator=g).cuda())
        b.append(torch.randn(n, k, generator=g).cuda().t() if i % 3 else torch.randn(k, n, generator=g).cuda())
    return a, b


def check(out, a, b, tolerance):
    for o, r in zip(out, reference.gemm(a, b)):
        assert not o.isnan().any(), "unwritten elements"
        err = reference.rel_error(o, r)
        assert err <= tolerance, f"relative error {err:.3g} > {tolerance:.3g} for {tuple(r.shape)}"


@pytest.mark.parametrize("schedule", ["host", "device"])
@pytest.mark.parametrize("sort_by_k", [True, False])
def test_fp32_accurate_by_default(schedule, sort_by_k):
    a, b = list_problem(2 * (schedule == "host") + sort_by_k, 40)
    poison()
    with allow_tf32(False):
        out = tg.gemm(a, b, schedule=schedule, sort_by_k=sort_by_k)
    assert all(o.dtype == torch.float32 for o in out)
    check(out, a, b, TF32_SPLIT_TOLERANCE)


def test_tf32_where_torch_allows_it():
    """allow_tf32 on: one TF32 pass (operands read where they lie where TMA can), TF32's error."""
    a, b = list_problem(3, 24)
    with allow_tf32(True):
        tf32 = tg.gemm(a, b)
    with allow_tf32(False):
        split = tg.gemm(a, b)
    check(tf32, a, b, TF32_TOLERANCE)
    big = [i for i, x in enumerate(a) if x.numel() > 0 and x.shape[1] >= 64 and b[i].shape[1] > 0]
    assert big, "the problem needs a group with K >= 64"
    ref = reference.gemm(a, b)
    worst_tf32 = max(reference.rel_error(tf32[i], ref[i]) for i in big)
    worst_split = max(reference.rel_error(split[i], ref[i]) for i in big)
    assert worst_tf32 > 10 * worst_split, "allow_tf32 changed nothing"


def test_modes_give_the_same_bits():
    """Every schedule and ordering gives the same bits (each tile sums its K blocks in one order)."""
    a, b = list_problem(5, 16)
    with allow_tf32(False):
        runs = [tg.gemm(a, b, schedule=s, sort_by_k=o) for s in ("host", "device") for o in (True, False)]
    for run in runs[1:]:
        assert all(torch.equal(x, y) for x, y in zip(run, runs[0]))


def test_many_small_groups():
    """128 groups of 64 x 512 x 512 (the benchmark's host-bound case for a loop of mm)."""
    g = torch.Generator().manual_seed(4)
    a = [torch.randn(64, 512, generator=g).cuda() for _ in range(128)]
    b = [torch.randn(512, 512, generator=g).cuda() for _ in range(128)]
    poison()
    with allow_tf32(False):
        check(tg.gemm(a, b), a, b, TF32_SPLIT_TOLERANCE)


@pytest.mark.parametrize("tf32", [False, True])
def test_cuda_graph(tf32):
    """Captured once (the staging included), replayed with new operand values."""
    a, b = list_problem(7, 12)
    with allow_tf32(tf32):
        out = gemm_replayed(a, b)
        check(out, a, b, TF32_TOLERANCE if tf32 else TF32_SPLIT_TOLERANCE)


@pytest.mark.parametrize("tf32", [False, True])
def test_fp32_takes_its_kernel(tf32):
    """The TF32 grouped kernel runs, after the staging kernel (B N-major is staged in both modes).
    (The profiler sees no kernels under compute-sanitizer.)"""
    a, b = list_problem(6, 8)
    with allow_tf32(tf32):
        names = kernels_launched(lambda: tg.gemm(a, b))
    assert any(KERNEL in n for n in names), names
    assert any("tf32_operand_kernel" in n for n in names), names


@pytest.mark.parametrize("setting, tf32, big, ours", [
    (None, False, True, True),    # 3xTF32: faster than a loop of fp32 cuBLAS calls
    (None, True, False, True),    # one TF32 pass on small groups: a launch per group outweighs cuBLAS's rate
    (None, True, True, False),    # one TF32 pass on big groups (over 4 GFLOP each): cuBLAS
    ("0", False, False, False),
    ("1", True, True, True),
])
def test_default_dispatch(monkeypatch, setting, tf32, big, ours):
    """TORCH_GROUPED_FP32_KERNELS unset: our kernel where it was measured faster than cuBLAS;
    0: cuBLAS; 1: our kernel (the fixture's setting)."""
    g = torch.Generator().manual_seed(3)
    m, n, k = (2048, 2048, 1024) if big else (64, 96, 80)
    a = [torch.randn(m, k, generator=g).cuda() for _ in range(2)]
    b = [torch.randn(k, n, generator=g).cuda() for _ in range(2)]
    set_env(monkeypatch, "TORCH_GROUPED_FP32_KERNELS", setting)
    with allow_tf32(tf32):
        names = kernels_launched(lambda: tg.gemm(a, b))
    assert any(KERNEL in n for n in names) == ours, names


def test_bad_setting(monkeypatch):
    a, b = list_problem(8, 6)
    monkeypatch.setenv("TORCH_GROUPED_FP32_KERNELS", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_FP32_KERNELS must be 0 or 1"):
        tg.gemm(a, b)
