"""The Hopper Rank2K kernel behind syr2k: only the triangle's tiles, each written with its mirror,
so the output is exactly symmetric; alpha, beta and c; ragged groups against the 128-row tile;
and the GEMM-scheduler switch the benchmark uses."""
import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER_ONLY, kernels_launched, matmul_configs, matmul_tiles

pytestmark = HOPPER_ONLY

SIZES = [(1, 8), (127, 64), (128, 136), (129, 72), (300, 512), (0, 16), (45, 0), (700, 1000)]


def problem(dtype, seed, with_c, sizes=SIZES):
    """a, b (and c) of the groups `sizes` ((n, k) each), from a seeded generator, on the GPU."""
    g = torch.Generator().manual_seed(seed)
    a = [torch.randn(n, k, generator=g).to("cuda", dtype) for n, k in sizes]
    b = [torch.randn(n, k, generator=g).to("cuda", dtype) for n, k in sizes]
    c = [torch.randn(n, n, generator=g).to("cuda", dtype) for n, _ in sizes] if with_c else []
    return a, b, c


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("with_c", [False, True])
def test_matches_reference_and_is_exactly_symmetric(dtype, uplo, with_c):
    a, b, c = problem(dtype, 1 + with_c, with_c)
    alpha, beta = (0.75, -1.5) if with_c else (1.0, 0.0)
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=alpha, beta=beta)
    for o, r in zip(out, reference.syr2k(a, b, c, uplo, alpha, beta)):
        assert not o.isnan().any(), "unwritten elements"
        reference.assert_close(o, r, dtype)
        assert torch.equal(o, o.T), "not exactly symmetric"


def test_gemm_scheduler_switch_gives_the_same_matrix(monkeypatch):
    a, b, _ = problem(torch.bfloat16, 3, False)
    triangle = tg.syr2k(a, b)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_SCHEDULER", "gemm")
    full = tg.syr2k(a, b)
    for t, f in zip(triangle, full):
        reference.assert_close(f, t.double(), torch.bfloat16)
        assert torch.equal(f.tril(), t.tril())  # the same tiles, the same sums


@pytest.mark.parametrize("scheduler", ["", "gemm"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_list_walk_in_128x256_tiles(uplo, scheduler, monkeypatch):
    """A list of problems in 128 x 256 tiles (TORCH_GROUPED_SYR2K_TILE), over the triangle and with
    the GEMM scheduler: the reference, and over the triangle exactly symmetric."""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", "128x256")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_SCHEDULER", scheduler)
    a, b, c = problem(torch.bfloat16, 11, True)
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=0.75, beta=-1.5)
    for o, r in zip(out, reference.syr2k(a, b, c, uplo, 0.75, -1.5)):
        assert not o.isnan().any(), "unwritten elements"
        reference.assert_close(o, r, torch.bfloat16)
        if not scheduler:
            assert torch.equal(o, o.T), "not exactly symmetric"


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("sizes", [SIZES, [(1000, 520)], [(384, 200)], [(1152, 72)], [(129, 8)]])
def test_clusters_give_the_same_bits(sizes, uplo, monkeypatch):
    """The 2 x 1 clusters (256 x 128 pair tiles, the B-role operand multicast) and
    one CTA per tile add the same products in the same order: the same bits, for the list walk
    and the one-problem data-parallel walk, sizes with an odd count of 128-row tiles (a pair's
    second half past the problem) and pairs across the diagonal (a half that stores nothing)."""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", "data_parallel")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", "128x128")  # (one problem: the model may take 128 x 256)
    a, b, c = problem(torch.bfloat16, len(sizes), True, sizes)
    outs = {}
    for cluster in ("1", "0"):
        monkeypatch.setenv("TORCH_GROUPED_SYR2K_CLUSTER", cluster)
        torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
        outs[cluster] = tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=-1.0)
    for x, y, r in zip(outs["1"], outs["0"], reference.syr2k(a, b, c, uplo, 0.5, -1.0)):
        assert not x.isnan().any(), "unwritten elements"
        assert torch.equal(x, y)
        reference.assert_close(x, r, torch.bfloat16)


