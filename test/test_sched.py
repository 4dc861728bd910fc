"""The scheduler index math of csrc/sched/, enumerated through private ops and checked for the
invariants the kernels rely on."""
import collections
import math
import random

import expecttest
import pytest
import torch
from hypothesis import given, settings, strategies as st

sched = torch.ops.grouped


def _tiles(m, n, tm, tn):
    return {(i, j) for i in range(math.ceil(m / tm)) for j in range(math.ceil(n / tn))}


@settings(max_examples=300, deadline=None)
@given(groups=st.lists(st.tuples(st.integers(0, 600), st.floats(0.5, 100.0)), max_size=30),
       grid=st.integers(1, 300))
def test_round_robin_makespan_is_the_busiest_cta(groups, grid):
    """The tile heuristic's makespan (closed form over groups) against dealing the tiles out one by
    one: CTA b takes tiles b, b + grid, ... of the groups in order."""
    counts, costs = [c for c, _ in groups], [t for _, t in groups]
    work = [0.0] * grid
    index = 0
    for count, cost in groups:
        for _ in range(count):
            work[index % grid] += cost
            index += 1
    assert sched._round_robin_makespan(counts, costs, grid) == pytest.approx(max(work), rel=1e-9, abs=1e-9)


def test_round_robin_makespan_of_seed_example():
    """Seed 000's example sorted by K (1024, 1024, 128, 128) on 132 SMs: one wave of 27 128 x 256
    tiles per group costs a K = 1024 tile; two waves of 128 x 128 cost one K = 1024 tile and one
    K = 128 tile of half the area: the model's reason to take 128 x 128 there."""
    wide = sched._round_robin_makespan([27] * 4, [1024.0, 1024.0, 128.0, 128.0], 108)
    narrow = sched._round_robin_makespan([54] * 4, [512.0, 512.0, 64.0, 64.0], 132)
    assert wide == 1024.0 and narrow == 512.0 + 64.0


@pytest.mark.parametrize("groups, tile", [
    ([(1152, 768, 1024), (768, 1152, 1024), (1152, 768, 128), (768, 1152, 128)], [128, 128, 1]),  # seed 000, sorted
    ([(128, 1024, 1024)] * 64, [128, 256, 1]),   # 64 small experts: 256 tiles, two waves either way;
                                                 # pairs would pad every group's one tile row
    ([(64, 512, 512)] * 128, [64, 128, 1]),      # 128 tiny: 64-row tiles waste no rows
    ([(4096, 4096, 4096)] * 8, [128, 256, 2]),   # big groups: the widest tile, in clusters (even rows)
    ([(300, 200, 64)], [128, 128, 1]),           # one small problem: fewer tiles than SMs, smaller ones spread it
    ([(1024, 4096, 512)] * 8, [128, 256, 2]),    # test_list_of_big_groups_takes_its_kernel's list
    ([(896, 4096, 512)] * 8, [128, 256, 1]),     # the same with 7 tile rows a group
])
def test_gemm_tile_choice(groups, tile):
    """gemm's tile heuristic (sched/tile_choice.h) on the benchmark's list cases, 132 SMs:
    [tile m, tile n, CTAs per cluster along M]."""
    m, n, k = (list(v) for v in zip(*groups))
    assert sched._choose_gemm_tile(m, n, k, 132) == tile


@pytest.mark.parametrize("groups, tile", [
    ([(64, 512, 512)] * 128, [128, 256, 1]),     # 128 tiny: no 64-row kernel reads A M-major
    ([(2048, 1024, 2048)] * 8, [128, 256, 2]),   # dB of the 8-group training step: clusters, as K-major
    ([(300, 200, 64)], [128, 128, 1]),           # one small problem: the smaller tile, as K-major
])
def test_gemm_tile_choice_with_a_m_major(groups, tile):
    """A list whose A is read M-major (gemm's own dB_i = A_iᵀ·dY_i) chooses among the K-grouped
    form's kernels, the tiles that read A so: 128 x 256 in pairs or alone, or 128 x 128."""
    m, n, k = (list(v) for v in zip(*groups))
    assert sched._choose_gemm_tile(m, n, k, 132, a_m_major=True) == tile


@pytest.mark.parametrize("groups, tile, walkers, corner", [
    # 8 x 4096³ in 256 x 256 pair tiles: 2048 tiles on 66 clusters, 31 rounds and 2 tiles; the
    # corner is the last group's last pair-tile row, right of column 14 of 16
    ([(4096, 4096, 4096)] * 8, [128, 256, 2], 66, [3840, 3584]),
    ([(4096, 4096, 4096)] * 8, [128, 256, 1], 132, [3968, 3072]),  # 4096 tiles on 132 CTAs: 31 rounds and 4
    ([(4096, 4096, 4096)] * 8, [128, 256, 2], 64, []),             # whole rounds: nothing to carve
    ([(4096, 4096, 1024)] * 8, [128, 256, 2], 66, []),             # 16 K blocks a tile: less than the corner's cost
    ([(4096, 4096, 4096)] * 8, [128, 256, 2], 30, []),             # 8 tiles past 68 rounds of 30: over a quarter round
    ([(128, 1024, 1024)] * 64, [128, 256, 1], 132, []),            # 64 small: a tail of 124 tiles, rows of 4
    ([(4096, 4096, 4096)] * 7 + [(4096, 256, 4096)], [128, 256, 2], 66, []),  # a tail of 26 tiles, a last row of 1
    # the tail is one shallow tile (K = 64), dealt to a walker with 32 deep ones: hardly a gain
    ([(4096, 4096, 4096)] * 8 + [(256, 16640, 64)], [128, 256, 2], 66, []),
])
def test_list_tail_corner(groups, tile, walkers, corner):
    """sched/list_tail.h: the corner of the last group that gemm hands to the Stream-K kernel,
    [row0, col0], where the busiest walker's work falls by a deep tile or more; [] otherwise."""
    m, n, k = (list(v) for v in zip(*groups))
    assert sched._list_tail_corner(m, n, k, tile, walkers) == corner


@settings(max_examples=200, deadline=None)
@given(groups=st.lists(st.tuples(st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 9000)), min_size=1,
                       max_size=12),
       tile=st.sampled_from([[128, 256, 2], [128, 256, 1], [128, 128, 1], [64, 128, 1]]),
       walkers=st.integers(1, 300), rule=st.booleans())
def test_list_tail_corner_leaves_whole_rounds(groups, tile, walkers, rule):
    """Wherever a corner is carved (by the rule or forced), it lies in the last group's last tile
    row, its tiles are exactly the partial last round, and what is left is whole rounds."""
    m, n, k = (list(v) for v in zip(*groups))
    corner = sched._list_tail_corner(m, n, k, tile, walkers, rule=rule)
    tm, tn = tile[0] * tile[2], tile[1]
    total = sum(math.ceil(mi / tm) * math.ceil(ni / tn) for mi, ni in zip(m, n))
    if not corner:
        assert not (not rule and total > walkers and 0 < total % walkers <= math.ceil(n[-1] / tn))
        return
    row0, col0 = corner
    assert row0 == (math.ceil(m[-1] / tm) - 1) * tm and 0 <= row0 < m[-1]
    assert col0 % tn == 0 and 0 <= col0 < n[-1]
    carved = math.ceil((n[-1] - col0) / tn)
    assert carved == total % walkers and total > walkers
    assert (total - carved) % walkers == 0
    if rule:
        assert 4 * carved <= walkers


def test_list_tail_corner_checks_its_arguments():
    with pytest.raises(ValueError, match="no list tile"):
        sched._list_tail_corner([4096], [4096], [4096], [256, 256, 1], 66)
    with pytest.raises(ValueError, match="walkers must be >= 1"):
        sched._list_tail_corner([4096], [4096], [4096], [128, 256, 2], 0)
    with pytest.raises(ValueError, match="m, n and k > 0"):
        sched._list_tail_corner([4096, 0], [4096, 8], [4096, 8], [128, 256, 2], 66)


def test_gemm_tile_choice_weighs_depth():
    """Groups of different K: one deep group among shallow ones sets the busiest CTA's time, so
    the choice follows the deep group's tiles, not the wave count."""
    shallow = [(128, 256, 64)] * 131
    # with the deep group first (sorted by K), 128 x 256 gives its CTA one 4096-deep tile of 128 x
    # 256; 128 x 128 halves that tile and adds a second, shallow, one
    assert sched._choose_gemm_tile([128] + [m for m, _, _ in shallow], [256] + [n for _, n, _ in shallow],
                                   [4096] + [k for _, _, k in shallow], 132) == [128, 128, 1]


