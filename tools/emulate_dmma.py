"""A CPU emulation of one tile of the fp64 DMMA kernel (csrc/kernels/dmma_grouped.cuh), written from
its index formulas line by line: each thread's copies (BlockLoader: first element, steps, zero
fill, shared-memory offsets in either orientation, one double a copy or, where the host's
pairs_ok allows, two from a 16-byte aligned address, wholly inside the operand or wholly out; or,
where the host's TMA test allows, the TMA boxes' 128-byte swizzled placement and the TMA kernel's
reordered-K fragment reads, which must also spread every half-warp over 16 bank pairs), the
fragment reads of mma.m16n8k8.f64, two per
K block (CuTe's SM90_16x8x8_F64F64F64F64_TN layouts), the accumulation and the stores; for syr2k
(the Rank2K kernel) both passes with the roles swapped, alpha, beta·c from the `uplo` triangle and
the mirror stores of the triangle walk. It checks, for operands of every layout and for tiles at
and past the edges, that every shared-memory element of a block is written exactly once, that no
fragment read lands outside the block, and that the tile equals the float64 product. Then
grouped_mm's four forms as the host code describes them (cuda/dmma_cuda.cpp's operand views,
resolve_group's ranges and origins, problem_operands' offsets), each problem read through those
views from the tensors' storage, against the reference. Two tile shapes: the kernel's (128 x 64) and
a square one, which the loaders and the triangle walk allow too; each tile in the kernel of its
operands' orientation (unit K stride or not) and in the general one. A check of index math before a
GPU run (it found session 20's K-offset bug); it proves the formulas consistent, not the CUDA code
that carries them.
    python tools/emulate_dmma.py"""
import itertools
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import reference  # noqa: E402  (test/reference.py: the float64 reference of every op)

BK = 16
# Tile shapes (BM, BN, warps along M and N; set by use_shape()): the kernel's (dmma_grouped.cuh's
# DmmaTileShape, 128 x 64 since session 39), and a square one, which the loaders and the triangle
# walk allow too.
SHAPES = {"64x64": (64, 64, 2, 2), "128x64": (128, 64, 2, 2)}
BM = BN = THREADS = WARPS_M = WARPS_N = WARP_M = WARP_N = None


def use_shape(name):
    global BM, BN, THREADS, WARPS_M, WARPS_N, WARP_M, WARP_N
    BM, BN, WARPS_M, WARPS_N = SHAPES[name]
    THREADS, WARP_M, WARP_N = 32 * WARPS_M * WARPS_N, BM // WARPS_M, BN // WARPS_N


def layout(k_fast, rows):
    """OperandLayout<Rows, KFast>: (row, k) element strides of a block in shared memory."""
    return (BK + 4, 1) if k_fast else (1, rows + 4)


def block_elems(rows):
    return max(rows * (BK + 4), BK * (rows + 4))


def pairs_ok(view, kfast_kernel, rows, k):
    """dmma_launch.h's pairs_ok (view = (base, row_stride, k_stride[, batch_stride]) in elements of a
    16-byte aligned buffer): whether the kernel may copy the operand two doubles at a time."""
    base, row_stride, k_stride = view[:3]
    batch_stride = view[3] if len(view) > 3 else 0
    if rows == 0 or k == 0:
        return True
    if base % 2 or batch_stride % 2:
        return False
    if kfast_kernel:
        return row_stride % 2 == 0 and k >= 0 and k % 2 == 0
    return row_stride == 1 and k_stride % 2 == 0 and rows >= 0 and rows % 2 == 0


