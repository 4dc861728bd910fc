"""A CPU emulation of one tile of the fp64 DMMA kernel (csrc/kernels/dmma_grouped.cuh), written from
its index formulas line by line: each thread's copies (BlockLoader: first element, steps, zero fill,
shared-memory offsets in either orientation), the fragment reads of mma.m16n8k16.f64 (CuTe's
SM90_16x8x16_F64F64F64F64_TN layouts), the accumulation and the stores. It checks, for operands of
every layout and for tiles at and past the edges, that every shared-memory element of a block is
written exactly once, that no fragment read lands outside the block, and that the tile equals the
float64 product. It stands in for the GPU until the kernel's own tests run (benchmarks/NOTES.md,
session 20); it proves the formulas consistent, not the CUDA code that carries them.
    python tools/emulate_dmma.py"""
import itertools

import numpy as np

BM = BN = 64
BK = 16
THREADS = 128
WARP_M = WARP_N = 32


def layout(k_stride, rows):
    """operand_layout: (row, k) element strides of a block in shared memory."""
    return (BK + 4, 1) if k_stride == 1 else (1, rows + 4)


def block_elems(rows):
    return max(rows * (BK + 4), BK * (rows + 4))


def load_block(mem, base, row_stride, k_stride, rows, k, row0, kb, tile_rows):
    """BlockLoader's construction and load(), for all threads: the block as shared memory holds it."""
    at_row, at_k = layout(k_stride, tile_rows)
    smem = np.full(block_elems(tile_rows), np.nan)
    writes = np.zeros(block_elems(tile_rows), dtype=int)
    k_fastest = at_k == 1
    per_thread = tile_rows * BK // THREADS
    for tid in range(THREADS):
        r = tid // BK if k_fastest else tid % tile_rows
        k0 = tid % BK if k_fastest else tid // tile_rows
        row_step, k_step = (THREADS // BK, 0) if k_fastest else (0, THREADS // tile_rows)
        rows_left = rows - row0 - r
        src = base + (row0 + r) * row_stride + k0 * k_stride if rows_left > 0 else base
        src_step = row_step * row_stride + k_step * k_stride
        dst, dst_step = r * at_row + k0 * at_k, row_step * at_row + k_step * at_k
        block_k = kb * BK
        k_left = k - block_k - k0
        s = src + block_k * k_stride
        for u in range(per_thread):
            inside = u * row_step < rows_left and u * k_step < k_left
            smem[dst + u * dst_step] = mem[s + u * src_step] if inside else 0.0
            writes[dst + u * dst_step] += 1
    used = [rr * at_row + cc * at_k for rr in range(tile_rows) for cc in range(BK)]
    assert all(writes[i] == 1 for i in used), "a block element written other than once"
    assert writes.sum() == len(used), "a copy outside the block"
    return smem, (at_row, at_k)


def tile(a_mem, a_view, b_mem, b_view, m, n, k, tile_m, tile_n):
    """The kernel's tile (tile_m, tile_n) of one problem: a_view/b_view = (base, row_stride, k_stride)."""
    row0, col0 = tile_m * BM, tile_n * BN
    acc = np.zeros((4, 32, WARP_M // 16, WARP_N // 8, 4))  # warp, lane, i, j, value
    for kb in range(-(-k // BK)):
        a_s, (ar, ak) = load_block(a_mem, *a_view, m, k, row0, kb, BM)
        b_s, (br, bk) = load_block(b_mem, *b_view, n, k, col0, kb, BN)
        for warp in range(4):
            warp_row, warp_col = (warp // 2) * WARP_M, (warp % 2) * WARP_N
            for i, j in itertools.product(range(WARP_M // 16), range(WARP_N // 8)):
                A, B = np.zeros((16, 16)), np.zeros((16, 8))
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for v in range(8):  # a[v] = A(g + 8(v % 2), t + 4(v / 2))
                        A[g + 8 * (v % 2), t + 4 * (v // 2)] = a_s[(warp_row + 16 * i + g + 8 * (v % 2)) * ar + (t + 4 * (v // 2)) * ak]
                    for v in range(4):  # b[v] = B(t + 4v, g)
                        B[t + 4 * v, g] = b_s[(warp_col + 8 * j + g) * br + (t + 4 * v) * bk]
                assert not np.isnan(A).any() and not np.isnan(B).any(), "a fragment read outside the block"
                D = A @ B
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for v in range(4):  # d[v] = D(g + 8(v / 2), 2t + v % 2)
                        acc[warp, lane, i, j, v] += D[g + 8 * (v // 2), 2 * t + v % 2]
    out = {}
    for warp, lane in itertools.product(range(4), range(32)):
        g, t = lane // 4, lane % 4
        warp_row, warp_col = (warp // 2) * WARP_M, (warp % 2) * WARP_N
        for i, half, j in itertools.product(range(WARP_M // 16), range(2), range(WARP_N // 8)):
            row = row0 + warp_row + 16 * i + g + 8 * half
            col = col0 + warp_col + 8 * j + 2 * t
            for dc in range(2):
                if row < m and col + dc < n:
                    assert (row, col + dc) not in out, "an element stored twice"
                    out[row, col + dc] = acc[warp, lane, i, j, 2 * half + dc]
    return out


def operand(rng, rows, k, kind):
    """A rows x K operand in flat memory: (memory, (base, row_stride, k_stride)), and its matrix."""
    x = rng.standard_normal((rows, k))
    if kind == "k_contiguous":  # rows of k, one element of offset
        mem = np.concatenate([[7.0], x.reshape(-1)])
        return mem, (1, k, 1), x
    if kind == "rows_contiguous":  # the transposed layout
        return x.T.reshape(-1).copy(), (0, 1, rows), x
    pitch = k + 3  # strided rows and columns: every other element of a wider buffer along K
    mem = np.zeros(rows * 2 * pitch + 2)
    for r in range(rows):
        mem[2 + r * 2 * pitch: 2 + r * 2 * pitch + 2 * k: 2] = x[r]
    return mem, (2, 2 * pitch, 2), x


def main():
    rng = np.random.default_rng(0)
    kinds = ("k_contiguous", "rows_contiguous", "strided")
    cases = 0
    for (m, n, k), ka, kb_ in itertools.product([(64, 64, 16), (70, 130, 37), (5, 3, 1), (128, 64, 33)], kinds, kinds):
        a_mem, a_view, a = operand(rng, m, k, ka)
        b_mem, b_view, bt = operand(rng, n, k, kb_)  # B as rows N x K: B(k, j) = bt[j, k]
        ref = a @ bt.T
        for tm, tn in itertools.product(range(-(-m // BM)), range(-(-n // BN))):
            out = tile(a_mem, a_view, b_mem, b_view, m, n, k, tm, tn)
            expect = {(r, c) for r in range(tm * BM, min(m, tm * BM + BM)) for c in range(tn * BN, min(n, tn * BN + BN))}
            assert set(out) == expect, "the tile's stores do not cover its elements"
            err = max(abs(v - ref[rc]) for rc, v in out.items())
            assert err < 1e-12 * max(1.0, abs(ref).max()), (m, n, k, ka, kb_, tm, tn, err)
            cases += 1
    print(f"{cases} tiles over 4 shapes x 9 layout pairs: every block element written once, every fragment "
          "inside its block, every output element stored once and equal to float64's")


if __name__ == "__main__":
    main()
