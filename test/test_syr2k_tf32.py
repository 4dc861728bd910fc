"""fp32 syr2k on the Hopper Rank2K kernel through TF32 WGMMA: fp32-accurate by default (3xTF32:
each operand split into TF32 hi and lo parts), plain TF32 where torch allows TF32 matmuls;
triangle tiles with their mirrors (exactly symmetric), every decomposition of one problem,
operands TMA cannot address, CUDA graphs."""
import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER_ONLY, allow_tf32, kernels_launched
from reference import TF32_SPLIT_TOLERANCE as SPLIT_TOLERANCE, TF32_TOLERANCE

pytestmark = HOPPER_ONLY

SIZES = [(1, 8), (127, 64), (128, 136), (129, 72), (300, 512), (0, 16), (45, 0), (700, 1000), (33, 5)]


def problem(seed, with_c, sizes=SIZES, transposed_b=False):
    g = torch.Generator().manual_seed(seed)
    a = [torch.randn(n, k, generator=g).cuda() for n, k in sizes]
    b = [torch.randn(k, n, generator=g).cuda().T if transposed_b else torch.randn(n, k, generator=g).cuda()
         for n, k in sizes]
    c = [torch.randn(n, n, generator=g).cuda() for n, _ in sizes] if with_c else []
    return a, b, c


def check(out, ref, tolerance):
    for o, r in zip(out, ref):
        assert not o.isnan().any(), "unwritten elements"
        assert torch.equal(o, o.T), "not exactly symmetric"
        err = reference.rel_error(o, r)
        assert err <= tolerance, f"relative error {err:.3g} > {tolerance:.3g} for n = {o.shape[0]}"


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("with_c", [False, True])
@pytest.mark.parametrize("transposed_b", [False, True])
def test_fp32_accurate_by_default(uplo, with_c, transposed_b):
    """Ragged groups (empty ones, K = 0, K = 5 whose rows TMA cannot address, column-major b):
    the float64 reference within fp32-level error, exactly symmetric, every element written."""
    a, b, c = problem(1 + with_c, with_c, transposed_b=transposed_b)
    alpha, beta = (0.75, -1.5) if with_c else (1.0, 0.0)
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    with allow_tf32(False):
        out = tg.syr2k(a, b, c, uplo=uplo, alpha=alpha, beta=beta)
    check(out, reference.syr2k(a, b, c, uplo, alpha, beta), SPLIT_TOLERANCE)


def test_split_is_as_accurate_as_cublas_fp32():
    """Against fp32 cuBLAS (two addmm with TF32 off) on K = 4096: within 4x its error."""
    a, b, _ = problem(7, False, [(512, 4096)])
    ref = reference.syr2k(a, b, [], "L", 1.0, 0.0)[0]
    with allow_tf32(False):
        ours = tg.syr2k(a, b)[0]
        peer = torch.addmm(a[0] @ b[0].T, b[0], a[0].T)
    ours_err, peer_err = reference.rel_error(ours, ref), reference.rel_error(peer, ref)
    assert ours_err <= 4 * peer_err, (ours_err, peer_err)


def test_tf32_where_torch_allows_it():
    """allow_tf32 on: one TF32 pass (TF32's error, far above the split's), still exactly symmetric;
    operands TMA cannot address as they lie (column-major b, K = 5) copied unchanged."""
    a, b, _ = problem(3, False, [(700, 1000), (300, 512), (33, 5)], transposed_b=True)
    ref = reference.syr2k(a, b, [], "L", 1.0, 0.0)
    with allow_tf32(True):
        tf32 = tg.syr2k(a, b)
    with allow_tf32(False):
        split = tg.syr2k(a, b)
    check(tf32, ref, TF32_TOLERANCE)
    for t, s, r in zip(tf32, split, ref):
        assert reference.rel_error(t, r) > 10 * reference.rel_error(s, r), "allow_tf32 changed nothing"


@pytest.mark.parametrize("tf32", [False, True])
def test_fp32_takes_its_kernel(tf32):
    """The TF32 Rank2K kernel runs (and the split's staging kernel, in fp32-accurate mode).
    (The profiler sees no kernels under compute-sanitizer.)"""
    a, b, _ = problem(4, False, [(300, 512), (129, 72)])
    with allow_tf32(tf32):
        names = kernels_launched(lambda: tg.syr2k(a, b))
    assert any("GroupedGemmConfig<cutlass::tfloat32_t" in n for n in names), names
    assert any("tf32_operand_kernel" in n for n in names) == (not tf32), names


@pytest.mark.parametrize("decomposition", ["", "data_parallel", "stream_k", "split_k", "two_tile_sk_dp"])
@pytest.mark.parametrize("n, k", [(300, 712), (1000, 136), (1024, 64), (129, 8), (2000, 200)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_single_problem_every_decomposition(decomposition, n, k, uplo, monkeypatch):
    """One problem over the Stream-K work units of each decomposition (K blocks of 32: 3k / 32
    per pass when split): the reference, exactly symmetric, the same bits on a second run."""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", decomposition)
    a, b, c = problem(n + k, True, [(n, k)])
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))
    with allow_tf32(False):
        out = tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)
        again = tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)
    check(out, reference.syr2k(a, b, c, uplo, 0.5, 2.0), SPLIT_TOLERANCE)
    assert torch.equal(again[0], out[0]), "not repeatable"


def test_gemm_scheduler_gives_the_same_triangle(monkeypatch):
    a, b, _ = problem(5, False, SIZES[:5])
    with allow_tf32(False):
        triangle = tg.syr2k(a, b)
        monkeypatch.setenv("TORCH_GROUPED_SYR2K_SCHEDULER", "gemm")
        full = tg.syr2k(a, b)
    for t, f in zip(triangle, full):
        assert torch.equal(f.tril(), t.tril())  # the same tiles, the same sums


@pytest.mark.parametrize("tf32", [False, True])
def test_cuda_graph(tf32):
    """Captured once (the split's staging included), replayed with new operand values."""
    a, b, _ = problem(6, False, [(1000, 264)])
    with allow_tf32(tf32):
        tg.syr2k(a, b)  # warm up outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = tg.syr2k(a, b)[0]
        for seed in range(2):
            fresh, fresh_b, _ = problem(10 + seed, False, [(1000, 264)])
            a[0].copy_(fresh[0])
            b[0].copy_(fresh_b[0])
            out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            assert torch.equal(out, tg.syr2k(a, b)[0])