@pytest.mark.parametrize("cluster", ["1", "0"])
@pytest.mark.parametrize("sizes", [SIZES, [(1000, 520)]])
def test_cluster_switch_takes_its_kernel(sizes, cluster, monkeypatch):
    """TORCH_GROUPED_SYR2K_CLUSTER runs the clustered kernel or the plain one, in the list walk and
    the one-problem data-parallel walk. (The profiler sees no kernels under compute-sanitizer.)"""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", "data_parallel")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_CLUSTER", cluster)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", "128x128")
    a = [torch.randn(n, k, device="cuda", dtype=torch.float16) for n, k in sizes]
    names = kernels_launched(lambda: tg.syr2k(a, a))
    assert matmul_configs(names) == {(2 if cluster == "1" else 1, False, True)}, names


def test_clusters_with_the_gemm_scheduler(monkeypatch):
    """The benchmark's GEMM-scheduler switch in clusters: pair tiles over the whole square."""
    a, b, _ = problem(torch.float16, 5, False)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_SCHEDULER", "gemm")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_CLUSTER", "1")
    clustered = tg.syr2k(a, b)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_CLUSTER", "0")
    for x, y in zip(clustered, tg.syr2k(a, b)):
        assert torch.equal(x, y)


def test_unaligned_k_reads_pitched_copies():
    a = [torch.randn(40, 12, device="cuda", dtype=torch.float16)]
    b = [torch.randn(40, 12, device="cuda", dtype=torch.float16)]
    out = tg.syr2k(a, b)
    reference.assert_close(out[0], reference.syr2k(a, b, [], "L", 1.0, 0.0)[0], torch.float16)


@pytest.mark.parametrize("decomposition", ["", "stream_k", "split_k", "dp_one_tile_sk", "two_tile_sk_dp", "data_parallel"])
@pytest.mark.parametrize("n, k", [(300, 712), (1000, 520), (1024, 64), (129, 8)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_single_problem_over_streamk_units(decomposition, n, k, uplo, monkeypatch):
    """One problem runs over Stream-K work units (TORCH_GROUPED_SYR2K_DECOMPOSITION; unset: the
    model's choice, Stream-K for few tiles): every decomposition gives the reference, exactly
    symmetric, and the same bits on a second run (the fixup adds partials in K order)."""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", decomposition)
    a, b, c = problem(torch.bfloat16, n + k, True, [(n, k)])
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)
    ref = reference.syr2k(a, b, c, uplo, 0.5, 2.0)
    assert not out[0].isnan().any(), "unwritten elements"
    reference.assert_close(out[0], ref[0], torch.bfloat16)
    assert torch.equal(out[0], out[0].T), "not exactly symmetric"
    assert torch.equal(tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)[0], out[0]), "not repeatable"


@pytest.mark.parametrize("decomposition", ["data_parallel", "stream_k", "split_k", "two_tile_sk_dp"])
@pytest.mark.parametrize("n, k", [(300, 712), (1000, 136), (1024, 64), (129, 8), (2000, 200)])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_single_problem_in_128x256_tiles(decomposition, n, k, uplo, dtype, monkeypatch):
    """One problem in 128 x 256 tiles (256 x 256 macro tiles of the triangle, two tiles each; the
    tile of a diagonal macro tile reaches past the diagonal and stores only its triangle's part):
    every decomposition gives the reference, exactly symmetric, repeatable. n = 300 and 2000 leave
    a padding slot per diagonal macro tile (a 128-row tile past n), 129 and 1000 cut the last tiles."""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", "128x256")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", decomposition)
    a, b, c = problem(dtype, 7 * n + k, True, [(n, k)])
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)
    ref = reference.syr2k(a, b, c, uplo, 0.5, 2.0)
    assert not out[0].isnan().any(), "unwritten elements"
    reference.assert_close(out[0], ref[0], dtype)
    assert torch.equal(out[0], out[0].T), "not exactly symmetric"
    assert torch.equal(tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)[0], out[0]), "not repeatable"