@pytest.mark.parametrize("m, n, k, rank2k, tile", [
    ([4096] * 4, [4096] * 4, [4096] * 4, False, [128, 64]),   # many waves: the wide tile's rate
    ([128] * 64, [1024] * 64, [1024] * 64, False, [64, 64]),   # shallow tiles: the wide one's fixed part
    ([1152, 768, 1152, 768], [768, 1152, 768, 1152], [1024, 1024, 128, 128], False, [64, 64]),  # seed 000's
    ([2048] * 4, [2048] * 4, [2048] * 4, False, [128, 64]),   # test_tile_follows_the_model's list
    ([4096], [4096], [4096], True, [128, 64]),                 # syr2k: 1056 wide tiles, 4 waves
    ([8192], [8192], [1024], True, [128, 64]),
    ([2048], [2048], [8192], True, [64, 64]),  # 272 wide tiles on 264 CTAs: two waves of 8192-deep tiles
    ([1024], [1024], [1024], True, [64, 64]),  # 72 wide tiles: most CTAs idle
])
def test_fp64_tile_choice(m, n, k, rank2k, tile):
    """The fp64 DMMA kernel's tile (sched/dmma_tile_choice.h), 132 SMs, two CTAs each: the
    benchmark's cases, each as the faster tile measured on an H200 (session 39, calls 3 and 7;
    the times are in the header)."""
    assert sched._choose_fp64_tile(m, n, k, 132, rank2k=rank2k) == tile


def test_fp64_tile_choice_checks_its_input():
    with pytest.raises(ValueError, match="one m, n and k per group"):
        sched._choose_fp64_tile([1, 2], [1], [1], 132)
    with pytest.raises(ValueError, match="sms must be >= 1"):
        sched._choose_fp64_tile([1], [1], [1], 0)


@pytest.mark.parametrize("rows, tile", [(4096, [128, 256, 2]), (4096 - 128, [128, 256, 1]), (4096 - 127, [128, 256, 2])])
def test_gemm_tile_choice_pairs_tile_rows(rows, tile):
    """The clustered kernel's pair tiles in gemm's model: it wins its tie with plain 128 x 256 where
    every group has an even count of 128-row tiles (4096 rows: 32; 3969: 31.008 -> 32), and loses
    where pairing pads a row of tiles onto each group (3968 rows: 31 -> 32), which adds work to the
    busiest CTA of 8 groups' 3968 tiles on 132 SMs."""
    assert sched._choose_gemm_tile([rows] * 8, [4096] * 8, [4096] * 8, 132) == tile


