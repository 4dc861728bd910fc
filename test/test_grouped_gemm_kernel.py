"""The Hopper grouped GEMM kernel behind gemm and grouped_mm: ragged groups against tile edges,
empty groups, both B layouts, every output dtype, the zero tail, both scheduler modes, CUDA graphs,
and the inputs TMA cannot address (which must take the correct slower path)."""
import random

import pytest
import torch

import reference
import torch_grouped as tg
from harness import (HOPPER_ONLY, gemm_replayed, kernels_launched, matmul_configs, matmul_modes, matmul_tiles,
                     transpose_kernels)

pytestmark = HOPPER_ONLY

HALF = [torch.bfloat16, torch.float16]


def poison_next_allocation(numel):
    """Fills a freed block with NaN so that the op's output, which the caching allocator carves
    from it, shows every element the kernel does not write."""
    torch.empty(numel + 4096, device="cuda", dtype=torch.float32).fill_(float("nan"))


def weights(groups, k, n, dtype, k_major, generator):
    if k_major:  # [G, N, K] storage seen as [G, K, N]: unit stride along K
        return torch.randn(groups, n, k, generator=generator).to("cuda", dtype).mT
    return torch.randn(groups, k, n, generator=generator).to("cuda", dtype)


def check(out, ref, dtype):
    assert not out.isnan().any(), "unwritten (NaN) elements in the output"
    reference.assert_close(out, ref, dtype)