@pytest.mark.parametrize("decomposition", ["data_parallel", "stream_k", "two_tile_sk_dp"])
@pytest.mark.parametrize("n, k", [(4000, 64), (4096, 72), (1000, 136)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_tma_stores_give_the_threads_bits(decomposition, n, k, uplo, monkeypatch):
    """The 128 x 256 kernels' epilogue through TMA stores (tile and mirror; the diagonal's tiles by
    the threads), which syr2k takes where the walk has more tiles than CTAs (272 at n = 4000 and
    4096), writes what the threads' stores write (TORCH_GROUPED_TMA_STORE=0), bit for bit, every
    element: n = 4000 has tiles and mirrors that the output's edge clips; n = 1000 (20 tiles) stores
    by the threads either way."""
    macro = -(-n // 256)  # the walk's 256 x 256 macro tiles per side, two 128 x 256 slots each
    slots, sms = macro * (macro + 1), torch.cuda.get_device_properties(0).multi_processor_count
    assert (slots > sms) == (n > 1000), "the shapes no longer straddle syr2k's TMA-store rule on this GPU"
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", "128x256")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", decomposition)
    a, b, c = problem(torch.bfloat16, n + k, True, [(n, k)])
    outs = {}
    for tma in ("1", "0"):
        monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", tma)
        torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
        outs[tma] = tg.syr2k(a, b, c, uplo=uplo, alpha=0.5, beta=2.0)[0]
    assert not outs["1"].isnan().any(), "unwritten elements"
    assert torch.equal(outs["1"], outs["0"])
    assert torch.equal(outs["1"], outs["1"].T), "not exactly symmetric"
    reference.assert_close(outs["1"], reference.syr2k(a, b, c, uplo, 0.5, 2.0)[0], torch.bfloat16)


@pytest.mark.parametrize("tile, decomposition", [("128x256", "data_parallel"), ("128x256", "stream_k"),
                                                 ("128x128", "data_parallel"), ("128x128", "stream_k")])
def test_tile_switch_takes_its_kernel(tile, decomposition, monkeypatch):
    """TORCH_GROUPED_SYR2K_TILE runs the one-problem call in its tile, walk and Stream-K units alike.
    (The profiler sees no kernels under compute-sanitizer.)"""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", tile)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", decomposition)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_CLUSTER", "0")
    a = [torch.randn(1000, 520, device="cuda", dtype=torch.bfloat16)]
    names = kernels_launched(lambda: tg.syr2k(a, a))
    assert matmul_tiles(names) == {tuple(int(x) for x in tile.split("x"))}, names


@pytest.mark.parametrize("tile, dtype", [("", torch.float16), ("128x256", torch.bfloat16)])
def test_streamk_units_in_cuda_graph(tile, dtype, monkeypatch):
    """Stream-K units (the model's tile, and 128 x 256 forced) captured once, replayed three times."""
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", tile)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_DECOMPOSITION", "stream_k")
    a = [torch.randn(1000, 264, device="cuda", dtype=dtype)]
    b = [torch.randn(1000, 264, device="cuda", dtype=dtype)]
    expected = tg.syr2k(a, b)[0]
    tg.syr2k(a, b)  # warm up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.syr2k(a, b)[0]
    for _ in range(3):
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, expected)


@pytest.mark.parametrize("variable, value, match", [
    ("TORCH_GROUPED_SYR2K_DECOMPOSITION", "diagonal", "decomposition must be one of"),
    ("TORCH_GROUPED_SYR2K_CLUSTER", "2", "TORCH_GROUPED_SYR2K_CLUSTER must be 0 or 1"),
    ("TORCH_GROUPED_SYR2K_TILE", "256x128", "TORCH_GROUPED_SYR2K_TILE must be 128x128 or 128x256"),
])
def test_bad_switch_values_are_value_errors(variable, value, match, monkeypatch):
    monkeypatch.setenv(variable, value)
    a = [torch.randn(64, 16, device="cuda", dtype=torch.bfloat16)]
    with pytest.raises(ValueError, match=match):
        tg.syr2k(a, a)


def test_clusters_and_wide_tiles_are_a_value_error(monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_CLUSTER", "1")
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_TILE", "128x256")
    a = [torch.randn(64, 16, device="cuda", dtype=torch.bfloat16)]
    with pytest.raises(ValueError, match="128x128 tiles only"):
        tg.syr2k(a, a)