@pytest.mark.parametrize("sms", [78, 114, 132, 144])
def test_k_grouped_tile_choice(sms):
    """The weight gradient's tile model (sched::choose_k_grouped_tile), 4 groups of K = 500: the
    clustered 128 x 256 kernel where plain 128 x 256 wins and pairing adds no wave, plain 128 x 256
    where the pairs' padded row would add one, 128 x 128 on a short walk (the shapes of
    test_grouped_gemm_kernel.py::test_k_grouped_takes_its_kernel)."""
    assert sched._choose_k_grouped_tile(1024, 256 * (sms // 32), 4, 500, sms) == [128, 256, 2]
    assert sched._choose_k_grouped_tile(384, 256 * (sms // 12), 4, 500, sms) == [128, 256, 1]
    assert sched._choose_k_grouped_tile(256, 384, 4, 500, sms) == [128, 128, 1]


@pytest.mark.parametrize("name, groups, n, k, tokens", [
    ("mixtral", 8, 14336, 4096, 16384), ("dsv3 up", 32, 4096, 7168, 8192), ("dsv3 down", 32, 7168, 2048, 8192),
    ("64 small", 64, 1024, 1024, 8192), ("fp16", 32, 4096, 2048, 8192),
])
def test_k_grouped_tile_choice_on_the_benchmark(name, groups, n, k, tokens):
    """The benchmark's weight gradients (dW[g] = x_g^T dY_g: M = the layer's K, N its N, each
    expert's K the tokens it got) all run the clustered 128 x 256 kernel on 132 SMs."""
    assert sched._choose_k_grouped_tile(k, n, groups, tokens // groups, 132) == [128, 256, 2]


def test_k_grouped_tile_choice_checks_its_arguments():
    with pytest.raises(ValueError, match="choose_k_grouped_tile: m, n, groups, k and sms must be positive"):
        sched._choose_k_grouped_tile(0, 256, 4, 500, 132)


@pytest.mark.parametrize("name, groups, n, k, tokens, tile", [
    ("mixtral", 8, 14336, 4096, 16382, [128, 256, 1]), ("dsv3 up", 32, 4096, 7168, 8192, [128, 256, 1]),
    ("dsv3 down", 32, 7168, 2048, 8192, [128, 256, 1]), ("32 x 256 rows", 32, 4096, 2048, 8192, [128, 256, 1]),
    ("64 small", 64, 1024, 1024, 8192, [64, 128, 1]), ("128 tiny", 128, 512, 512, 8192, [64, 128, 1]),
    ("decode", 8, 14336, 4096, 64, [64, 128, 1]),
])
def test_grouped_mm_tile_choice_on_the_benchmark(name, groups, n, k, tokens, tile):
    """grouped_mm's forward model (sched::choose_grouped_mm_tile: waves of the persistent grid times
    one tile's time) on the benchmark's MoE layers, 132 SMs. The big layers take 128 x 256. The
    64 small experts count 64 + 33 partial 128-row tile rows x 4 column tiles: 3 waves of 128 x 256
    (3 x 32768 x 1152 MAC-weights) against 161 x 8 64-row tiles on 264 CTAs, 5 waves of half the
    rate (5 x 19275 x 1152): 64 x 128 wins by 2%. Decode (64 rows, 8 experts) is 6 tile rows in
    either height: 3 waves of 128 x 256, or 3 of the 64 x 128 tiles at ~0.59 the cost each."""
    assert sched._choose_grouped_mm_tile("2d_3d", tokens, n, groups, k, 132) == tile


def test_grouped_mm_tile_choice_counts_each_forms_edges():
    """The same 4096 x 4096 x 2048 output: one group of rows runs 128 x 256 (33 x 16 tiles, 4
    waves); cut into 64 groups, the 33 partial tile rows on average make it 65 x 16 = 1040 tiles (8
    waves) against 97 x 32 64-row tiles (12 waves at ~0.59 the cost). Cut into 64 groups of
    columns the partial tile columns cost a wide tile more: 32 x 65 128 x 128 tiles (16 waves at
    0.54) against 32 x 49 of 128 x 256 (12). Batched, 64 whole problems have no edges."""
    choose = sched._choose_grouped_mm_tile
    assert choose("2d_3d", 4096, 4096, 1, 2048, 132) == [128, 256, 1]
    assert choose("2d_3d", 4096, 4096, 64, 2048, 132) == [64, 128, 1]
    assert choose("3d_2d", 4096, 4096, 64, 2048, 132) == [128, 128, 1]
    assert choose("3d_3d", 4096, 4096, 64, 2048, 132) == [128, 256, 1]
    assert choose("3d_3d", 64, 512, 8, 512, 132) == [128, 128, 1]  # one wave either way: the cheaper tile


def test_grouped_mm_tile_choice_checks_its_arguments():
    with pytest.raises(ValueError, match="form must be '2d_3d', '3d_2d' or '3d_3d', got '2d_2d'"):
        sched._choose_grouped_mm_tile("2d_2d", 256, 256, 4, 64, 132)
    with pytest.raises(ValueError, match="m, n, groups, k and sms must be positive"):
        sched._choose_grouped_mm_tile("3d_3d", 256, 256, 4, 64, 0)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("mode", ["device", "host"])
def test_grouped_visits_every_tile_once(seed, mode):
    rng = random.Random(seed)
    groups = rng.randint(0, 40)
    m = [rng.choice([0, rng.randint(1, 700)]) for _ in range(groups)]
    n = [rng.randint(0, 500) for _ in range(groups)]
    k = [rng.randint(0, 4096) for _ in range(groups)]
    tm, tn = rng.choice([(128, 128), (128, 256), (64, 128), (256, 64)])
    grid = rng.randint(1, 140)
    sort = rng.random() < 0.5
    panel = rng.choice([0, 1, 3, 8])
    rows = sched._schedule_grouped(m, n, k, tm, tn, grid, mode, sort, panel=panel).tolist()
    seen = collections.Counter((g, i, j) for _, _, g, i, j, _ in rows)
    expected = {(g, i, j) for g in range(groups) for i, j in _tiles(m[g], n[g], tm, tn)}
    assert set(seen) == expected and all(v == 1 for v in seen.values())
    # CTA b visits linear tiles b, b + grid, ...: the steps of each CTA are 0, 1, 2, ...
    per_cta = collections.defaultdict(list)
    for cta, step, *_ in rows:
        per_cta[cta].append(step)
    assert all(steps == list(range(len(steps))) for steps in per_cta.values())
    counts = [len(v) for v in per_cta.values()]
    assert not counts or max(counts) - min(counts) <= 1 or len(per_cta) < grid


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mode", ["device", "host"])
def test_cluster_pairs_cover_every_tile_once(seed, mode):
    """2 x 1 clusters (the B-multicast kernel): the visitor deals 256-row pair tiles to clusters,
    CTA r of a cluster takes tile row 2i + r. Every 128-row tile is some CTA's exactly once; the
    only extra CTA tiles are the odd last row of a group (its CTA loads B for its peer, stores
    nothing); the two CTAs of a cluster walk the same pair tiles step by step."""
    rng = random.Random(100 + seed)
    groups = rng.randint(0, 30)
    m = [rng.choice([0, 1, 128, 129, 256, rng.randint(1, 900)]) for _ in range(groups)]
    n = [rng.randint(0, 700) for _ in range(groups)]
    k = [rng.randint(0, 4096) for _ in range(groups)]
    grid = 2 * rng.randint(1, 66)
    panel = rng.choice([0, 2, 8])
    rows = sched._schedule_grouped(m, n, k, 128, 256, grid, mode, rng.random() < 0.5, panel=panel,
                                   cluster_m=2).tolist()
    inside = collections.Counter((g, i, j) for _, _, g, i, j, _ in rows if i < math.ceil(m[g] / 128))
    expected = {(g, i, j) for g in range(groups) for i, j in _tiles(m[g], n[g], 128, 256)}
    assert set(inside) == expected and all(v == 1 for v in inside.values())
    extra = [(g, i) for _, _, g, i, _, _ in rows if i >= math.ceil(m[g] / 128)]
    assert all(i == math.ceil(m[g] / 128) and i % 2 == 1 for g, i in extra)
    by_cta = {(cta, step): (g, i, j) for cta, step, g, i, j, _ in rows}
    for (cta, step), (g, i, j) in by_cta.items():
        peer = by_cta[(cta ^ 1, step)]
        assert peer[0] == g and peer[2] == j and peer[1] == i ^ 1 and i % 2 == cta % 2


def test_cluster_grid_must_hold_whole_clusters():
    with pytest.raises(ValueError, match="multiple of cluster_m"):
        sched._schedule_grouped([256], [256], [64], 128, 256, 3, "device", False, cluster_m=2)


def test_group_sizes_beyond_32_bits_are_refused():
    """GemmTiles divides in 32 bits (the kernels' row and column coordinates are 32-bit)."""
    with pytest.raises(ValueError, match=r"group sizes must lie in \[0, 2\^31\)"):
        sched._schedule_grouped([2**31], [128], [64], 128, 128, 1, "device", False)
    rows = sched._schedule_grouped([2**31 - 1], [1], [64], 2**20, 128, 1, "device", False).tolist()
    assert [(g, i, j) for _, _, g, i, j, _ in rows] == [(0, i, 0) for i in range(2**11)]


def test_panel_raster_keeps_a_wave_in_a_panel():
    """Panels 8 tiles wide: the first 132 tiles of a 16 x 112-tile grid are the 128 tiles of
    columns 0-7 and 4 tiles of row 0 in the next panel, so one wave reads 16 A strips and 12 B
    strips instead of 2 A strips and all 112 B strips (n fastest)."""
    rows = sched._schedule_grouped([2048], [14336], [4096], 128, 128, 132, "device", False, panel=8).tolist()
    first_wave = [(i, j) for _, step, _, i, j, _ in rows if step == 0]
    assert {j for _, j in first_wave} == set(range(12))
    assert {i for i, _ in first_wave} == set(range(16))
    # a narrow last panel: 10 columns in panels of 4 -> widths 4, 4, 2
    rows = sched._schedule_grouped([256], [10 * 128], [64], 128, 128, 1, "device", False, panel=4).tolist()
    assert [(i, j) for *_, i, j, _ in rows] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3),
        (0, 4), (0, 5), (0, 6), (0, 7), (1, 4), (1, 5), (1, 6), (1, 7),
        (0, 8), (0, 9), (1, 8), (1, 9)]


def test_grouped_modes_agree():
    args = ([1152, 1152, 768, 768], [768, 768, 1152, 1152], [128, 1024, 128, 1024], 128, 128, 108)
    for sort in (False, True):
        dev = sched._schedule_grouped(*args, "device", sort)
        host = sched._schedule_grouped(*args, "host", sort)
        assert torch.equal(dev, host)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["warp", "warp_remember"])
def test_warp_search_matches_the_sequential_visitor(seed, mode):
    """The device kernels' warp-parallel search (sched/warp_visitor.cuh: a lane per group, a
    shuffle prefix sum of their tiles, a ballot for the owner), run lane by lane on 32 emulated
    lanes, visits exactly the tiles of the sequential visitor, step by step, with the group's
    sizes, the same in every lane: across windows of 32 groups, past runs of 32 and more empty
    groups, with panels and clusters. (`warp_remember`: the grouped WGMMA kernels' variant that
    skips the search for another tile of the last group.)"""
    rng = random.Random(700 + seed)
    groups = [1, 31, 32, 33, 70, 70][seed]
    m = [rng.choice([0, 0, 1, 128, 129, rng.randint(1, 600)]) for _ in range(groups)]
    n = [rng.choice([0, 64, rng.randint(1, 400)]) for _ in range(groups)]
    if seed == 5:  # a run of empty groups longer than a window
        m[3:40] = [0] * 37
    k = [rng.randint(1, 512) for _ in range(groups)]
    cluster = rng.choice([1, 2])
    grid = cluster * rng.randint(1, 20)
    args = (m, n, k, 128, rng.choice([128, 256]), grid)
    kw = dict(panel=rng.choice([0, 3]), cluster_m=cluster)
    sort = rng.random() < 0.5
    expected = sched._schedule_grouped(*args, "device", sort, **kw)
    assert torch.equal(sched._schedule_grouped(*args, mode, sort, **kw), expected)


@pytest.mark.parametrize("all_tiles", [False, True])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_warp_search_walks_the_rank2k_triangle(uplo, all_tiles):
    """The Rank2K kernels run the same search over the triangle's tiles (SymmetricTiles, padding
    slots included) without `Remember`."""
    sizes = [0, 1, 130, 300, 77] * 8 + [1000]
    args = (sizes, 128, 64, 13, uplo)
    expected = sched._schedule_rank2k(*args, all_tiles=all_tiles)
    assert torch.equal(sched._schedule_rank2k(*args, all_tiles=all_tiles, mode="warp"), expected)
    assert torch.equal(sched._schedule_rank2k(*args, all_tiles=all_tiles, mode="host"), expected)


def test_schedule_modes_are_checked():
    with pytest.raises(ValueError, match="mode must be 'device', 'host', 'warp' or 'warp_remember', got 'lanes'"):
        sched._schedule_grouped([256], [256], [64], 128, 128, 3, "lanes", False)


def test_sorting_by_k_balances_seed_example():
    """Seed 000's example: 4 problems of 54 tiles on 108 CTAs. Unsorted, CTAs 54-107 get both
    K = 1024 tiles; sorted, every CTA gets one K = 1024 tile and one K = 128 tile."""
    m, n, k = [1152, 1152, 768, 768], [768, 768, 1152, 1152], [128, 1024, 128, 1024]

    def work_per_cta(sort):
        rows = sched._schedule_grouped(m, n, k, 128, 128, 108, "host", sort).tolist()
        work = collections.Counter()
        for cta, _, g, *_ in rows:
            work[cta] += k[g]
        return work

    assert max(work_per_cta(False).values()) == 2048
    assert set(work_per_cta(True).values()) == {1152}


def _meets_triangle(i, j, tm, tn, uplo):
    return (i + 1) * tm - 1 >= j * tn if uplo == "L" else i * tm <= (j + 1) * tn - 1


@pytest.mark.parametrize("tm, tn", [(64, 64), (128, 64), (64, 128), (128, 32), (32, 128), (256, 64)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_rank2k_walk_is_a_bijection_onto_the_triangle(tm, tn, uplo):
    sizes = [0, 1, 31, 64, 65, 127, 128, 130, 132, 255, 257, 500, 1024, 1000]
    rows = sched._schedule_rank2k(sizes, tm, tn, 37, uplo).tolist()
    valid = collections.Counter((g, i, j) for _, _, g, i, j, v in rows if v)
    expected = {(g, i, j) for g, s in enumerate(sizes) for i, j in _tiles(s, s, tm, tn)
                if _meets_triangle(i, j, tm, tn, uplo)}
    assert set(valid) == expected and all(v == 1 for v in valid.values())
    # padding slots are few: at most (ratio - 1) per macro row of the grid
    r = max(tm, tn) // min(tm, tn)
    padding = sum(1 for *_, v in rows if not v)
    assert padding <= sum((r - 1) * math.ceil(s / max(tm, tn)) for s in sizes)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_rank2k_pair_tiles_cover_the_triangle_once(uplo):
    """syr2k's clustered kernel: the walk deals 256 x 128 pair tiles (macro tiles of the Rank2K
    walk) and each CTA of the 2 x 1 cluster takes one 128 x 128 half (sched::cluster_member_tile).
    Every 128-tile the triangle needs is some valid pair's half exactly once; the other halves
    lie across the diagonal (the kernel computes them for the multicast and stores nothing) and
    there is at most one per 256-row band."""
    sizes = [0, 1, 127, 128, 129, 256, 300, 384, 1000, 1024, 1152]
    rows = sched._schedule_rank2k(sizes, 256, 128, 11, uplo).tolist()
    halves = collections.Counter((g, 2 * i + r, j) for _, _, g, i, j, v in rows if v for r in (0, 1))
    needed = {(g, i, j) for g, s in enumerate(sizes) for i, j in _tiles(s, s, 128, 128)
              if _meets_triangle(i, j, 128, 128, uplo)}
    assert needed <= set(halves) and all(halves[t] == 1 for t in needed)
    extra = [(g, i, j) for g, i, j in halves if (g, i, j) not in needed]
    rows_of = {g: math.ceil(s / 128) for g, s in enumerate(sizes)}
    # an extra half is across the diagonal, or rows past the problem's last tile row
    assert all(not _meets_triangle(i, j, 128, 128, uplo) or i >= rows_of[g] for g, i, j in extra)
    assert len(extra) <= sum(math.ceil(s / 256) * 2 for s in sizes)


@pytest.mark.parametrize("n, cluster", [
    ([8192], 2),   # 2080 tiles (16 waves of 132) against 1056 pairs (16 waves of 66): the multicast pays
    ([4096], 1),   # 528 tiles, 4 waves, against 272 pairs, 5 waves
    ([2048], 1),   # 136 tiles: under two waves, nothing to gain
    ([1024], 1),   # 36 tiles
    ([8192, 128, 1000], 2),
])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_rank2k_cluster_choice_on_132_sms(n, cluster, uplo):
    """syr2k's choice of 2 x 1 clusters for its tile walk (sched::rank2k_walk_cluster) with the
    H100's 132 CTAs and 66 clusters: what was measured in session 13 (benchmarks/NOTES.md)."""
    assert sched._rank2k_cluster(n, uplo, 132, 66) == cluster
    assert sched._rank2k_cluster(n, uplo, 132, 0) == 1  # no cluster fits: one CTA per tile
    # the GEMM-scheduler switch walks the whole square: at n = 4096, 1024 tiles and 512 pairs
    assert sched._rank2k_cluster([4096], uplo, 132, 66, all_tiles=True) == 2


@pytest.mark.parametrize("n, k, tile_n", [(8192, 1024, 256), (4096, 4096, 128), (2048, 8192, 128),
                                          (1024, 1024, 128), (16384, 1024, 256)])
def test_rank2k_tile_choice_on_the_h100(n, k, tile_n):
    """syr2k's one-problem tile (sched::rank2k_wide_tile_pays) with the H100's Rank2K model on 132
    SMs: the 128 x 256 tile's data-parallel walk where session 15 measured it faster (n = 8192,
    k = 1024: 252 against 274 µs), 128 x 128 on the others (benchmarks/NOTES.md)."""
    assert sched._rank2k_plan(n, k, 64, 132, "NVIDIA H100 80GB HBM3")[0] == tile_n


DATA_PARALLEL, SPLIT_K, STREAM_K = 0, 1, 2  # sched::Decomposition


@pytest.mark.parametrize("what, n, k, tile_k, plan", [
    # fp32 in 3xTF32 (K three times over, 32-deep steps): 36 tiles of 192 K blocks on 132 SMs in
    # 3 slices, the count that fills the grid, which the powers of two miss (2 slices: 69.6 µs
    # against 57.3; H100, session 35), on the 108 CTAs that get a slice
    ("fp32 n1024", 1024, 3 * 1024, 32, [128, SPLIT_K, 3, 108]),
    # bf16 n1024: 32 K blocks a tile, too short to pay a fixup (21.9-22.6 µs, split_k 21.8); one
    # tile for each of 36 CTAs
    ("bf16 n1024", 1024, 1024, 64, [128, DATA_PARALLEL, 1, 36]),
    # 136 tiles on 132 SMs: Stream-K's balance (137.5 µs against 168 data-parallel)
    ("bf16 n2048 k8192", 2048, 8192, 64, [128, STREAM_K, 1, 132]),
])
def test_rank2k_plan_on_the_h100(what, n, k, tile_k, plan):
    """syr2k's one-problem `auto` plan with the H100's Rank2K model on 132 SMs, as measured
    against every forced decomposition in session 35 (benchmarks/NOTES.md): [tile_n,
    decomposition, splits, grid], the grid being the CTAs launched, those with work only."""
    assert sched._rank2k_plan(n, k, tile_k, 132, "NVIDIA H100 80GB HBM3") == plan


@pytest.mark.parametrize("what, n, k, tile_k, plan", [
    ("fp32 n8192 k1024", 8192, 3 * 1024, 32, [128, DATA_PARALLEL, 1, 132]),
    ("fp32 n1024", 1024, 3 * 1024, 32, [128, SPLIT_K, 3, 108]),
    ("bf16 n2048 k8192", 2048, 8192, 64, [128, STREAM_K, 1, 132]),
    ("bf16 n1024", 1024, 1024, 64, [128, DATA_PARALLEL, 1, 36]),
])
def test_rank2k_plan_on_the_h200(what, n, k, tile_k, plan):
    """syr2k's one-problem plan on the H200 with its Rank2K entry: the model it ran with before it
    had a streamk_mm calibration of its own (the H100's 128 x 256 fit, c halved). Its own 128 x 256
    fit, c halved, took another plan for fp32 n8192 k1024, 2405 µs against 1595-1620 (H200,
    session 50's calls 5-6); these are the plans measured there."""
    assert sched._rank2k_plan(n, k, tile_k, 132, "NVIDIA H200") == plan


@pytest.mark.parametrize("name, major, minor, sms, source", [
    ("NVIDIA H100 80GB HBM3", 9, 0, 132, "NVIDIA H100 80GB HBM3"),  # calibrated itself
    ("NVIDIA H200", 9, 0, 132, "NVIDIA H200"),                      # calibrated itself (session 50)
    ("NVIDIA GH200 480GB", 9, 0, 132, "NVIDIA H100 80GB HBM3"),      # the same die, clocks and SMs: the first listed
    ("NVIDIA H100 PCIe", 9, 0, 114, ""),                             # fewer SMs: the defaults
    ("NVIDIA A100-SXM4-80GB", 8, 0, 108, ""),
    ("NVIDIA H100 80GB HBM3", 9, 0, 114, "NVIDIA H100 80GB HBM3"),  # its name first, whatever its SMs (a MIG slice)
])
def test_calibration_source_of_a_gpu(name, major, minor, sms, source):
    """A GPU without Stream-K calibrations of its own takes those of a calibrated GPU of its kind
    (compute capability and SM count), else none: the defaults ("")."""
    assert sched._calibration_source(name, major, minor, sms) == source


def test_rank2k_plan_needs_a_calibrated_device_and_a_kernel_step():
    with pytest.raises(ValueError, match="no Rank2K calibration"):
        sched._rank2k_plan(1024, 1024, 64, 132, "a GPU nobody calibrated")
    with pytest.raises(ValueError, match="tile_k is 64 or 32"):
        sched._rank2k_plan(1024, 1024, 16, 132, "NVIDIA H100 80GB HBM3")


def test_symmetric_all_tiles_is_the_gemm_walk_of_the_square():
    """The syr2k kernel's comparison mode: every tile of each square once, valid, in the order
    of the grouped GEMM walk; the triangle tiles are the same set the Rank2K walk produces."""
    sizes = [0, 1, 130, 300, 77]
    full = sched._schedule_rank2k(sizes, 128, 128, 7, "L", all_tiles=True)
    gemm = sched._schedule_grouped(sizes, sizes, [1] * len(sizes), 128, 128, 7, "device", False)
    assert torch.equal(full, gemm)
    tri = {(g, i, j) for _, _, g, i, j, _ in sched._schedule_rank2k(sizes, 128, 128, 7, "L").tolist()}
    assert tri == {(g, i, j) for _, _, g, i, j, _ in full.tolist() if i >= j}


def test_rank2k_upper_is_lower_transposed_for_square_tiles():
    low = sched._schedule_rank2k([300, 77], 64, 64, 5, "L")
    up = sched._schedule_rank2k([300, 77], 64, 64, 5, "U")
    assert torch.equal(low[:, [0, 1, 2, 4, 3, 5]], up)


def _check_streamk(rows, tiles, iters, separate_allowed=True):
    by_tile = collections.defaultdict(list)
    for cta, tile, k0, k1, starts, slot, more_segments, first_slot, ipt, slots, _, segment, run, reads, separate, _, \
            _, _, _ in rows:
        assert ipt == iters
        by_tile[tile].append((k0, k1, starts, slot, more_segments, first_slot, cta, segment, run, reads, separate))
    assert set(by_tile) == set(range(tiles))
    for tile, segs in by_tile.items():
        segs.sort()
        assert segs[0][0] == 0 and segs[-1][1] == iters, (tile, segs)  # the ranges partition K ...
        assert all(a[1] == b[0] for a, b in zip(segs, segs[1:])), (tile, segs)
        assert all(s[0] < s[1] for s in segs) or iters == 0  # ... with no empty segment
        assert [s[2] for s in segs] == [1] + [0] * (len(segs) - 1)  # one segment holds k = 0
        assert all(s[4] == len(segs) - 1 for s in segs)  # every segment knows how many there are
        if len(segs) == 1:
            assert segs[0][3] == -1 and segs[0][5] == -1  # stored directly, no workspace
        else:
            assert all(0 <= s[3] < slots for s in segs) and segs[0][5] == segs[0][3], (tile, segs)
            # Slots after the first evenly spaced (segment_slot_stride): 1 for split-K slices, 2 for Stream-K.
            stride = 1 if rows[0][10] == 1 else 2
            assert all(b[3] - a[3] == stride for a, b in zip(segs[1:], segs[2:])), (tile, segs)
        assert [s[7] for s in segs] == list(range(len(segs))), (tile, segs)  # segments numbered in K order
        if segs[0][10]:
            _check_separate_fixup([s[8] for s in segs], {s[9] for s in segs})
        else:
            _check_fixup_tree([s[8] for s in segs], {s[9] for s in segs})
    # The separate fixup kernel sums a plan's cut tiles exactly when some tile has 32 segments or more.
    most = max(len(segs) for segs in by_tile.values()) if by_tile else 0
    assert {r[14] for r in rows if r[6] > 0} <= {1 if most >= 32 and separate_allowed else 0}
    used = [r[5] for r in rows if r[5] >= 0]
    assert len(used) == len(set(used)), "a workspace slot is written twice"
    # The plan launches exactly the CTAs that hold a unit.
    assert not rows or {r[0] for r in rows} == set(range(rows[0][18])), "a CTA without work is launched"
    # The model's e and f terms (FixupStats), the same on every row: a Stream-K tile is cut; the
    # partials stored beyond one per cut tile (all of them where the separate kernel sums).
    cut = {tile: segs for tile, segs in by_tile.items() if len(segs) > 1}
    extra = sum(len(segs) if segs[0][10] else len(segs) - 1 for segs in cut.values())
    assert {(r[16], r[17]) for r in rows} <= {(extra, 1 if cut and rows[0][10] != 1 else 0)}, (extra, rows[0])


def _check_fixup_tree(runs, reads):
    """The fixup's runs of one tile (run of each segment, in K order): one run up to 8 segments,
    else ceil(sqrt(segments)) runs of consecutive segments whose lengths differ by at most one;
    `reads` (one value for all segments): the partials read one after another on its slowest path."""
    segments = len(runs)
    expected_runs = 1 if segments <= 8 else math.isqrt(segments - 1) + 1
    lengths = collections.Counter(runs)
    assert runs == sorted(runs) and sorted(lengths) == list(range(expected_runs)), runs
    assert max(lengths.values()) - min(lengths.values()) <= 1, runs
    if segments == 1:
        assert reads == {0}
    else:
        assert reads == {segments if expected_runs == 1 else max(lengths.values()) + expected_runs}, (runs, reads)


def _check_separate_fixup(parts, reads):
    """The separate fixup kernel's parts of one tile: 8 consecutive ranges of segments (some empty
    when there are fewer than 8), the kernel's launch and one parallel pass for the model."""
    segments = len(parts)
    assert parts == [next(w for w in range(8) if w * segments // 8 <= j < (w + 1) * segments // 8)
                     for j in range(segments)], parts
    assert reads == {2}


@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("segments", list(range(1, 40)) + [63, 64, 65, 131, 132, 200])
def test_fixup_runs(segments, separate):
    """One tile of 2·segments iterations on `segments` CTAs: every CTA holds one segment. syr2k's
    plans (separate_fixup=False) sum in FixupTree's runs; streamk_mm's hand tiles of 32 segments
    or more to the separate kernel."""
    rows = sched._schedule_streamk(128, 128, 128 * segments, 128, 128, 64, "stream_k", 1, segments,
                                   separate_fixup=separate).tolist()
    _check_streamk(rows, 1, 2 * segments, separate_allowed=separate)
    assert len(rows) == segments


@settings(max_examples=200, deadline=None)
@given(tiles_m=st.integers(1, 6), tiles_n=st.integers(1, 6), iters=st.integers(1, 300), grid=st.integers(1, 140),
       decomposition=st.sampled_from(["stream_k", "dp_one_tile_sk", "two_tile_sk_dp", "split_k", "auto"]),
       splits=st.integers(1, 16), separate=st.booleans())
def test_property_streamk_plans(tiles_m, tiles_n, iters, grid, decomposition, splits, separate):
    """Any plan: the ranges partition every tile's K, slots are unique and evenly spaced, the
    fixup's runs or parts are as FixupTree and SeparateFixup say, and the separate kernel is
    chosen exactly when some tile has 32 segments or more (StreamKPlan::fixup_stats, which counts
    them in one pass over the CTAs, against the segments the walk produces)."""
    rows = sched._schedule_streamk(128 * tiles_m, 128 * tiles_n, 64 * iters, 128, 128, 64, decomposition, splits,
                                   grid, separate_fixup=separate).tolist()
    _check_streamk(rows, tiles_m * tiles_n, iters, separate_allowed=separate)
    assert rows[0][18] <= grid


def test_idle_ctas_are_not_launched():
    """64 split-K units of one tile on a grid of 132 launch 64 CTAs (the 68 idle ones cost 24.6
    µs against 19.3-20.1 on 64; H200, session 48); a full wave keeps the grid."""
    rows = sched._schedule_streamk(128, 128, 65536, 128, 128, 64, "split_k", 64, 132).tolist()
    assert {r[18] for r in rows} == {64} and sorted(r[0] for r in rows) == list(range(64))
    rows = sched._schedule_streamk(384, 384, 128, 128, 128, 64, "data_parallel", 1, 132).tolist()
    assert {r[18] for r in rows} == {9}
    rows = sched._schedule_streamk(128, 128, 640, 128, 128, 64, "stream_k", 1, 132).tolist()
    assert {r[18] for r in rows} == {10} and len(rows) == 10  # one iteration a CTA
    rows = sched._schedule_streamk(128 * 12, 128 * 11, 640, 128, 128, 64, "data_parallel", 1, 132).tolist()
    assert {r[18] for r in rows} == {132}


@pytest.mark.parametrize("tile_m, tile_n", [(64, 128), (128, 128), (128, 256), (192, 128), (256, 128), (256, 256)])
def test_partial_quads_cover_the_tile_once(tile_m, tile_n):
    """A partial in register order (sched::PartialQuad): its float4s hold every element of the tile
    exactly once, two adjacent columns in each of rows r and r + 8; a warp's 32 float4s cover 8
    rows (and their + 8) by 8 columns, and every band of 64 rows lies in its own 64 · tile_n
    floats (a cluster's pair tile: rank 0's warpgroups first)."""
    quads = sched._streamk_partial_quads(tile_m, tile_n).tolist()
    assert len(quads) == tile_m * tile_n // 4
    covered = collections.Counter((r + dr, c + dc) for r, c in quads for dr in (0, 8) for dc in (0, 1))
    assert set(covered) == {(r, c) for r in range(tile_m) for c in range(tile_n)} and set(covered.values()) == {1}
    for first in range(0, len(quads), 32):
        warp = quads[first:first + 32]
        assert sorted({r for r, _ in warp}) == list(range(warp[0][0], warp[0][0] + 8))
        assert sorted({c for _, c in warp}) == list(range(warp[0][1], warp[0][1] + 8, 2))
    assert all(r // 64 == q // (16 * tile_n) for q, (r, _) in enumerate(quads))


def test_dram_floor_on_unshared_stream_k_reads(monkeypatch):
    """`auto`'s floor on Stream-K plans whose CTAs each sit inside one tile (sched::unshared_operand_mb):
    512² x 65536 (16 tiles, 124 of 1024 iterations a CTA) counts 537 MB as Stream-K, 110 µs at
    4.9 TB/s (ncu: 317 MB read, L2 catching some), so split_k 8 wins (H200, session 49: 59.7 µs
    against Stream-K's 108.8, torch.mm 55.9); a shape
    whose Stream-K plan reads less than its model time is left as it was, and no rate, no floor.
    (The H100 entry's narrow model: the floor is in microseconds, as calibrated constants are.)"""
    monkeypatch.setenv("TORCH_GROUPED_STREAMK_MODEL", "6.054,1.589,0.3657,2.105,2.483,1.143")

    def plan(m, n, k, tbps):
        rows = sched._schedule_streamk(m, n, k, 128, 128, 64, "auto", 1, 132, dram_tbps=tbps)
        return int(rows[0, 10]), int(rows[0, 18]), int(rows[:, 6].max()) + 1  # decomposition, grid, segments
    assert plan(512, 512, 65536, 0.0)[0] == STREAM_K
    assert plan(512, 512, 65536, 4.9) == (SPLIT_K, 128, 8)
    assert plan(128, 128, 65536, 4.9) == plan(128, 128, 65536, 0.0)  # one tile: nothing to share
    assert plan(383, 1014, 16638, 4.9) == plan(383, 1014, 16638, 0.0)  # 42 µs of unshared reads, under its model
    with pytest.raises(ValueError, match="dram_tbps must be >= 0"):
        sched._schedule_streamk(512, 512, 65536, 128, 128, 64, "auto", 1, 132, dram_tbps=-1.0)


def test_partial_quads_need_whole_bands():
    with pytest.raises(ValueError, match="tile_m must be a multiple of 64 and tile_n of 8"):
        sched._streamk_partial_quads(96, 128)
    with pytest.raises(ValueError, match="tile_m must be a multiple of 64 and tile_n of 8"):
        sched._streamk_partial_quads(128, 100)


def test_split_k_16_sums_four_runs_of_four():
    rows = sched._schedule_streamk(128, 128, 65536, 128, 128, 64, "split_k", 16, 132).tolist()
    _check_streamk(rows, 1, 1024)
    assert sorted((r[11], r[12], r[14]) for r in rows) == [(j, j // 4, 0) for j in range(16)]
    assert {r[13] for r in rows} == {8}


def test_forty_segments_in_eight_parts_of_five():
    rows = sched._schedule_streamk(128, 128, 5120, 128, 128, 64, "stream_k", 1, 40).tolist()
    _check_streamk(rows, 1, 80)
    assert sorted((r[11], r[12], r[13], r[14]) for r in rows) == [(j, j // 5, 2, 1) for j in range(40)]


@pytest.mark.parametrize("decomposition", ["data_parallel", "split_k", "stream_k", "dp_one_tile_sk",
                                           "two_tile_sk_dp", "auto"])
@pytest.mark.parametrize("m, n, k, grid", [
    (1024, 1024, 16384, 132),   # tiles < CTAs
    (8192, 8192, 1024, 132),    # tiles >> CTAs
    (1000, 3000, 64, 132),      # one iteration per tile
    (130, 250, 1000, 7),        # m, n not multiples of the tile
    (128, 128, 128, 132),       # fewer iterations than CTAs
    (300, 300, 0, 10),          # K = 0
    (256, 256, 131072, 132),    # deep K, two tiles of 66 segments: the fixup's two levels
])
@pytest.mark.parametrize("separate", [True, False])
def test_streamk_ranges_partition_the_work(decomposition, m, n, k, grid, separate):
    tiles = math.ceil(m / 128) * math.ceil(n / 128)
    iters = math.ceil(k / 64)
    rows = sched._schedule_streamk(m, n, k, 128, 128, 64, decomposition, 3, grid, separate_fixup=separate).tolist()
    _check_streamk(rows, tiles, iters, separate_allowed=separate)


@pytest.mark.parametrize("m, n, k, grid", [(1024, 1024, 16384, 132), (130, 250, 1000, 7), (384, 384, 128, 132)])
def test_stream_k_balance_within_one_iteration(m, n, k, grid):
    rows = sched._schedule_streamk(m, n, k, 128, 128, 64, "stream_k", 1, grid).tolist()
    work = collections.Counter()
    for cta, _, k0, k1, *_ in rows:
        work[cta] += k1 - k0
    assert max(work.values()) - min(work.values()) <= 1


@pytest.mark.parametrize("decomposition, tiles, grid, sk_tiles", [
    ("dp_one_tile_sk", 300, 132, 300 % 132), ("two_tile_sk_dp", 300, 132, 132 + 300 % 132),
    ("two_tile_sk_dp", 264, 132, 0), ("dp_one_tile_sk", 100, 132, 100), ("two_tile_sk_dp", 100, 132, 100),
])
def test_hybrids_share_the_right_tiles(decomposition, tiles, grid, sk_tiles):
    """The first sk_tiles tiles are spread Stream-K style (balanced within one iteration over the
    CTAs); the rest are whole tiles dealt round-robin, data-parallel."""
    rows = sched._schedule_streamk(128 * tiles, 128, 640, 128, 128, 64, decomposition, 1, grid).tolist()
    sk_work = collections.Counter()
    for cta, tile, k0, k1, *_ in rows:
        if tile < sk_tiles:
            sk_work[cta] += k1 - k0
        else:
            assert (k0, k1) == (0, 10) and cta == (tile - sk_tiles) % grid, (cta, tile, k0, k1)
    if sk_tiles:
        assert sum(sk_work.values()) == sk_tiles * 10
        assert len(sk_work) == min(grid, sk_tiles * 10) and max(sk_work.values()) - min(sk_work.values()) <= 1


@pytest.mark.parametrize("tiles, grid", [(6, 132), (264, 132), (300, 132), (10, 3)])
def test_data_parallel_deals_whole_tiles_round_robin(tiles, grid):
    """A data-parallel plan (StreamKPlan::whole_tiles, the kernels' short walk): tile t whole to
    CTA t mod grid, each CTA's tiles in increasing order."""
    rows = sched._schedule_streamk(128 * tiles, 128, 640, 128, 128, 64, "data_parallel", 1, grid).tolist()
    assert sorted((r[1], r[0], r[2], r[3]) for r in rows) == [(t, t % grid, 0, 10) for t in range(tiles)]
    for cta in range(grid):
        mine = [r[1] for r in rows if r[0] == cta]
        assert mine == list(range(cta, tiles, grid)), (cta, mine)


@pytest.mark.parametrize("m, n, k, grid", [(4096, 4096, 4096, 132), (1664, 1664, 4096, 132), (640, 256, 640, 7)])
def test_stream_k_ctas_sweep_k_in_lockstep(m, n, k, grid):
    """Rotated ranges: every CTA whose range holds a tile boundary starts there (k = 0), and after
    the wrap all CTAs are at the same K block (within one) modulo the tile's iterations."""
    rows = sched._schedule_streamk(m, n, k, 128, 128, 64, "stream_k", 1, grid).tolist()
    iters = rows[0][8]
    units = collections.defaultdict(list)
    for cta, _, k0, k1, *_ in rows:
        units[cta].append((k0, k1))
    phase_after_wrap = set()
    for cta, seq in units.items():
        length = sum(k1 - k0 for k0, k1 in seq)
        if len(seq) > 1 or seq[0][0] == 0:
            assert seq[0][0] == 0, (cta, seq)
        if len(seq) > 1 and seq[-1][0] > 0:  # the leading piece, run last
            done = length - (seq[-1][1] - seq[-1][0])
            phase_after_wrap.add((seq[-1][0] - done) % iters)
    # Range lengths differ by at most one, so the phases by at most one block.
    assert len(phase_after_wrap) <= 2, phase_after_wrap
    if len(phase_after_wrap) == 2:
        lo, hi = sorted(phase_after_wrap)
        assert hi - lo in (1, iters - 1), phase_after_wrap


# `auto`'s tile (sched::choose_streamk_tile, 128 x 256 against 128 x 128, each with its own model
# a..f): the width whose best plan is predicted fastest, 256 on a tie.
@pytest.mark.parametrize("m, n, k, wide, narrow, expected", [
    # 704 x 832 x 144: 24 wide or 42 narrow tiles of 3 iterations, one wave either way; narrow
    # iterations cost half: narrow.
    (704, 832, 144, [10, 0, 1, 1, 0, 0], [10, 0, 0.5, 1, 0, 0], 128),
    # The same, but a narrow CTA's fixed cost is higher than the wide plan's whole time: wide.
    (704, 832, 144, [10, 0, 1, 1, 0, 0], [100, 0, 0.5, 1, 0, 0], 256),
    # 8192² x 1024: 2048 wide tiles, 4096 narrow, 16 iterations each; both spread all iterations
    # over the CTAs (Stream-K): 249 wide iterations per CTA against 497 narrow ones, so narrow at
    # half the cost per iteration (259.5 against 260) ...
    (8192, 8192, 1024, [10, 0, 1, 1, 0, 0], [10, 0, 0.5, 1, 0, 0], 128),
    # ... and wide at 0.6 of it.
    (8192, 8192, 1024, [10, 0, 1, 1, 0, 0], [10, 0, 0.6, 1, 0, 0], 256),
    # A 128-wide output is one tile either way: with equal models a tie, which the wide tile takes
    # (the op itself runs 128 x 128 where N <= 128).
    (128, 128, 65536, [10, 1, 1, 1, 0, 0], [10, 1, 1, 1, 0, 0], 256),
])
def test_streamk_tile_choice(m, n, k, wide, narrow, expected):
    assert sched._choose_streamk_tile(m, n, k, 132, wide, narrow) == [128, expected]


# With the 192 x 128 tile offered too (its own model): fixups made dear (b = e = 20), so each tile's
# best plan is its data-parallel one, waves x 64 iterations of K 4096.
TALL_MODELS = ([10, 20, 1, 0, 20, 0], [10, 20, 0.66, 0, 20, 0], [10, 20, 0.82, 0, 20, 0])


@pytest.mark.parametrize("m, n, k, offered, expected", [
    # 1664² x 4096: 117 tall tiles in one wave of 132 (10 + 64 x 0.82 = 62.5) against 91 wide
    # ones in one (74) and 169 narrow ones in two (94.5): tall ...
    (1664, 1664, 4096, 3, [192, 128]),
    # ... and wide where the tall tile is not offered.
    (1664, 1664, 4096, 2, [128, 256]),
    # 4096³: 512 wide tiles in 4 waves (266) against 704 tall ones in 6 (325) and 1024 narrow in 8
    # (348): wide.
    (4096, 4096, 4096, 3, [128, 256]),
])
def test_streamk_tile_choice_with_the_tall_tile(m, n, k, offered, expected):
    wide, narrow, tall = TALL_MODELS
    assert sched._choose_streamk_tile(m, n, k, 132, wide, narrow, tall if offered == 3 else None) == expected


def test_streamk_tile_choice_rejects():
    with pytest.raises(ValueError, match="a model is six constants a..f"):
        sched._choose_streamk_tile(128, 128, 128, 132, [1, 2, 3, 4], [1, 2, 3, 4, 5, 6])
    with pytest.raises(ValueError, match="a model is six constants a..f"):
        sched._choose_streamk_tile(128, 128, 128, 132, [1] * 6, [1] * 6, [1, 2])
    with pytest.raises(ValueError, match="sizes and sms must be positive"):
        sched._choose_streamk_tile(128, 0, 128, 132, [1] * 6, [1] * 6)


# Where streamk_mm reads operands TMA cannot address by row copies rather than pitched copies
# (sched::row_copies_pay): corpus shapes with an operand of 4-byte aligned rows, each on the side it
# was measured faster (H100, session 25, benchmarks/NOTES.md), with the pieces its operands take
# (A: K's bytes, B: N's; 0 where TMA reads the operand, or where its rows are only 2-byte aligned
# and it goes through a pitched copy beside the other's row copies; 383 x 1014 x 16638 in session
# 26, once `auto` weighed the row-copy kernel's plans with its own model). Four wins beside a pitched
# copy are left to the copies (1126 x 980 x 40163 -24%, 1160 x 3356 x 3217 -14%, 471 x 1447 x
# 15562 -3%, 557 x 3141 x 150 -2%: a threshold on the share low enough for the first two would
# take eight of the 15 losses with them); all 22 such shapes are listed.
@pytest.mark.parametrize("m, n, k, rows", [
    # both operands readable by rows or TMA
    (1559, 1296, 16966, True), (2063, 1798, 336, True), (734, 6028, 2544, True), (708, 830, 140, True),
    (527, 1300, 792, True), (497, 212, 47612, True), (5117, 196, 6212, True),
    (383, 1014, 16638, True),  # (session 26: with the row-copy kernel's own model; copies before)
    (710, 3686, 3282, False), (1051, 2898, 5410, False), (1379, 3640, 334, False),
    (938, 5066, 1908, False), (5097, 1734, 2212, False), (8180, 1084, 206, False), (2462, 4928, 286, False),
    # one operand of 2-byte aligned rows (odd K or N), pitched
    (5796, 193, 9436, True), (673, 289, 40150, True), (154, 1234, 24001, True),
    (210, 1035, 3118, False), (4576, 196, 515, False), (1249, 2671, 15426, False), (2909, 1467, 572, False),
    (1413, 142, 10793, False), (581, 741, 1540, False), (1104, 142, 519, False), (904, 951, 534, False),
    (378, 964, 3107, False), (3976, 3686, 4155, False), (6652, 990, 11459, False), (5137, 158, 1115, False),
    (557, 3141, 150, False), (1069, 500, 851, False), (1111, 777, 1044, False), (838, 2954, 415, False),
    (1126, 980, 40163, False), (1160, 3356, 3217, False), (471, 1447, 15562, False),
])
def test_row_copies_pay_where_measured(m, n, k, rows):
    piece = lambda elements: next(w for w in (16, 8, 4, 2) if 2 * elements % w == 0)  # noqa: E731
    a_width, b_width = (piece(e) for e in (k, n))
    beside = 2 in (a_width, b_width)
    a_width, b_width = (0 if w in (2, 16) else w for w in (a_width, b_width))
    assert sched._row_copies_pay(m, n, 132, a_width, b_width, pitched_beside=beside) == rows


def test_row_copies_pay_rules():
    """Few tiles (one per 16 CTAs) always; light producer work (load <= 4) where the pitched copies
    are dear (A's share 1/n >= 1/2750); any load within one wave; never for both operands in
    4-byte pieces past one wave; beside another operand's pitched copy only where this one's copy
    would be most of the work."""
    assert sched._row_copies_pay(512, 256, 132, 4, 4)                 # 8 tiles on 132 CTAs
    assert sched._row_copies_pay(1408, 1408, 132, 4, 4)               # 121 tiles, load 8
    assert not sched._row_copies_pay(1536, 1536, 132, 4, 4)           # 144 tiles, load 8
    assert sched._row_copies_pay(4096, 2750, 132, 4, 0)               # load 4, share 1/2750
    assert not sched._row_copies_pay(4096, 2751, 132, 4, 0)
    assert sched._row_copies_pay(1280, 1280, 132, 8, 4)               # 100 tiles, load 6
    assert not sched._row_copies_pay(1280, 1280, 64, 8, 4)            # the same past one wave
    # beside a pitched copy: only a share >= 8 (A alone: n <= 343), or few tiles
    assert sched._row_copies_pay(4096, 343, 132, 4, 0, pitched_beside=True)
    assert not sched._row_copies_pay(4096, 344, 132, 4, 0, pitched_beside=True)
    assert sched._row_copies_pay(512, 256, 132, 0, 4, pitched_beside=True)
    with pytest.raises(ValueError, match="widths are 4, 8 or 16 bytes"):
        sched._row_copies_pay(128, 128, 132, 2, 0)
    with pytest.raises(ValueError, match="copies_cheap weighs k"):
        sched._row_copies_pay(128, 128, 132, 4, 0, copies_cheap=True)
    with pytest.raises(ValueError, match="m, n and grid must be positive"):
        sched._row_copies_pay(128, 128, 0, 4, 0)


# Where a GPU whose copies are cheap (an H200) reads by row copies: the shapes of the seed-2027 draw
# and of the corpus where its picks differ from the H100's rule, each on the side measured faster
# on an H200 (session 50, tools/probe_row_rule.py; µs pitched / rows), with the pieces as above.
@pytest.mark.parametrize("m, n, k, rows", [
    (201, 882, 139, False),     # 12.9 / 14.7: beside a copy, 0.25 MB row-copied
    (275, 271, 5250, False),    # 27.2 / 28.7
    (170, 292, 1423, False),    # 19.6 / 21.0
    (158, 286, 1439, False),    # 19.0 / 22.2
    (137, 258, 12059, False),   # 34.0 / 34.1
    (606, 2740, 914, False),    # 25.0 / 27.4: one wave, load 6, K 914
    (250, 1442, 666, False),    # 16.6 / 22.4
    (164, 3932, 44302, False),  # 374 / 402
    (383, 1014, 16638, False),  # 76.1 / 82.7
    (708, 830, 140, True),      # 14.2 / 13.2: one wave, load 6, K 140
    (5796, 193, 9436, True),    # 163 / 119: beside a copy, 109 MB row-copied
    (436, 252, 32373, True),    # 69.1 / 63.6: few tiles, 16 MB
])
def test_row_copies_pay_where_copies_are_cheap(m, n, k, rows):
    piece = lambda elements: next(w for w in (16, 8, 4, 2) if 2 * elements % w == 0)  # noqa: E731
    a_width, b_width = (piece(e) for e in (k, n))
    beside = 2 in (a_width, b_width)
    a_width, b_width = (0 if w in (2, 16) else w for w in (a_width, b_width))
    assert sched._row_copies_pay(m, n, 132, a_width, b_width, pitched_beside=beside, k=k, copies_cheap=True) == rows


class TestScheduleDumps(expecttest.TestCase):
    def test_rank2k_seed_example_3x3_lower(self):
        rows = sched._schedule_rank2k([192], 64, 64, 1, "L").tolist()
        self.assertExpectedInline(str([(i, j) for *_, i, j, _ in rows]),
                                  """[(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]""")

    def test_rank2k_macro_tiles_64x32_on_128(self):
        rows = sched._schedule_rank2k([128], 64, 32, 1, "L").tolist()
        self.assertExpectedInline(str([(i, j) for *_, i, j, _ in rows]),
                                  """[(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)]""")

    def test_rank2k_padding_132_with_64x32(self):
        """Seed 000: a 3x5 grid padded to 3x6; the slot (2, 5) is padding."""
        rows = sched._schedule_rank2k([132], 64, 32, 1, "L").tolist()
        self.assertExpectedInline(str([(i, j, v) for *_, i, j, v in rows]), """\
[(0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1), (1, 2, 1), (1, 3, 1), (2, 0, 1), (2, 1, 1), (2, 2, 1), (2, 3, 1), (2, 4, 1), (2, 5, 0)]""")

    def test_fixup_runs_of_ten_segments(self):
        """Ten segments: runs [0, 2), [2, 5), [5, 7), [7, 10); 3 + 4 partials on the slowest path."""
        rows = sched._schedule_streamk(128, 128, 1280, 128, 128, 64, "stream_k", 1, 10, separate_fixup=False).tolist()
        self.assertExpectedInline(str([(r[11], r[12], r[13]) for r in rows]), """[(0, 0, 7), (1, 0, 7), (2, 1, 7), (3, 1, 7), (4, 1, 7), (5, 2, 7), (6, 2, 7), (7, 3, 7), (8, 3, 7), (9, 3, 7)]""")

    def test_stream_k_one_tile_three_ctas(self):
        rows = sched._schedule_streamk(128, 128, 640, 128, 128, 64, "stream_k", 1, 3).tolist()
        self.assertExpectedInline(str([tuple(r[:6]) for r in rows]),
                                  """[(0, 0, 0, 3, 1, 0), (1, 0, 3, 6, 0, 2), (2, 0, 6, 10, 0, 4)]""")


# Where streamk_mm runs in 2 x 1 clusters (sched::streamk_clusters_pay): corpus shapes on the side
# session 31's A/B put them (H100, benchmarks/NOTES.md), with the tile `auto` took there.
@pytest.mark.parametrize("m, n, tile_n, in_place, clusters", [
    (3976, 3686, 256, False, True),    # 336 -> 248 µs
    (831, 3792, 256, False, True),     # 159 -> 116
    (3351, 1091, 128, False, True),    # 243 tiles: 73.5 -> 61.2
    (734, 6028, 128, False, True),     # 288 tiles (0.993x: the rule's worst pick)
    (557, 3141, 128, False, False),    # 125 tiles: 0.82x in clusters
    (128, 1432, 128, False, False),    # 12 tiles: 0.81x
    (4096, 4096, 256, True, False),    # in place: TMA stores without clusters
    (1408, 1408, 128, True, False),    # in place: 0.71x in clusters
])
def test_streamk_clusters_pay_where_measured(m, n, tile_n, in_place, clusters):
    assert sched._streamk_clusters_pay(m, n, tile_n, in_place=in_place) == clusters


# Where streamk_mm runs its 64 x 64 tiles (sched::small_tile_pays): the shapes session 51's A/B
# timed on an H200 against `auto`'s 128-row tile (benchmarks/NOTES.md), µs.
@pytest.mark.parametrize("m, n, k, small", [
    (708, 830, 140, True),       # 42 tiles of 128 x 128: 12.5 -> 10.4
    (290, 136, 248, True),       # 6: 7.6 -> 6.6
    (384, 384, 128, True),       # 9: 6.8 -> 6.2
    (435, 392, 157, True),       # 16: 10.6 -> 9.2
    (1104, 142, 519, True),      # 18: 15.5 -> 13.5
    (178, 455, 1095, True),      # 8: 19.1 -> 17.4
    (939, 167, 675, True),       # 16: 16.9 -> 15.9
    (219, 157, 10383, False),    # deep K: 22.2 -> 31.0 in the small tile
    (497, 212, 47612, False),    # deep K: 76.7 -> 112
    (1463, 1017, 265, False),    # 96 tiles: 14.6 -> 15.9
    (557, 3141, 150, False),     # 125 tiles: 15.3 -> 16.5
])
def test_small_tile_pays_where_measured(m, n, k, small):
    assert sched._streamk_small_tile_pays(m, n, k, 132) == small


def test_small_tile_pays_rules():
    """At most a third of the grid in 128 x 128 tiles, K at most 2048, nothing empty."""
    assert sched._streamk_small_tile_pays(768, 768, 2048, 132)         # 6 x 6 = 36 tiles, 3 x 36 <= 132
    assert sched._streamk_small_tile_pays(640, 1024, 64, 120)           # 5 x 8 = 40, 3 x 40 = 120
    assert not sched._streamk_small_tile_pays(640, 1024, 64, 119)
    assert not sched._streamk_small_tile_pays(768, 768, 2049, 132)     # K past 32 blocks of 64
    assert not sched._streamk_small_tile_pays(5 * 128, 9 * 128, 64, 132)  # 45 tiles
    assert sched._streamk_small_tile_pays(1, 1, 1, 3) and not sched._streamk_small_tile_pays(1, 1, 1, 2)
    for m, n, k in [(0, 64, 64), (64, 0, 64), (64, 64, 0)]:
        assert not sched._streamk_small_tile_pays(m, n, k, 132)
    with pytest.raises(ValueError, match="grid positive"):
        sched._streamk_small_tile_pays(64, 64, 64, 0)


def test_streamk_clusters_pay_rules():
    """Never in place; 128 x 256 tiles always; 128 x 128 tiles from 160 of them."""
    assert sched._streamk_clusters_pay(128, 256, 256, in_place=False)
    assert not sched._streamk_clusters_pay(8192, 8192, 256, in_place=True)
    assert sched._streamk_clusters_pay(2048, 1280, 128, in_place=False)       # 16 x 10 = 160 tiles
    assert sched._streamk_clusters_pay(1921, 1153, 128, in_place=False)       # 16 x 10 with partial tiles
    assert not sched._streamk_clusters_pay(1920, 1280, 128, in_place=False)   # 15 x 10 = 150
    assert not sched._streamk_clusters_pay(2048, 1152, 128, in_place=False)   # 16 x 9 = 144
    assert not sched._streamk_clusters_pay(2048, 1280, 128, in_place=True)
    with pytest.raises(ValueError, match="tile_n is 128 or 256"):
        sched._streamk_clusters_pay(128, 128, 64, in_place=False)
    with pytest.raises(ValueError, match="m and n must be positive"):
        sched._streamk_clusters_pay(0, 128, 128, in_place=False)