def check_graph_replays(a, b, offs, routed_counts):
    """grouped_mm(a, b, offs) captured once in a CUDA graph (after a warm-up outside the capture),
    then replayed with new routing written into the same offs: random counts over its groups
    summing to each of `routed_counts`, the output poisoned before each replay."""
    tg.grouped_mm(a, b, offs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.grouped_mm(a, b, offs)
    for routed in routed_counts:
        counts = torch.bincount(torch.randint(len(offs), (routed,)), minlength=len(offs))
        offs.copy_(counts.cumsum(0).to(torch.int32))
        out.fill_(float("nan"))
        graph.replay()
        check(out, reference.grouped_mm(a, b, offs.cpu()), torch.bfloat16)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("k_major", [True, False])
@pytest.mark.parametrize("out_dtype", [None, torch.float32])
@pytest.mark.parametrize("k, n", [(8, 8), (64, 128), (72, 136), (200, 264), (1000, 520)])
def test_ragged_rows(dtype, k_major, out_dtype, k, n):
    g = torch.Generator().manual_seed(k * 1000 + n)
    counts = [0, 1, 127, 128, 129, 300, 0, 64, 5]
    offs = torch.tensor(counts, dtype=torch.int32).cumsum(0).to(torch.int32)
    rows = int(offs[-1]) + 37  # 37 rows past the last offset must come out as zeros
    a = torch.randn(rows, k, generator=g).to("cuda", dtype)
    b = weights(len(counts), k, n, dtype, k_major, g)
    poison_next_allocation(rows * n)
    out = tg.grouped_mm(a, b, offs.cuda(), out_dtype=out_dtype)
    assert out.dtype == (out_dtype or dtype)
    check(out, reference.grouped_mm(a, b, offs), dtype)
    assert torch.all(out[int(offs[-1]):] == 0)


# The grouped kernels copy a call's offsets into shared memory for up to this many groups
# (GroupedGemmConfig::SharedOffsets) and read them in global memory beyond.
SHARED_OFFSETS = 256


@pytest.mark.parametrize("groups", [SHARED_OFFSETS - 1, SHARED_OFFSETS, SHARED_OFFSETS + 1, 600])
@pytest.mark.parametrize("form", ["rows", "columns", "k"])
def test_offsets_in_shared_memory_and_beyond(groups, form):
    """Calls on either side of the shared copy's capacity, in each ragged form: random group sizes
    with empty groups among them, a tail past the last offset, every element checked."""
    g = torch.Generator().manual_seed(groups * 3 + len(form))
    counts = torch.randint(0, 24, (groups,), generator=g)
    counts[torch.randperm(groups, generator=g)[: groups // 5]] = 0
    offs = counts.cumsum(0).to(torch.int32)
    total = int(offs[-1]) + 11  # past the last offset: zeros (rows, columns) or unread (K)
    dtype = torch.bfloat16
    if form == "rows":
        a = torch.randn(total, 64, generator=g).to("cuda", dtype)
        b = weights(groups, 64, 72, dtype, True, g)
        poison_next_allocation(total * 72)
    elif form == "columns":
        a = torch.randn(groups, 40, 64, generator=g).to("cuda", dtype)
        b = weights(1, 64, total, dtype, False, g)[0]
        poison_next_allocation(40 * total)
    else:
        a = torch.randn(40, total, generator=g).to("cuda", dtype)
        b = torch.randn(total, 72, generator=g).to("cuda", dtype)
        poison_next_allocation(groups * 40 * 72)
    out = tg.grouped_mm(a, b, offs.cuda())
    check(out, reference.grouped_mm(a, b, offs), dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("k_major", [True, False])
def test_ragged_columns_and_batched(dtype, k_major):
    g = torch.Generator().manual_seed(1)
    groups, m, k = 5, 200, 96
    ends = torch.tensor([0, 136, 137, 400, 408], dtype=torch.int32)
    a = torch.randn(groups, m, k, generator=g).to("cuda", dtype)
    b = weights(1, k, 420, dtype, k_major, g)[0]
    poison_next_allocation(m * 420)
    out = tg.grouped_mm(a, b, ends.cuda())
    check(out, reference.grouped_mm(a, b, ends), dtype)
    assert torch.all(out[:, 408:] == 0)
    bb = weights(groups, k, 136, dtype, k_major, g)
    poison_next_allocation(groups * m * 136)
    check(tg.grouped_mm(a, bb), reference.grouped_mm(a, bb, None), dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_moe_sizes_many_k_blocks(dtype):
    """Large enough for 128x256 tiles, several tiles per CTA and a deep K loop."""
    g = torch.Generator().manual_seed(2)
    counts = torch.bincount(torch.randint(8, (6000,), generator=g), minlength=8)
    offs = counts.cumsum(0).to(torch.int32)
    a = torch.randn(6000, 2048, generator=g).to("cuda", dtype)
    for k_major in (True, False):
        b = weights(8, 2048, 3072, dtype, k_major, g)
        check(tg.grouped_mm(a, b, offs.cuda()), reference.grouped_mm(a.float(), b.float(), offs), dtype)


@pytest.mark.parametrize("tile", ["128x256", "128x128", "128x256c2", "128x256+tma"])
def test_short_last_tile_rows_in_a_deep_walk(tile, monkeypatch):
    """Experts of 256 ± a few rows (DeepSeek-V3's routing, scaled down): about half end in a tile
    row of at most 64 rows (one consumer warpgroup's rows all past the group), between tiles
    whose rows are all inside; many tiles per CTA and more K blocks than stages. The case for
    any change to how a warpgroup treats rows past its group (session 33 tried skipping them)."""
    force_tile(monkeypatch, tile)
    g = torch.Generator().manual_seed(33)
    counts = [256 + d for d in (-3, 5, 0, 17, -16, 64, 65, 1, -64, 2, 63, -1)] * 3
    random.Random(4).shuffle(counts)
    offs = torch.tensor(counts, dtype=torch.int32).cumsum(0).to(torch.int32)
    a = torch.randn(int(offs[-1]) + 9, 1088, generator=g).to("cuda", torch.bfloat16)
    b = weights(len(counts), 1088, 1024, torch.bfloat16, True, g)
    poison_next_allocation(a.shape[0] * 1024)
    out = tg.grouped_mm(a, b, offs.cuda())
    check(out, reference.grouped_mm(a, b, offs), torch.bfloat16)
    assert torch.all(out[int(offs[-1]):] == 0)
    la = [a[s:e] for s, e in zip([0] + offs.tolist()[:-1], offs.tolist())]
    lb = [w for w in b]
    poison_next_allocation(int(offs[-1]) * 1024)
    for o, r in zip(tg.gemm(la, lb), reference.gemm(la, lb)):
        check(o, r, torch.bfloat16)


@pytest.mark.parametrize("tile", ["128x256", "128x128", "128x256c2", "128x256+tma"])
@pytest.mark.parametrize("k_major", [True, False])
@pytest.mark.parametrize("out_dtype", [None, torch.float32])
def test_every_tail_length(tile, k_major, out_dtype, monkeypatch):
    """Groups ending 1, 2, 31, 63, 64, 65 and 127 rows into their last tile row, after 0, 1 and 2
    whole ones (in clusters, pairs whose second CTA's rows are all past the group), each group's
    last tile row checked on its own; N = 392, whose last column tile is 136 (128 x 256) or 8
    (128 x 128) wide; K in four blocks, the last partial; the zeros past the last offset; the
    list API's groups too. (Session 38's half tiles, which ran such tiles on 64 rows, passed it
    and were rejected for speed: branch `half-tiles`.)"""
    force_tile(monkeypatch, tile)
    g = torch.Generator().manual_seed(38 + len(tile) + 2 * k_major)
    k, n = 200, 392
    counts = [whole * 128 + tail for whole in (0, 1, 2) for tail in (1, 2, 31, 63, 64, 65, 127)]
    random.Random(38).shuffle(counts)
    offs = torch.tensor(counts, dtype=torch.int32).cumsum(0).to(torch.int32)
    a = torch.randn(int(offs[-1]) + 37, k, generator=g).to("cuda", torch.bfloat16)
    b = weights(len(counts), k, n, torch.bfloat16, k_major, g)
    poison_next_allocation(a.shape[0] * n)
    out = tg.grouped_mm(a, b, offs.cuda(), out_dtype=out_dtype)
    ref = reference.grouped_mm(a, b, offs)
    check(out, ref, torch.bfloat16)
    assert torch.all(out[int(offs[-1]):] == 0)
    starts, ends = [0] + offs.tolist()[:-1], offs.tolist()
    for s, e in zip(starts, ends):  # each group's last tile row on its own
        tail = s + (e - s - 1) // 128 * 128
        check(out[tail:e], ref[tail:e], torch.bfloat16)
    la = [a[s:e] for s, e in zip(starts, ends)]
    poison_next_allocation(int(offs[-1]) * n)
    for o, r in zip(tg.gemm(la, list(b), out_dtype=out_dtype), reference.gemm(la, list(b))):
        check(o, r, torch.bfloat16)
        check(o[(o.shape[0] - 1) // 128 * 128:], r[(r.shape[0] - 1) // 128 * 128:], torch.bfloat16)


# Every compiled tile configuration, forced through TORCH_GROUPED_TILE; 128x256c2 is the 2 x 1
# clustered kernel (B multicast), which grouped_mm's forward forms take only under TORCH_GROUPED_CLUSTER=1;
# "+tma" adds TORCH_GROUPED_TMA_STORE=1 (the 128x256 variant whose epilogue stores through TMA; none
# in clusters: test_tma_store_takes_its_kernel).
TILES = ["128x256", "128x128", "64x128", "128x256c2", "128x256+tma"]


def force_tile(monkeypatch, tile):
    name, _, extra = tile.partition("+")
    monkeypatch.setenv("TORCH_GROUPED_TILE", name)
    if extra == "tma":
        monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", "1")


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("k_major", [True, False])
def test_every_tile_configuration(tile, dtype, k_major, monkeypatch):
    """Each configuration on the three grouped_mm forms and the list API in both scheduler modes.
    Group sizes put tile edges everywhere a pair tile of the clustered kernel can end: 1, 129 and
    300 rows (one, two and three 128-row tiles, so pairs whose second half is past the group),
    empty groups, 256 rows (one whole pair), and 20 rows past the last offset. With TMA stores the
    64-row blocks inside a group go through TMA and the others through the threads, in one call."""
    force_tile(monkeypatch, tile)
    g = torch.Generator().manual_seed(len(tile) * 10 + k_major)
    k, n = 200, 520  # 3 column tiles of 256, the last 8 wide
    counts = [1, 129, 0, 300, 256, 3]
    offs = torch.tensor(counts, dtype=torch.int32).cumsum(0).to(torch.int32)
    a = torch.randn(int(offs[-1]) + 20, k, generator=g).to("cuda", dtype)
    b = weights(len(counts), k, n, dtype, k_major, g)
    poison_next_allocation(a.shape[0] * n)
    out = tg.grouped_mm(a, b, offs.cuda())
    check(out, reference.grouped_mm(a, b, offs), dtype)
    assert torch.all(out[int(offs[-1]):] == 0)
    poison_next_allocation(a.shape[0] * n)  # fp32 output: 32-column lines, 8 per 256-wide tile
    out32 = tg.grouped_mm(a, b, offs.cuda(), out_dtype=torch.float32)
    check(out32, reference.grouped_mm(a, b, offs), dtype)
    # ragged columns (3-D x 2-D): the pair tiles run along each group's 300 rows
    ends = torch.tensor([0, 136, 137, 400, 520], dtype=torch.int32)
    a3 = torch.randn(5, 300, k, generator=g).to("cuda", dtype)
    b2 = weights(1, k, n, dtype, k_major, g)[0]
    poison_next_allocation(300 * n)
    check(tg.grouped_mm(a3, b2, ends.cuda()), reference.grouped_mm(a3, b2, ends), dtype)
    # batched (3-D x 3-D)
    b3 = weights(5, k, 264, dtype, k_major, g)
    poison_next_allocation(5 * 300 * 264)
    check(tg.grouped_mm(a3, b3), reference.grouped_mm(a3, b3, None), dtype)
    # the list API: host-precomputed lists (per cluster) and the device-only visitor
    shapes = [(129, 520, 200), (1, 8, 64), (300, 256, 72), (0, 64, 64), (384, 304, 1000)]
    la = [torch.randn(m, kk, generator=g).to("cuda", dtype) for m, _, kk in shapes]
    lb = [weights(1, kk, nn, dtype, k_major, g)[0] for _, nn, kk in shapes]
    for schedule in ("host", "device"):
        poison_next_allocation(sum(m * nn for m, nn, _ in shapes))
        for o, r in zip(tg.gemm(la, lb, schedule=schedule), reference.gemm(la, lb)):
            check(o, r, dtype)


def test_clustered_kernel_in_a_cuda_graph(monkeypatch):
    """The clustered kernel captured once and replayed with new routing, as the default one is."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", "128x256c2")
    torch.manual_seed(4)
    a = torch.randn(1500, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(6, 256, 600, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([100, 300, 300, 700, 900, 1000], dtype=torch.int32, device="cuda")
    check_graph_replays(a, b, offs, [1300, 1397, 1494])


def test_cluster_opt_in_takes_the_clustered_kernel(monkeypatch):
    """TORCH_GROUPED_CLUSTER=1 turns the model's 128 x 256 choice into the clustered kernel, whose
    launch carries a cluster dimension; the result is the same as without it, bit for bit (the
    same tiles, the same K order)."""
    a = torch.randn(6144, 512, device="cuda", dtype=torch.bfloat16)  # the model picks 128 x 256 here
    b = torch.randn(4, 512, 3072, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([1000, 3100, 4000, 6144], dtype=torch.int32, device="cuda")
    plain = tg.grouped_mm(a, b, offs)
    monkeypatch.setenv("TORCH_GROUPED_CLUSTER", "1")
    out = []
    names = kernels_launched(lambda: out.append(tg.grouped_mm(a, b, offs)))
    assert matmul_configs(names) == {(2, False, True)}, names
    assert torch.equal(plain, out[0])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_list_of_big_groups_takes_its_kernel(dtype, monkeypatch):
    """gemm's model weighs the clustered kernel (sched::kListTileOptions): groups of an even count of
    128-row tiles run in 2 x 1 clusters by default, bit for bit as plain 128 x 256 does
    (TORCH_GROUPED_CLUSTER=0), and a group of odd tile rows, whose pair would pad a row, keeps
    the plain kernel; the switch takes 0 or 1 only."""
    g = torch.Generator().manual_seed(5)
    la = [torch.randn(1024, 512, generator=g).to("cuda", dtype) for _ in range(8)]
    lb = [torch.randn(512, 4096, generator=g).to("cuda", dtype) for _ in range(8)]  # 8 x 8 x 16 tiles of 128 x 256
    out = []
    assert matmul_configs(kernels_launched(lambda: out.append(tg.gemm(la, lb)))) == {(2, False, True)}
    for o, r in zip(out[0], reference.gemm(la, lb)):
        check(o, r, dtype)
    monkeypatch.setenv("TORCH_GROUPED_CLUSTER", "0")
    plain = []
    assert matmul_configs(kernels_launched(lambda: plain.append(tg.gemm(la, lb)))) == {(1, False, True)}
    assert all(torch.equal(x, y) for x, y in zip(out[0], plain[0]))
    monkeypatch.delenv("TORCH_GROUPED_CLUSTER")
    odd = [x[:896] for x in la]  # 7 tile rows a group
    assert matmul_configs(kernels_launched(lambda: tg.gemm(odd, lb))) == {(1, False, True)}
    monkeypatch.setenv("TORCH_GROUPED_CLUSTER", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_CLUSTER must be 0 or 1; got 'yes'"):
        tg.gemm(la, lb)


def test_tma_store_takes_its_kernel(monkeypatch):
    """TORCH_GROUPED_TMA_STORE=1 with 128 x 256 tiles: the list API, the ragged rows and the
    batched form run the TMA-store variant, the ragged columns keep the thread stores, as does a
    list with one output whose rows are not 16-byte aligned, and the clustered kernel."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", "128x256")
    monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", "1")

    def variant(fn):
        return {"true" if tma else "false" for _, tma, _ in matmul_configs(kernels_launched(fn))}

    a = torch.randn(600, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(3, 256, 512, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([100, 350, 600], dtype=torch.int32, device="cuda")
    assert variant(lambda: tg.grouped_mm(a, b, offs)) == {"true"}
    a3 = torch.randn(3, 200, 256, device="cuda", dtype=torch.bfloat16)
    assert variant(lambda: tg.grouped_mm(a3, b)) == {"true"}
    assert variant(lambda: tg.grouped_mm(a3, b[0], offs.clamp(max=512))) == {"false"}
    la = [torch.randn(300, 256, device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    assert variant(lambda: tg.gemm(la, [b[0], b[1]])) == {"true"}
    assert variant(lambda: tg.gemm(la, [b[0], b[1][:, :509]])) == {"false"}
    monkeypatch.setenv("TORCH_GROUPED_TILE", "128x256c2")  # no clustered TMA-store variant: the threads store
    out = []
    assert matmul_configs(kernels_launched(lambda: out.append(tg.grouped_mm(a, b, offs)))) == {(2, False, True)}
    check(out[0], reference.grouped_mm(a, b, offs.cpu()), torch.bfloat16)


def test_forced_tile_must_exist(monkeypatch):
    monkeypatch.setenv("TORCH_GROUPED_TILE", "256x256")
    a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(2, 64, 64, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="TORCH_GROUPED_TILE must be one of"):
        tg.grouped_mm(a, b, torch.tensor([32, 64], dtype=torch.int32, device="cuda"))


def test_strided_offsets():
    """offs as a strided view: the kernel reads a dense copy, not every other entry's memory."""
    interleaved = torch.tensor([30, -1, 100, -1, 100, -1, 250, -1], dtype=torch.int32, device="cuda")
    offs = interleaved[::2]
    a = torch.randn(260, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4, 64, 136, device="cuda", dtype=torch.bfloat16)
    check(tg.grouped_mm(a, b, offs), reference.grouped_mm(a, b, offs.cpu()), torch.bfloat16)


def test_all_groups_empty_and_no_groups():
    a = torch.randn(50, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4, 64, 128, device="cuda", dtype=torch.bfloat16)
    poison_next_allocation(50 * 128)
    out = tg.grouped_mm(a, b, torch.zeros(4, dtype=torch.int32, device="cuda"))
    assert torch.all(out == 0)
    empty = tg.grouped_mm(a, b[:0], torch.zeros(0, dtype=torch.int32, device="cuda"))
    assert empty.shape == (50, 128) and torch.all(empty == 0)


def test_routed_offsets_in_a_cuda_graph():
    """Captured once, replayed with new routing written into the same offs tensor."""
    torch.manual_seed(3)
    a = torch.randn(1024, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(6, 256, 384, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([100, 300, 300, 700, 900, 1000], dtype=torch.int32, device="cuda")
    check_graph_replays(a, b, offs, [900, 901, 902])


def test_misaligned_operands_are_copied():
    """K = 12 breaks TMA's 16-byte stride rule and an offset view its base alignment: the kernel
    reads a pitched copy (rows padded to 16 bytes)."""
    offs = torch.tensor([3, 9], dtype=torch.int32, device="cuda")
    a = torch.randn(10, 12, device="cuda", dtype=torch.float16)
    b = torch.randn(2, 12, 16, device="cuda", dtype=torch.float16)
    check(tg.grouped_mm(a, b, offs), reference.grouped_mm(a, b, offs.cpu()), torch.float16)
    base = torch.randn(10 * 64 + 1, device="cuda", dtype=torch.float16)
    a = base[1:].view(10, 64)  # 2-byte aligned start
    b = torch.randn(2, 64, 16, device="cuda", dtype=torch.float16)
    check(tg.grouped_mm(a, b, offs), reference.grouped_mm(a, b, offs.cpu()), torch.float16)
    at = torch.randn(64, 10, device="cuda", dtype=torch.float16).t()  # M-major a: copied
    check(tg.grouped_mm(at, b, offs), reference.grouped_mm(at, b, offs.cpu()), torch.float16)


@pytest.mark.parametrize("out_dtype", [None, torch.float32])
@pytest.mark.parametrize("k, n", [(12, 16), (100, 37), (1000, 131), (7, 5), (517, 300), (64, 830)])
def test_unaligned_k_and_n(k, n, out_dtype):
    """Odd K and N, both B layouts, the list API too, half and fp32 outputs: pitched copies of the
    operands, an output whose rows are not 16-byte aligned (staged shifted onto the output's
    16-byte grid, the partial pieces at the row ends element by element)."""
    offs = torch.tensor([50, 50, 170, 300], dtype=torch.int32, device="cuda")
    a = torch.randn(300, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4, k, n, device="cuda", dtype=torch.bfloat16)
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    check(tg.grouped_mm(a, b, offs, out_dtype=out_dtype), reference.grouped_mm(a, b, offs.cpu()), torch.bfloat16)
    bt = b.transpose(1, 2).contiguous().transpose(1, 2)  # K-major
    check(tg.grouped_mm(a, bt, offs, out_dtype=out_dtype), reference.grouped_mm(a, bt, offs.cpu()), torch.bfloat16)
    la = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m in (1, 130, 64)]
    lb = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in la]
    for o, r in zip(tg.gemm(la, lb, out_dtype=out_dtype), reference.gemm(la, lb)):
        check(o, r, torch.bfloat16)


def test_many_misaligned_operands_in_one_call():
    """80 operands whose rows are 40 bytes (K = 20), more than one launch of the pitched copies
    takes (32 each); a batched 3-D call whose B is an expanded (stride-0) batch of odd rows."""
    la = [torch.randn(m, 20, device="cuda", dtype=torch.float16) for m in range(1, 41)]
    lb = [torch.randn(20, 24 + 3 * i, device="cuda", dtype=torch.float16) for i in range(40)]
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the copies reuse
    for o, r in zip(tg.gemm(la, lb), reference.gemm(la, lb)):
        check(o, r, torch.float16)
    a = torch.randn(3, 70, 12, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1, 12, 33, device="cuda", dtype=torch.bfloat16).expand(3, 12, 33)
    check(tg.grouped_mm(a, b), reference.grouped_mm(a, b, None), torch.bfloat16)


def transposed_list(dtype):
    """A list problem with A stored M-major in every group: two of 1 MB or more, two small ones,
    and a B of neither layout."""
    shapes = [(1024, 640, 1024), (64, 128, 256), (768, 264, 2048), (100, 8, 136)]
    a = [torch.randn(k, m, device="cuda", dtype=dtype).t() for m, n, k in shapes]
    b = [torch.randn(k, n, device="cuda", dtype=dtype) for m, n, k in shapes]
    b[1] = torch.randn(256, 2 * 128, device="cuda", dtype=dtype)[:, ::2]  # strided: copied
    return a, b


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("a_m_major", ["1", "0"])
def test_transposed_operands_of_a_list(dtype, a_m_major, monkeypatch):
    """Every group right, whether the A's are read M-major (the one TMA cannot address so, M = 100,
    staged M-major with the strided B) or, with TORCH_GROUPED_GEMM_A_M_MAJOR=0, staged K-major (the
    big ones by the layout ops' transpose, the others by one pitched copy after them)."""
    monkeypatch.setenv("TORCH_GROUPED_GEMM_A_M_MAJOR", a_m_major)
    a, b = transposed_list(dtype)
    poison_next_allocation(sum(x.shape[0] * y.shape[1] for x, y in zip(a, b)))
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        check(o, r, dtype)


def test_transposed_operands_of_a_list_take_their_kernels(monkeypatch):
    """Read M-major: no transpose, one pitched copy (the unaddressable A and the strided B), the
    A-M-major kernel. Staged K-major (=0): one transpose launch for each A of 1 MB or more, one
    pitched copy for the rest."""
    a, b = transposed_list(torch.bfloat16)
    monkeypatch.delenv("TORCH_GROUPED_GEMM_A_M_MAJOR", raising=False)
    names = kernels_launched(lambda: tg.gemm(a, b))
    assert transpose_kernels(names) == 0 and sum("pitched_copy" in x for x in names) == 1, names
    assert all(not c[2] for c in matmul_configs(names)), names
    monkeypatch.setenv("TORCH_GROUPED_GEMM_A_M_MAJOR", "0")
    names = kernels_launched(lambda: tg.gemm(a, b))
    assert transpose_kernels(names) == 2 and sum("pitched_copy" in x for x in names) == 1, names
    assert all(c[2] for c in matmul_configs(names)), names


# (m, n, k) of a list whose A's are all transposed views TMA addresses M-major (M a multiple of 8:
# rows of 16 bytes): M ragged against the 64-row boxes and the tiles, K of one element, of one K
# block and ragged, empty groups of each kind.
M_MAJOR_SHAPES = [(1024, 640, 1024), (64, 128, 256), (8, 8, 1), (136, 264, 200), (72, 120, 63), (0, 64, 64),
                  (264, 8, 0), (520, 1000, 777), (2056, 136, 96)]


def m_major_list(dtype, seed, offset_view=False):
    """A_i = x_iᵀ (dense; or with `offset_view`, a view at an offset with padded rows), B_i row-major."""
    g = torch.Generator().manual_seed(seed)
    if offset_view:
        a = [torch.randn(k + 8, m + 24, generator=g).to("cuda", dtype)[8:, 16:16 + m].t() for m, n, k in M_MAJOR_SHAPES]
    else:
        a = [torch.randn(k, m, generator=g).to("cuda", dtype).t() for m, n, k in M_MAJOR_SHAPES]
    b = [torch.randn(k, n, generator=g).to("cuda", dtype) for m, n, k in M_MAJOR_SHAPES]
    return a, b


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("schedule", ["host", "device"])
@pytest.mark.parametrize("offset_view", [False, True])
def test_a_m_major_list_read_in_place(dtype, schedule, offset_view):
    """A stored M-major in every group, read where it lies (64-row boxes, MN-major WGMMA): every
    group right in half and fp32 outputs, the empty ones as zeros or empty, nothing unwritten."""
    a, b = m_major_list(dtype, HALF.index(dtype) + 2 * offset_view, offset_view)
    for out_dtype in (None, torch.float32):
        poison_next_allocation(sum(x.shape[0] * y.shape[1] for x, y in zip(a, b)))
        out = tg.gemm(a, b, out_dtype=out_dtype, schedule=schedule)
        for o, r in zip(out, reference.gemm(a, b)):
            assert o.dtype == (out_dtype or dtype)
            check(o, r, dtype)


@pytest.mark.parametrize("tile", ["128x128", "128x256", "128x256c2"])
def test_a_m_major_list_every_tile(tile, monkeypatch):
    """Each tile the A-M-major kernels exist with, on the list (the sanitizers' case: no profiler)."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", tile)
    a, b = m_major_list(torch.bfloat16, 9, offset_view=True)
    poison_next_allocation(sum(x.shape[0] * y.shape[1] for x, y in zip(a, b)))
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        check(o, r, torch.bfloat16)


@pytest.mark.parametrize("tile", ["", "128x128", "128x256", "128x256c2", "64x128"])
def test_a_m_major_list_takes_its_kernel(tile, monkeypatch):
    """One launch of an A-M-major kernel (GroupedGemmConfig's A K-major argument false) and no copy,
    in every tile it exists with; a forced tile it lacks (64 x 128) leaves the choice to the model.
    Same values as with the A's staged K-major."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", tile)
    monkeypatch.delenv("TORCH_GROUPED_GEMM_A_M_MAJOR", raising=False)
    a, b = m_major_list(torch.bfloat16, 5)
    names = kernels_launched(lambda: tg.gemm(a, b))
    assert transpose_kernels(names) == 0 and not any("pitched_copy" in x for x in names), names
    assert len(matmul_configs(names)) == 1 and all(not c[2] for c in matmul_configs(names)), names
    if tile and tile != "64x128":
        m, n = (int(v) for v in tile.removesuffix("c2").split("x"))
        assert matmul_tiles(names) == {(m, n)} and all(c[0] == (2 if tile.endswith("c2") else 1) for c in matmul_configs(names)), names
    in_place = tg.gemm(a, b)
    monkeypatch.setenv("TORCH_GROUPED_GEMM_A_M_MAJOR", "0")
    for o, r in zip(in_place, tg.gemm(a, b)):
        reference.assert_close(o, r.float(), torch.bfloat16)


def test_a_m_major_list_layout_votes(monkeypatch):
    """One kernel serves one A layout: a K-major minority is staged M-major (the transpose, 1 MB),
    an M-major minority K-major; a K-major B keeps the K-major kernel (no A-M-major one with it);
    a setting other than 0 or 1 is an error."""
    monkeypatch.delenv("TORCH_GROUPED_GEMM_A_M_MAJOR", raising=False)
    g = torch.Generator().manual_seed(7)
    rand = lambda *s: torch.randn(*s, generator=g).to("cuda", torch.bfloat16)  # noqa: E731
    a = [rand(1024, 512).t(), rand(768, 256).t(), rand(512, 1024)]  # two M-major, one K-major of 1 MB
    b = [rand(1024, 264), rand(768, 136), rand(1024, 200)]
    names = kernels_launched(lambda: tg.gemm(a, b))
    assert transpose_kernels(names) == 1 and all(not c[2] for c in matmul_configs(names)), names
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        check(o, r, torch.bfloat16)
    a = [rand(1024, 512), rand(256, 1024), rand(1024, 512).t()]  # the M-major one is the minority
    b = [rand(512, 264), rand(1024, 136), rand(1024, 200)]
    names = kernels_launched(lambda: tg.gemm(a, b))
    assert transpose_kernels(names) == 1 and all(c[2] for c in matmul_configs(names)), names
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        check(o, r, torch.bfloat16)
    a, b = m_major_list(torch.bfloat16, 3)
    b = [x.t().contiguous().t() for x in b]  # K-major
    names = kernels_launched(lambda: tg.gemm(a, b))
    assert all(c[2] for c in matmul_configs(names)), names
    for o, r in zip(tg.gemm(a, b), reference.gemm(a, b)):
        check(o, r, torch.bfloat16)
    monkeypatch.setenv("TORCH_GROUPED_GEMM_A_M_MAJOR", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_GEMM_A_M_MAJOR"):
        tg.gemm(a, b)


@pytest.mark.parametrize("dtype", HALF)
def test_list_backward_copies_no_operand(dtype):
    """gemm's own backward: dA_i = dY_i·B_iᵀ (B_iᵀ K-major) and dB_i = A_iᵀ·dY_i (A_iᵀ M-major, read
    where it lies): two matmul launches, no transpose or pitched copy, gradients against float64."""
    shapes = [(1024, 640, 512), (136, 264, 200), (520, 128, 1000)]
    g = torch.Generator().manual_seed(11)
    a = [torch.randn(m, k, generator=g).to("cuda", dtype).requires_grad_() for m, n, k in shapes]
    b = [torch.randn(k, n, generator=g).to("cuda", dtype).requires_grad_() for m, n, k in shapes]
    dy = [torch.randn(m, n, generator=g).to("cuda", dtype) for m, n, k in shapes]
    out = tg.gemm(a, b)
    names = kernels_launched(lambda: torch.autograd.grad(out, a + b, dy, retain_graph=True))
    assert transpose_kernels(names) == 0 and not any("pitched_copy" in x for x in names), names
    assert sum("GroupedGemmConfig<" in x for x in names) == 2, names
    grads = torch.autograd.grad(out, a + b, dy)
    for x, y, d, da, db in zip(a, b, dy, grads[:3], grads[3:]):
        check(da, d.double() @ y.double().T, dtype)
        check(db, x.double().T @ d.double(), dtype)


def list_problem(seed, dtype, groups):
    rng = random.Random(seed)
    a, b = [], []
    for i in range(groups):
        m = rng.choice([0, 1, 64, 127, 128, 129, 333])
        n = rng.choice([8, 120, 128, 264])
        k = rng.choice([0, 8, 64, 136, 512])
        a.append(torch.randn(m, k, device="cuda", dtype=dtype))
        # mixed layouts: the kernel takes one B layout and copies the minority
        b.append(torch.randn(n, k, device="cuda", dtype=dtype).t() if i % 3 else torch.randn(k, n, device="cuda", dtype=dtype))
    return a, b


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("schedule", ["host", "device"])
@pytest.mark.parametrize("sort_by_k", [True, False])
def test_list_api(dtype, schedule, sort_by_k):
    a, b = list_problem(HALF.index(dtype) * 4 + 2 * (schedule == "host") + sort_by_k, dtype, 40)
    poison_next_allocation(sum(x.shape[0] * y.shape[1] for x, y in zip(a, b)))
    out = tg.gemm(a, b, schedule=schedule, sort_by_k=sort_by_k)
    for o, r in zip(out, reference.gemm(a, b)):
        check(o, r, dtype)
    out32 = tg.gemm(a, b, out_dtype=torch.float32, schedule=schedule)
    for o, r in zip(out32, reference.gemm(a, b)):
        assert o.dtype == torch.float32
        check(o, r, dtype)


def test_list_api_seed_example_modes_agree():
    """Seed 000's four problems: every schedule and ordering gives the same bits."""
    shapes = [(1152, 768, 128), (1152, 768, 1024), (768, 1152, 128), (768, 1152, 1024)]
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, _, k in shapes]
    b = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _, n, k in shapes]
    runs = [tg.gemm(a, b, schedule=s, sort_by_k=o) for s in ("host", "device") for o in (True, False)]
    for o, r in zip(runs[0], reference.gemm(a, b)):
        check(o, r, torch.bfloat16)
    for run in runs[1:]:
        assert all(torch.equal(x, y) for x, y in zip(run, runs[0]))


def test_list_api_in_a_cuda_graph():
    a, b = list_problem(7, torch.bfloat16, 12)
    tg.gemm(a, b)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.gemm(a, b)
    for x in a:
        x.normal_()
    graph.replay()
    for o, r in zip(out, reference.gemm(a, b)):
        check(o, r, torch.bfloat16)


@pytest.mark.parametrize("schedule", ["host", "device"])
@pytest.mark.parametrize("groups", [6, 60, 100, 250, 400])
def test_list_api_upload_paths(groups, schedule):
    """The problem table (88 bytes a group, and with host lists 8 per tile: one tile a group here)
    travels in the map kernel's parameters in 4, 8, 16 or 28 KB (6, 60, 100, 250 groups), through a
    pinned copy beyond (400 groups: 35 KB of table): every path, eagerly and replayed in a CUDA
    graph with new inputs, every group's output written (poisoned first)."""
    rng = torch.Generator().manual_seed(groups)
    sizes = [tuple(int(v) for v in torch.randint(1, 72, (3,), generator=rng)) for _ in range(groups)]
    sizes = [(m, n, k - k % 8 + 8) for m, n, k in sizes]  # K rows 16-byte aligned: no staging copies
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, _, k in sizes]
    b = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _, n, k in sizes]
    poison_next_allocation(sum(m * n for m, n, _ in sizes))
    for o, r in zip(tg.gemm(a, b, schedule=schedule), reference.gemm(a, b)):
        check(o, r, torch.bfloat16)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.gemm(a, b, schedule=schedule)
    for x in a + b:
        x.normal_()
    graph.replay()
    for o, r in zip(out, reference.gemm(a, b)):
        check(o, r, torch.bfloat16)


GROUPED, STREAM_K = 0, 2  # KernelMode::Grouped and ::StreamK (harness.matmul_modes)


def tail_lists(tile, k_major, generator):
    """Two lists for a forced carve (TORCH_GROUPED_LIST_TAIL=1) in `tile` tiles: a group visited
    first (deeper K), then one tile row a few hundred tiles wide, so that the partial last round
    lies in that row whatever the grid; its width in tiles T or T + 1 (no grid divides both)."""
    tile_n = 128 if tile in ("128x128", "64x128") else 256
    for extra in (0, 1):
        shapes = [(256, 512, 320), (100, tile_n * (300 + extra) - 56, 256)]  # the last tile 200 wide
        a = [torch.randn(m, k, generator=generator).to("cuda", torch.bfloat16) for m, _, k in shapes]
        b = [weights(1, k, n, torch.bfloat16, k_major, generator)[0] for _, n, k in shapes]
        yield a, b


@pytest.mark.parametrize("tile", ["128x256c2", "128x256", "128x128", "64x128"])
@pytest.mark.parametrize("k_major", [True, False])
@pytest.mark.parametrize("out_dtype", [None, torch.float32])
def test_list_tail_goes_to_the_streamk_kernel(tile, k_major, out_dtype, monkeypatch):
    """TORCH_GROUPED_LIST_TAIL=1 carves the walk's partial last round (sched/list_tail.h) out of
    the last group: the grouped kernel computes the rest of the group as two problems and the
    Stream-K kernel the corner, into the same output (poisoned first), in every output dtype."""
    force_tile(monkeypatch, tile)
    monkeypatch.setenv("TORCH_GROUPED_LIST_TAIL", "1")
    for a, b in tail_lists(tile, k_major, torch.Generator().manual_seed(len(tile) + 2 * k_major)):
        poison_next_allocation(sum(x.shape[0] * y.shape[1] for x, y in zip(a, b)) * 2)
        out = tg.gemm(a, b, out_dtype=out_dtype)
        for o, r in zip(out, reference.gemm(a, b)):
            assert o.dtype == (out_dtype or torch.bfloat16)
            check(o, r, torch.bfloat16)


def test_list_tail_in_a_cuda_graph(monkeypatch):
    """A carved call captured in a CUDA graph (the Stream-K kernel's workspace and tile counters
    among the captured allocations), replayed with new inputs into the poisoned outputs."""
    force_tile(monkeypatch, "128x256")
    monkeypatch.setenv("TORCH_GROUPED_LIST_TAIL", "1")
    for a, b in tail_lists("128x256", False, torch.Generator().manual_seed(4)):
        out = gemm_replayed(a, b)
        for o, r in zip(out, reference.gemm(a, b)):
            check(o, r, torch.bfloat16)


@pytest.mark.parametrize("tile", ["128x256c2", "64x128"])
def test_list_tail_takes_its_kernel(tile, monkeypatch):
    """The forced carve launches the Stream-K kernel for at least one of the two widths, =0 never."""
    force_tile(monkeypatch, tile)
    carved = 0
    for a, b in tail_lists(tile, True, torch.Generator().manual_seed(3)):
        for tail in ("1", "0"):
            monkeypatch.setenv("TORCH_GROUPED_LIST_TAIL", tail)
            modes = matmul_modes(kernels_launched(lambda: tg.gemm(a, b)))
            assert GROUPED in modes
            if tail == "0":
                assert STREAM_K not in modes
            carved += STREAM_K in modes
    assert carved >= 1


def test_list_tail_rule_takes_its_kernel_on_big_groups(monkeypatch):
    """By the rule (the switch unset) 8 x 4096 x 4096 x 2048 in 128 x 256 tiles (4096 tiles: on
    132 SMs 31 rounds and 4 tiles, each 2048 deep) carves the corner sched::list_tail_corner names
    for this GPU's walkers (one CTA an SM), and only that corner differs from the carve-free
    call's bits; the carved group is checked whole against float64. A bad switch value is an error."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", "128x256")
    g = torch.Generator().manual_seed(11)
    a = [torch.randn(4096, 2048, generator=g).to("cuda", torch.bfloat16) for _ in range(8)]
    b = [torch.randn(2048, 4096, generator=g).to("cuda", torch.bfloat16) for _ in range(8)]
    walkers = torch.cuda.get_device_properties(0).multi_processor_count
    corner = torch.ops.grouped._list_tail_corner([4096] * 8, [4096] * 8, [2048] * 8, [128, 256, 1], walkers)
    out = []
    modes = matmul_modes(kernels_launched(lambda: out.append(tg.gemm(a, b))))
    assert (STREAM_K in modes) == bool(corner), corner
    check(out[0][-1], reference.gemm(a[-1:], b[-1:])[0], torch.bfloat16)
    monkeypatch.setenv("TORCH_GROUPED_LIST_TAIL", "0")
    plain = tg.gemm(a, b)
    assert all(torch.equal(o, p) for o, p in zip(out[0][:-1], plain[:-1]))
    same = torch.ones_like(plain[-1], dtype=torch.bool)
    if corner:
        same[corner[0]:, corner[1]:] = False
    assert torch.equal(out[0][-1][same], plain[-1][same])
    monkeypatch.setenv("TORCH_GROUPED_LIST_TAIL", "yes")
    with pytest.raises(ValueError, match="TORCH_GROUPED_LIST_TAIL must be 0 or 1"):
        tg.gemm(a, b)


def test_moe_layer_backward_matches_pytorch():
    """dA goes through the kernel (N-major B); dB through the K-grouped kernel (offsets at 500:
    groups that start off a 16-byte boundary along K)."""
    torch.manual_seed(4)
    offs = torch.tensor([500, 500, 1200, 2000], dtype=torch.int32, device="cuda")
    a = torch.randn(2048, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(4, 512, 256, device="cuda", dtype=torch.bfloat16).mT.requires_grad_()
    grad = torch.randn(2048, 512, device="cuda", dtype=torch.bfloat16)
    tg.grouped_mm(a, b, offs).backward(grad)
    a32, b32 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    reference.grouped_mm(a32, b32, offs.cpu()).backward(grad.double())
    reference.assert_close(a.grad, a32.grad, torch.bfloat16)
    reference.assert_close(b.grad, b32.grad, torch.bfloat16)


def k_grouped_operands(ends, m, n, dtype, a_m_major, b_n_major, generator, tail=20):
    """a [m, K] and b [K, N] over K = ends[-1] + tail, as the MoE weight gradient dW = xᵀ dY gives
    them (a = xᵀ M-major, b = dY N-major) or in the other layout."""
    k_total = ends[-1] + tail
    a = (torch.randn(k_total, m, generator=generator).to("cuda", dtype).T if a_m_major
         else torch.randn(m, k_total, generator=generator).to("cuda", dtype))
    b = (torch.randn(k_total, n, generator=generator).to("cuda", dtype) if b_n_major
         else torch.randn(n, k_total, generator=generator).to("cuda", dtype).T)
    return a, b


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("a_m_major, b_n_major", [(True, True), (False, True), (True, False), (False, False)])
@pytest.mark.parametrize("ends", [[0, 96, 96, 304], [7, 100, 101, 300], [64, 64, 1000, 1000, 1170]])
def test_k_grouped(dtype, a_m_major, b_n_major, ends):
    """2-D x 2-D (the weight gradient) on the kernel: empty groups, K past the last offset,
    offsets that are not multiples of 8 (a K block that straddles two groups), both layouts of
    each operand (the kernel reads A M-major and B N-major; the others are copied)."""
    g = torch.Generator().manual_seed(len(ends) * 4 + 2 * a_m_major + b_n_major)
    offs = torch.tensor(ends, dtype=torch.int32)
    a, b = k_grouped_operands(ends, 200, 136, dtype, a_m_major, b_n_major, g)
    poison_next_allocation(len(ends) * 200 * 136)
    out = tg.grouped_mm(a, b, offs.cuda(), out_dtype=torch.float32)
    check(out, reference.grouped_mm(a, b, offs), dtype)
    poison_next_allocation(len(ends) * 200 * 136)
    out16 = tg.grouped_mm(a, b, offs.cuda())
    assert out16.dtype == dtype
    check(out16, reference.grouped_mm(a, b, offs), dtype)


@pytest.mark.parametrize("tile", ["128x128", "128x256", "128x256c2"])
@pytest.mark.parametrize("dtype", HALF)
def test_k_grouped_tiles(tile, dtype, monkeypatch):
    """Every K-grouped kernel on groups of many K blocks that start and end anywhere, output tiles
    cut by M and N on both sides (M = 300, N = 520; the clustered kernel's second pair tile has
    one CTA half inside M and one wholly past it, which still multicasts its half of B), empty
    groups between and at the ends, in the input dtype and in fp32."""
    force_tile(monkeypatch, tile)
    g = torch.Generator().manual_seed(17)
    ends = [0, 1000, 1000, 2900, 2901, 4500, 4500]
    offs = torch.tensor(ends, dtype=torch.int32)
    a, b = k_grouped_operands(ends, 300, 520, dtype, True, True, g, tail=3)
    for out_dtype in (None, torch.float32):
        poison_next_allocation(len(ends) * 300 * 520 * 2)
        out = tg.grouped_mm(a, b, offs.cuda(), out_dtype=out_dtype)
        check(out, reference.grouped_mm(a, b, offs), dtype)
        assert torch.all(out[0] == 0) and torch.all(out[2] == 0) and torch.all(out[6] == 0)


@pytest.mark.parametrize("tile", ["128x128", "128x256", "128x256c2"])
def test_k_grouped_many_tiles_per_cta(tile, monkeypatch):
    """More tiles than CTAs, groups of more K blocks than the pipeline has stages (0, 11, 1, 21,
    0, 18 of 64): 128x128 tiles (384 on an H100's 132 CTAs) give every CTA two or three,
    128x256 (192 tiles) and the clustered kernel (96 pair tiles) some CTAs two, so the pipeline's
    stages wrap within and across tiles of different depths."""
    force_tile(monkeypatch, tile)
    g = torch.Generator().manual_seed(23)
    ends = [0, 700, 701, 2000, 2000, 3100]
    offs = torch.tensor(ends, dtype=torch.int32)
    a, b = k_grouped_operands(ends, 1024, 1000, torch.bfloat16, True, True, g, tail=5)
    poison_next_allocation(len(ends) * 1024 * 1000)
    out = tg.grouped_mm(a, b, offs.cuda())
    check(out, reference.grouped_mm(a, b, offs), torch.bfloat16)
    assert torch.all(out[0] == 0) and torch.all(out[4] == 0)


def test_k_grouped_takes_its_kernel():
    """The MoE weight gradient runs our K-grouped kernel (A M-major), and nothing else but the
    device-side map build, with the tile model's choice (4 groups, K = 500 each on average):
    - M = 1024 (8 tile rows, 4 pairs), N = 256·(SMs // 32): as many 128 x 256 tiles as pair tiles'
      CTAs, one wave, and twice as many 128 x 128 tiles, two waves: 128 x 256 in 2 x 1 clusters;
    - M = 384 (3 tile rows), N = 256·(SMs // 12): one wave of plain 128 x 256 tiles, but the
      pairs' padded fourth row would add a wave: plain 128 x 256;
    - M = 256, N = 384: a short walk, one wave either way: 128 x 128."""
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    wide, padded = 256 * (sms // 32), 256 * (sms // 12)
    torch.manual_seed(6)
    x = torch.randn(2000, 1024, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(2000, padded, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([500, 500, 1200, 2000], dtype=torch.int32, device="cuda")
    for m, n, config, tile in [(1024, wide, (2, False, False), (128, 256)), (384, padded, (1, False, False), (128, 256)),
                               (256, 384, (1, False, False), (128, 128))]:
        out = []
        names = kernels_launched(lambda: out.append(tg.grouped_mm(x[:, :m].T, dy[:, :n], offs)))
        assert matmul_configs(names) == {config} and matmul_tiles(names) == {tile}, (m, n, names)
        assert len(names) == 2, names  # the maps' kernel and the matmul: no copies, no cuBLAS
        check(out[0], reference.grouped_mm(x[:, :m].T, dy[:, :n], offs.cpu()), torch.bfloat16)


@pytest.mark.parametrize(
    "tile, config", [("128x256c2", (2, False, False)), ("128x128", (1, False, False)), ("128x256", (1, False, False))]
)
@pytest.mark.parametrize("n", [520, 517])
def test_k_grouped_forced_tile_takes_its_kernel(tile, config, n, monkeypatch):
    """TORCH_GROUPED_TILE=128x256c2 takes the K-grouped kernel in 2 x 1 clusters, 128x128 the
    narrow one, 128x256 the wide one, whatever N's alignment; TORCH_GROUPED_TMA_STORE=1 changes
    nothing: the K-grouped kernels store by the threads (their TMA-store variant was removed)."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", tile)
    monkeypatch.setenv("TORCH_GROUPED_TMA_STORE", "1")
    g = torch.Generator().manual_seed(n)
    ends = [0, 300, 301, 1100]
    offs = torch.tensor(ends, dtype=torch.int32)
    a, b = k_grouped_operands(ends, 200, n, torch.bfloat16, True, True, g)
    out = []
    names = kernels_launched(lambda: out.append(tg.grouped_mm(a, b, offs.cuda())))
    check(out[0], reference.grouped_mm(a, b, offs), torch.bfloat16)
    assert matmul_configs(names) == {config}, names


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("n", [520, 517])
def test_k_grouped_long_and_empty_groups(dtype, n, monkeypatch):
    """128 x 256 tiles over weight-gradient operands whose groups have many K blocks or none
    (the empty units clear their accumulators after the K loop), M = 300 and N = n cutting tiles
    on both sides, output rows 16-byte aligned (520) or not (517): every element written, empty
    groups zero, both output dtypes."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", "128x256")
    ends = [0, 1000, 1000, 2900, 2901, 4500, 4500]
    a, b = k_grouped_operands(ends, 300, n, dtype, True, True, torch.Generator().manual_seed(n + 3), tail=3)
    offs = torch.tensor(ends, dtype=torch.int32)
    for out_dtype in (None, torch.float32):
        poison_next_allocation(len(offs) * 300 * n * 2)
        out = tg.grouped_mm(a, b, offs.cuda(), out_dtype=out_dtype)
        check(out, reference.grouped_mm(a, b, offs), dtype)
        assert torch.all(out[0] == 0) and torch.all(out[2] == 0) and torch.all(out[6] == 0)


@pytest.mark.parametrize("tile", ["64x128"])
def test_k_grouped_forced_tile_it_lacks(tile, monkeypatch):
    """A forced tile the K-grouped kernels lack (set for the forward pass, say) leaves the weight
    gradient to the tile model, so training under the knob still works; a name that is no tile
    at all is an error."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", tile)
    a = torch.randn(64, 100, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(100, 64, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([50, 100], dtype=torch.int32, device="cuda")
    check(tg.grouped_mm(a, b, offs), reference.grouped_mm(a, b, offs.cpu()), torch.bfloat16)
    monkeypatch.setenv("TORCH_GROUPED_TILE", "256x256")
    with pytest.raises(ValueError, match="TORCH_GROUPED_TILE must be one of 128x256, 128x128, 64x128, 128x256c2; got .256x256."):
        tg.grouped_mm(a, b, offs)


def test_k_grouped_all_empty_and_invalid_offsets():
    """All groups empty: zeros. Decreasing offsets or offsets past K cannot be reported without a
    synchronisation: they are clamped (an unspecified result, no access outside the tensors, no
    error left behind)."""
    a = torch.randn(96, 300, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(300, 80, device="cuda", dtype=torch.bfloat16)
    poison_next_allocation(3 * 96 * 80)
    out = tg.grouped_mm(a, b, torch.zeros(3, dtype=torch.int32, device="cuda"))
    assert torch.all(out == 0)
    bad = tg.grouped_mm(a, b, torch.tensor([200, 100, 5000], dtype=torch.int32, device="cuda"))
    torch.cuda.synchronize()
    assert bad.shape == (3, 96, 80) and not bad.isnan().any()
    # what the kernel makes of them: group g spans [clamp(offs[g-1]), clamp(offs[g]) not below that]
    a64, b64 = a.double(), b.double()
    expected = torch.stack([a64[:, :200] @ b64[:200], torch.zeros(96, 80, dtype=torch.float64, device="cuda"),
                            a64[:, 100:300] @ b64[100:300]])
    check(bad, expected, torch.bfloat16)


def _either_close(out, first, second):
    """Every element of a bf16 `out` is close to the same element of `first` or of `second` (the
    two differ by about their own size: a wrong or unwritten element matches neither)."""
    near = lambda ref: (out.double() - ref).abs() <= 1e-2 * ref.abs() + 2e-2 * ref.std()  # noqa: E731
    assert torch.all(near(first) | near(second))


@pytest.mark.parametrize("form", ["rows", "columns"])
def test_ragged_offsets_past_the_end_or_decreasing_are_clamped(form):
    """The row and column forms' offsets, like the K form's above, are clamped into [the previous
    group's end, the grouped size]: past the end they cut the last group; decreasing, group 2
    starts at its clamped predecessor, so it covers rows (columns) group 0 covered as well, and
    each of those elements holds one of the two groups' products (two tiles write it). Nothing
    else is touched; no error is left behind."""
    g = torch.Generator().manual_seed(12)
    total, k, other = 300, 64, 72
    if form == "rows":
        a = torch.randn(total, k, generator=g).to("cuda", torch.bfloat16)
        b = torch.randn(3, k, other, generator=g).to("cuda", torch.bfloat16)
        product = lambda e, lo, hi: a[lo:hi].double() @ b[e].double()  # noqa: E731
        part = lambda t, lo, hi: t[lo:hi]  # noqa: E731
    else:
        a = torch.randn(3, other, k, generator=g).to("cuda", torch.bfloat16)
        b = torch.randn(k, total, generator=g).to("cuda", torch.bfloat16)
        product = lambda e, lo, hi: a[e].double() @ b[:, lo:hi].double()  # noqa: E731
        part = lambda t, lo, hi: t[:, lo:hi]  # noqa: E731
    past = tg.grouped_mm(a, b, torch.tensor([100, 250, 5000], dtype=torch.int32, device="cuda"))
    torch.cuda.synchronize()
    for e, (lo, hi) in enumerate([(0, 100), (100, 250), (250, total)]):
        check(part(past, lo, hi), product(e, lo, hi), torch.bfloat16)
    poison_next_allocation(total * other)
    crossed = tg.grouped_mm(a, b, torch.tensor([200, 100, 300], dtype=torch.int32, device="cuda"))
    torch.cuda.synchronize()
    check(part(crossed, 0, 100), product(0, 0, 100), torch.bfloat16)
    assert not crossed.isnan().any()
    _either_close(part(crossed, 100, 200), product(0, 100, 200), product(2, 100, 200))
    check(part(crossed, 200, total), product(2, 200, total), torch.bfloat16)


@pytest.mark.parametrize("k_major", [False, True])
def test_ragged_columns_in_a_cuda_graph(k_major):
    """The 3-D x 2-D form (columns of b grouped: an MoE layer's input gradient with the experts'
    outputs side by side) captured once, replayed with new column offsets in the same tensor."""
    torch.manual_seed(5)
    g = torch.Generator().manual_seed(5)
    a = torch.randn(6, 136, 192, generator=g).to("cuda", torch.bfloat16)
    b = weights(1, 192, 1000, torch.bfloat16, k_major, g)[0]
    offs = torch.tensor([100, 300, 300, 700, 900, 1000], dtype=torch.int32, device="cuda")
    check_graph_replays(a, b, offs, [800, 877, 954])


@pytest.mark.parametrize("tile", ["", "128x256c2", "128x128"])
def test_k_grouped_in_a_cuda_graph(tile, monkeypatch):
    """The weight gradient captured once and replayed with new routing in the same offs, by the
    model's kernel, the clustered one and the narrow one."""
    monkeypatch.setenv("TORCH_GROUPED_TILE", tile)
    torch.manual_seed(7)
    x = torch.randn(1500, 192, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(1500, 264, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([100, 300, 300, 700, 900, 1000], dtype=torch.int32, device="cuda")
    check_graph_replays(x.T, dy, offs, [1300, 1397, 1494])


def test_moe_layer_backward_in_a_cuda_graph():
    """A whole MoE expert layer's forward (K-major weights, as nn.Linear stores them) and backward
    (dX through the N-major-B form, dW through the K-grouped one) captured and replayed with new
    routing: nothing reads offs on the host."""
    torch.manual_seed(8)
    x = torch.randn(1024, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(4, 320, 256, device="cuda", dtype=torch.bfloat16).mT.requires_grad_()
    grad = torch.randn(1024, 320, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([200, 500, 500, 1000], dtype=torch.int32, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up on a side stream, as CUDA graph capture asks
        tg.grouped_mm(x, w, offs).backward(grad)
    torch.cuda.current_stream().wait_stream(stream)
    x.grad = w.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tg.grouped_mm(x, w, offs).backward(grad)
    for trial in range(2):
        counts = torch.bincount(torch.randint(4, (1000 - 50 * trial,)), minlength=4)
        offs.copy_(counts.cumsum(0).to(torch.int32))
        graph.replay()
        x32, w32 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
        reference.grouped_mm(x32, w32, offs.cpu()).backward(grad.double())
        check(x.grad, x32.grad, torch.bfloat16)
        check(w.grad, w32.grad, torch.bfloat16)