def load_block(mem, base, row_stride, k_stride, rows, k, row0, kb, tile_rows, k_fast, vec=1):
    """BlockLoader<Shape, Rows, KFast, Vec>'s construction and load(), for all threads: the block as
    shared memory holds it. k_fast is the kernel's orientation (DmmaArgs::a_k_fast / b_k_fast), which
    the host sets only where the operand's K stride is 1; the general loader (False) takes any
    strides. vec = 2: the copies of two (DmmaArgs::pairs), which must be 16-byte aligned (even
    offsets into `mem`) and wholly inside the operand or wholly out."""
    assert not k_fast or k_stride == 1, "a KFast kernel on an operand without unit K stride"
    at_row, at_k = layout(k_fast, tile_rows)
    smem = np.full(block_elems(tile_rows), np.nan)
    writes = np.zeros(block_elems(tile_rows), dtype=int)
    along = (BK if k_fast else tile_rows) // vec  # threads along the contiguous axis
    per_thread = tile_rows * BK // (THREADS * vec)
    row_step = k_step = THREADS // along
    for tid in range(THREADS):
        r = tid // along if k_fast else tid % along * vec
        k0 = tid % along * vec if k_fast else tid // along
        k_rem = k - k0
        rows_left = rows - row0 - r
        span = per_thread * row_step if k_fast else vec
        rows_in = 0 if rows_left <= 0 else min(rows_left, span)
        fixed = -(-rows_in // row_step) if k_fast else int(rows_in > 0)
        src = base + (row0 + r) * row_stride + k0 * k_stride if rows_left > 0 else base
        src_step = row_step * row_stride if k_fast else k_step * k_stride
        dst = r * at_row + k0 * at_k
        dst_step = row_step * at_row if k_fast else k_step * at_k
        k_left = k_rem - kb * BK
        k_in = 0 if k_left <= 0 else min(k_left, BK)
        limit = (fixed if k_in > 0 else 0) if k_fast else fixed * -(-k_in // k_step)
        s = src + kb * (BK if k_fast else (BK // k_step) * src_step)
        for u in range(per_thread):
            # the copy's elements: (row, K column) of the operand, along the contiguous axis
            cells = [(row0 + r + (0 if k_fast else e) + (u * row_step if k_fast else 0),
                      k0 + kb * BK + (e if k_fast else 0) + (0 if k_fast else u * k_step)) for e in range(vec)]
            inside = [0 <= rr < rows and kk < k for rr, kk in cells]
            d = dst + u * dst_step
            if u < limit:
                assert all(inside), "a copy reads outside the operand"
                assert vec == 1 or s % 2 == 0, "a 16-byte copy from an unaligned address"
                for e, (rr, kk) in enumerate(cells):
                    at = s + e  # the contiguous axis: unit stride
                    assert at == base + rr * row_stride + kk * k_stride, "a copy's element is not the operand's"
                    smem[d + e * (at_k if k_fast else at_row)] = mem[at]
            else:
                assert not any(inside), "a copy zero-fills elements inside the operand"
                for e in range(vec):
                    smem[d + e * (at_k if k_fast else at_row)] = 0.0
            for e in range(vec):
                writes[d + e * (at_k if k_fast else at_row)] += 1
            s += src_step
    used = [rr * at_row + cc * at_k for rr in range(tile_rows) for cc in range(BK)]
    assert all(writes[i] == 1 for i in used), "a block element written other than once"
    assert writes.sum() == len(used), "a copy outside the block"
    return smem, (at_row, at_k)


def tma_ok(view, rows, k):
    """dmma_cuda.cpp's fp64_tma_operand (view = (base, row_stride, k_stride) in elements of a
    16-byte aligned buffer): K-contiguous, a 16-byte aligned base, and (more than one row) a row
    stride of whole 16-byte steps that keeps rows apart."""
    base, row_stride, k_stride = view[:3]
    if k > 1 and k_stride != 1:
        return False
    if rows > 1 and (row_stride % 2 or row_stride < k):
        return False
    return base % 2 == 0


def load_block_tma(mem, base, row_stride, k_stride, rows, k, row0, kb, tile_rows):
    """TmaBlocks::issue's boxes as TMA places them: tile_rows rows of BK doubles (one 128-byte line
    each), 16-byte chunk c of row r at chunk c ^ (r % 8), zeros past the operand's rows and K."""
    smem = np.full(tile_rows * BK, np.nan)
    for r, c in itertools.product(range(tile_rows), range(BK)):
        rr, kk = row0 + r, kb * BK + c
        value = mem[base + rr * row_stride + kk * k_stride] if rr < rows and kk < k else 0.0
        at = r * BK + 2 * ((c // 2) ^ (r % 8)) + c % 2
        assert np.isnan(smem[at]), "two box elements in one place"
        smem[at] = value
    return smem


def tma_read(lane, half, q):
    """TmaBlocks::read's offset of the lane's double of K pair q (A: v / 2, B: v) within a row."""
    g, t = lane // 4, lane % 4
    return ((2 * ((4 * (t // 2)) ^ g)) | (t & 1)) ^ (4 * half + 2 * q)


def accumulate(a_mem, a_view, b_mem, b_view, m, n, k, tile_m, tile_n, fast, rank2k=False, vec=1):
    """The kernel's K loop over tile (tile_m, tile_n) of one problem (a_view/b_view = (base,
    row_stride, k_stride)) in the kernel of orientation fast = (AKFast, BKFast); Rank2K: two passes,
    the second with the operands' roles swapped (its kernels have AKFast == BKFast). vec: the
    copies' width (1, 2), or "tma" (TmaBlocks: both operands K-contiguous). Returns
    for_each_element's (row, col, value) of every thread."""
    row0, col0 = tile_m * BM, tile_n * BN
    warps = WARPS_M * WARPS_N
    acc = np.zeros((warps, 32, WARP_M // 16, WARP_N // 8, 4))  # warp, lane, i, j, value
    kblocks = -(-k // BK)
    for kb in range(2 * kblocks if rank2k else kblocks):
        second = rank2k and kb >= kblocks
        (am, av), (bm, bv) = ((b_mem, b_view), (a_mem, a_view)) if second else ((a_mem, a_view), (b_mem, b_view))
        kbp = kb - kblocks if second else kb  # the block within its pass
        if vec == "tma":
            assert fast == (True, True), "TMA loads of K-contiguous operands"
            a_s = load_block_tma(am, *av, m, k, row0, kbp, BM)
            b_s = load_block_tma(bm, *bv, n, k, col0, kbp, BN)
        else:
            a_s, (ar, ak) = load_block(am, *av, m, k, row0, kbp, BM, fast[1] if second else fast[0], vec)
            b_s, (br, bk) = load_block(bm, *bv, n, k, col0, kbp, BN, fast[0] if second else fast[1], vec)
        for warp in range(warps):
            warp_row, warp_col = (warp // WARPS_N) * WARP_M, (warp % WARPS_N) * WARP_N
            for half, i, j in itertools.product(range(2), range(WARP_M // 16), range(WARP_N // 8)):
                A, B = np.full((16, 8), np.nan), np.full((8, 8), np.nan)  # one DMMA.16x8x8: K columns 8·half + 0..7
                a_at, b_at = np.zeros((4, 32), dtype=int), np.zeros((2, 32), dtype=int)  # shared-memory offsets
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    kc = 8 * half + t
                    for v in range(4):  # a[v] = A(g + 8(v % 2), t + 4(v / 2))
                        row = warp_row + 16 * i + g + 8 * (v % 2)
                        a_at[v, lane] = (row * BK + tma_read(lane, half, v // 2) if vec == "tma"
                                         else row * ar + (kc + 4 * (v // 2)) * ak)
                        A[g + 8 * (v % 2), t + 4 * (v // 2)] = a_s[a_at[v, lane]]
                    for v in range(2):  # b[v] = B(t + 4v, g)
                        row = warp_col + 8 * j + g
                        b_at[v, lane] = row * BK + tma_read(lane, half, v) if vec == "tma" else row * br + (kc + 4 * v) * bk
                        B[t + 4 * v, g] = b_s[b_at[v, lane]]
                if vec == "tma":  # each half-warp's 16 reads in 16 different bank pairs (double-words mod 16)
                    for at in list(a_at) + list(b_at):
                        assert len(set(at[:16] % 16)) == 16 and len(set(at[16:] % 16)) == 16, "a bank conflict"
                assert not np.isnan(A).any() and not np.isnan(B).any(), "a fragment read outside the block, or a hole"
                D = A @ B
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for v in range(4):  # d[v] = D(g + 8(v / 2), 2t + v % 2)
                        acc[warp, lane, i, j, v] += D[g + 8 * (v // 2), 2 * t + v % 2]
    elements = []
    for warp, lane in itertools.product(range(warps), range(32)):
        g, t = lane // 4, lane % 4
        row_w, col_w = row0 + (warp // WARPS_N) * WARP_M, col0 + (warp % WARPS_N) * WARP_N
        for i, j, v in itertools.product(range(WARP_M // 16), range(WARP_N // 8), range(4)):
            elements.append((row_w + 16 * i + g + 8 * (v // 2), col_w + 8 * j + 2 * t + v % 2, acc[warp, lane, i, j, v]))
    return elements


def tile(a_mem, a_view, b_mem, b_view, m, n, k, tile_m, tile_n, fast, vec):
    """store_gemm_tile: {(row, col): value} of the elements inside the problem."""
    out = {}
    for row, col, v in accumulate(a_mem, a_view, b_mem, b_view, m, n, k, tile_m, tile_n, fast, vec=vec):
        if row < m and col < n:
            assert (row, col) not in out, "an element stored twice"
            out[row, col] = v
    return out


def rank2k_problem(a_mem, a_view, b_mem, b_view, n, k, lower, c, alpha, beta, all_tiles, fast, vec):
    """syr2k of one problem: the walk's tiles (the triangle's, or all), store_rank2k_tile each."""
    out, writes = np.zeros((n, n)), np.zeros((n, n), dtype=int)
    # the triangle walk (rank2k_visitor.h): the tiles of the macro tiles (side max(BM, BN)) in the
    # `uplo` triangle of the macro grid
    side = max(BM, BN)
    tiles = [(i, j) for i in range(-(-n // BM)) for j in range(-(-n // BN))
             if all_tiles or ((j * BN // side <= i * BM // side) if lower else (i * BM // side <= j * BN // side))]
    for tm, tn in tiles:
        for row, col, v in accumulate(a_mem, a_view, b_mem, b_view, n, n, k, tm, tn, (fast, fast), rank2k=True, vec=vec):
            if row >= n or col >= n:
                continue
            in_triangle = row >= col if lower else row <= col
            if not all_tiles and not in_triangle:
                continue
            v *= alpha
            if c is not None:
                v += beta * (c[row, col] if in_triangle else c[col, row])
            out[row, col] = v
            writes[row, col] += 1
            if not all_tiles and row != col:
                out[col, row] = v
                writes[col, row] += 1
    assert (writes == 1).all(), "an output element written other than once"
    return out


def check_rank2k(rng):
    count = 0
    kinds = KINDS
    for (n, k), ka, kb_, lower, with_c, all_tiles in itertools.product(
            [(64, 16), (130, 37), (5, 3), (70, 1), (200, 20)], kinds, kinds, (True, False), (False, True), (False, True)):
        if all_tiles and (ka != kb_ or not with_c):
            continue  # (the GEMM walk: a few cases)
        a_mem, a_view, a = operand(rng, n, k, ka)
        b_mem, b_view, b = operand(rng, n, k, kb_)
        c = rng.standard_normal((n, n)) if with_c else None
        alpha, beta = 0.7, -1.3
        sym = None
        if c is not None:  # beta's c: its `uplo` triangle, mirrored
            tri = np.tril(c) if lower else np.triu(c)
            sym = tri + tri.T - np.diag(np.diag(c))
        ref = alpha * (a @ b.T + b @ a.T) + (beta * sym if sym is not None else 0.0)
        # launch_dmma's choice (the KFast kernel where a and b both have unit K stride), and the
        # general kernel on every operand; each with the copies of one, and of two where the host
        # (launch_dmma_list) allows them
        for fast in sorted({a_view[2] == 1 and b_view[2] == 1, False}):
            tma = ("tma",) if fast and tma_ok(a_view, n, k) and tma_ok(b_view, n, k) else ()
            for vec in copy_widths(((a_view, n, fast), (b_view, n, fast)), k) + tma:
                out = rank2k_problem(a_mem, a_view, b_mem, b_view, n, k, lower, c, alpha, beta, all_tiles, fast, vec)
                assert np.abs(out - ref).max() < 1e-12 * max(1.0, np.abs(ref).max()), (n, k, ka, kb_, lower, with_c, all_tiles)
                if not all_tiles:
                    assert (out == out.T).all(), "not exactly symmetric"
                count += 1
    return count


# Operand layouts (operand()): unit K stride one element into the buffer, the transposed layout,
# strided both ways, and the first two again 16-byte aligned with rows padded to an even length.
KINDS = ("k_contiguous", "rows_contiguous", "strided", "k_even", "rows_even")


def copy_widths(operands, k):
    """The copy widths to run a problem with: one, and two where dmma_cuda.cpp allows them
    (pairs_ok on every (view, rows, kfast_kernel) of `operands`)."""
    return (1, 2) if all(pairs_ok(v, fast, rows, k) for v, rows, fast in operands) else (1,)


def operand(rng, rows, k, kind):
    """A rows x K operand in flat memory (element 0 16-byte aligned): (memory, (base, row_stride,
    k_stride)), and its matrix."""
    x = rng.standard_normal((rows, k))
    if kind == "k_contiguous":  # rows of k, one element of offset
        mem = np.concatenate([[7.0], x.reshape(-1)])
        return mem, (1, k, 1), x
    if kind == "rows_contiguous":  # the transposed layout
        return x.T.reshape(-1).copy(), (0, 1, rows), x
    if kind in ("k_even", "rows_even"):  # either, with rows of even pitch
        inner, outer = (k, rows) if kind == "k_even" else (rows, k)
        pitch = inner + inner % 2
        mem = np.full(outer * pitch, 5.0)
        for o in range(outer):
            mem[o * pitch: o * pitch + inner] = x[o] if kind == "k_even" else x[:, o]
        return mem, ((0, pitch, 1) if kind == "k_even" else (0, 1, pitch)), x
    pitch = k + 3  # strided rows and columns: every other element of a wider buffer along K
    mem = np.zeros(rows * 2 * pitch + 2)
    for r in range(rows):
        mem[2 + r * 2 * pitch: 2 + r * 2 * pitch + 2 * k: 2] = x[r]
    return mem, (2, 2 * pitch, 2), x


def view(t, rows_dim, k_dim, batch_dim=None):
    """dmma_cuda.cpp's operand(): (base, row_stride, k_stride, batch_stride) in elements of t's storage."""
    return [t.storage_offset(), t.stride(rows_dim), t.stride(k_dim), 0 if batch_dim is None else t.stride(batch_dim)]


PAIRED = {True: 0, False: 0}  # grouped_form's problems by copy width (pairs or not)


def grouped_form(a, b, offs):
    """grouped_mm_f64_cuda's args, resolve_group and problem_operands, each problem read through
    the views: the output the kernel would write."""
    ends = [] if offs is None else offs.tolist()
    if a.dim() == 2 and b.dim() == 3:
        form, m, n, k, groups = "RaggedM", a.shape[0], b.shape[2], a.shape[1], b.shape[0]
        av, bv = view(a, 0, 1), view(b, 2, 1, 0)
        out = torch.full((m, n), float("nan"), dtype=torch.float64)
    elif a.dim() == 3 and b.dim() == 2:
        form, m, n, k, groups = "RaggedN", a.shape[1], b.shape[1], a.shape[2], a.shape[0]
        av, bv = view(a, 1, 2, 0), view(b, 1, 0)
        out = torch.full((m, n), float("nan"), dtype=torch.float64)
    elif a.dim() == 3:
        form, m, n, k, groups = "Batched", a.shape[1], b.shape[2], a.shape[2], a.shape[0]
        av, bv = view(a, 1, 2, 0), view(b, 2, 1, 0)
        out = torch.full((groups, m, n), float("nan"), dtype=torch.float64)
    else:
        form, m, n, k, groups = "RaggedK", a.shape[0], b.shape[1], a.shape[1], len(ends)
        av, bv = view(a, 0, 1), view(b, 1, 0)
        out = torch.full((groups, m, n), float("nan"), dtype=torch.float64)
    ragged = form in ("RaggedM", "RaggedN")
    # dmma_cuda.cpp's copy width: pairs where neither operand pairs along an axis offs sizes
    a_fast, b_fast = av[2] == 1, bv[2] == 1
    k_known = -1 if form == "RaggedK" else k
    pairs = (pairs_ok(av, a_fast, -1 if form == "RaggedM" else m, k_known)
             and pairs_ok(bv, b_fast, -1 if form == "RaggedN" else n, k_known))
    for g in range(groups + (1 if ragged else 0)):  # visited_groups: the ragged forms' virtual tail
        if form != "Batched":  # ragged_range
            total = {"RaggedM": m, "RaggedN": n, "RaggedK": k}[form]
            start = 0 if g == 0 else min(max(ends[g - 1], 0), total)
            end = total if g == groups else min(max(ends[g], start), total)
        qm, qn, qk, a_row, a_batch, b_col, b_batch, k_origin = m, n, k, 0, 0, 0, 0, 0
        if form == "Batched":
            a_batch = b_batch = g
        elif form == "RaggedK":
            qk, k_origin = end - start, start
        elif form == "RaggedM":
            qk = 0 if g == groups else k
            qm, a_row, b_batch = end - start, start, (0 if g == groups else g)
        else:
            qk = 0 if g == groups else k
            qn, b_col, a_batch = end - start, start, (0 if g == groups else g)
        a0 = av[0] + a_batch * av[3] + a_row * av[1] + k_origin * av[2]
        b0 = bv[0] + b_batch * bv[3] + b_col * bv[1] + k_origin * bv[2]
        if pairs:  # (load_block checks the copies from an aligned origin with even extents)
            assert a0 % 2 == 0 and b0 % 2 == 0, "a problem's origin off the 16-byte grid with pairs"
            assert (qk if a_fast else qm) % 2 == 0 and (qk if b_fast else qn) % 2 == 0, "an odd extent with pairs"
        A = torch.as_strided(a, (qm, qk), (av[1], av[2]), a0) if qm * qk else torch.zeros(qm, qk, dtype=torch.float64)
        B = torch.as_strided(b, (qn, qk), (bv[1], bv[2]), b0) if qn * qk else torch.zeros(qn, qk, dtype=torch.float64)
        tile = A @ B.T
        PAIRED[pairs] += 1
        if form == "RaggedM":
            out[start:end] = tile
        elif form == "RaggedN":
            out[:, start:end] = tile
        else:
            out[g] = tile
    return out


def check_forms(rng):
    def t(*shape, layout="rows"):
        x = torch.from_numpy(rng.standard_normal(shape))
        if layout == "cols":
            return x.mT.contiguous().mT
        if layout == "offset":
            return torch.from_numpy(rng.standard_normal(shape[:-1] + (shape[-1] + 3,)))[..., 1:-2]
        return x
    offs = lambda ends: torch.tensor(ends, dtype=torch.int32)  # noqa: E731
    problems = []
    for la, lb in itertools.product(("rows", "cols", "offset"), repeat=2):
        problems += [(t(300, 40, layout=la), t(5, 40, 72, layout=lb), offs([64, 64, 130, 250, 290])),
                     (t(3, 70, 24, layout=la), t(24, 150, layout=lb), offs([10, 10, 129])),
                     (t(4, 65, 31, layout=la), t(4, 31, 66, layout=lb), None),
                     (t(90, 300, layout=la), t(300, 70, layout=lb), offs([0, 100, 100, 250, 300]))]
    for a, b, o in problems:
        out = grouped_form(a, b, o)
        assert not out.isnan().any(), "an output element no problem writes"
        ref = reference.grouped_mm(a, b, o)
        assert torch.allclose(out, ref, rtol=1e-12, atol=1e-12), (a.shape, b.shape)
    return len(problems)


def main():
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        use_shape(shape)
        check_tiles(rng, shape)
        print(f"{shape}: {check_rank2k(rng)} syr2k runs (Rank2K: both passes, alpha, beta·c from either triangle, "
              "the triangle walk with mirrors and the GEMM walk): every element written once, exactly symmetric, "
              "equal to float64's")
    print(f"{check_forms(rng)} grouped_mm problems (four forms x 9 layout pairs) read through the host's views: "
          "every output element written and equal to the reference; with copies of two (aligned origins, even "
          f"extents) {PAIRED[True]} groups, without {PAIRED[False]}")


def check_tiles(rng, shape):
    kinds = KINDS
    cases = 0
    for (m, n, k), ka, kb_ in itertools.product([(64, 64, 16), (70, 130, 37), (5, 3, 1), (128, 64, 33), (200, 70, 50)],
                                                kinds, kinds):
        a_mem, a_view, a = operand(rng, m, k, ka)
        b_mem, b_view, bt = operand(rng, n, k, kb_)  # B as rows N x K: B(k, j) = bt[j, k]
        ref = a @ bt.T
        # the kernel of the operands' orientation, and the general one (a list of mixed layouts),
        # each with the copy widths the host allows
        runs = [(fast, vec) for fast in sorted({(a_view[2] == 1, b_view[2] == 1), (False, False)})
                for vec in copy_widths(((a_view, m, fast[0]), (b_view, n, fast[1])), k)]
        if tma_ok(a_view, m, k) and tma_ok(b_view, n, k):  # (the host's TMA test: the loads of TmaBlocks)
            runs.append(((True, True), "tma"))
        for (fast, vec), tm, tn in itertools.product(runs, range(-(-m // BM)), range(-(-n // BN))):
            out = tile(a_mem, a_view, b_mem, b_view, m, n, k, tm, tn, fast, vec)
            expect = {(r, c) for r in range(tm * BM, min(m, tm * BM + BM)) for c in range(tn * BN, min(n, tn * BN + BN))}
            assert set(out) == expect, "the tile's stores do not cover its elements"
            err = max(abs(v - ref[rc]) for rc, v in out.items())
            assert err < 1e-12 * max(1.0, abs(ref).max()), (m, n, k, ka, kb_, tm, tn, err)
            cases += 1
    print(f"{shape}: {cases} tiles over 5 shapes x 25 layout pairs, in the kernel of their orientation and the general "
          "one, with copies of one and (where the host allows) two, and TMA loads where it allows those: every block "
          "element written once, every fragment inside its block and (TMA) free of bank conflicts, every output element "
          "stored once and equal to float64's")


if __name__ == "__main__":
    main()
