// Operand tiles from rows that TMA cannot address (kernels/grouped_gemm_args.h, RowSource): a row
// stride that is not a multiple of 16 bytes (K = 140, an odd N, ...) or a base off the 16-byte grid.
// Copying such an operand into a pitched buffer first costs a read and a write of all of it plus a
// kernel boundary (streamk_mm 497 x 212 x 47612: 67 MB of copies, half of the call). Instead, the
// row-copy kernels read the rows where they lie, in two steps per K block:
//
//   fetch    the producer warpgroup copies each 128-byte row piece of the tile, from the 16-byte
//            aligned address below the piece's first element to the one above its last, into a
//            raw buffer of 144-byte rows: 16-byte cp.async copies (no registers held while in
//            flight), counted on an mbarrier. Running RawSlots - 1 blocks ahead, it keeps whole
//            blocks of each SM's reads in flight.
//   realign  the producer warpgroup shifts each raw row by its misalignment (two 16-byte shared
//            loads per 16-byte piece, funnel shifts), zeroes what lies past the operand's edges,
//            and stores the pieces where TMA's 128-byte swizzle would have put them, so that the
//            consumers' WGMMAs read the stage exactly as they read a TMA-filled one.
//
// A copy only ever reads 16-byte aligned blocks that hold at least one element of its row,
// so it stays inside the allocation (allocations are 256-byte aligned, their sizes 16-byte
// multiples), whatever lies around the tensor.
#pragma once
#include <cstdint>

#include "grouped_gemm_args.h"

namespace torch_grouped::kernels::row_copy {

constexpr int kElementBytes = 2;                    // bf16 / fp16
constexpr int kRowElements = 128 / kElementBytes;   // one swizzled line of a stage
constexpr int kRawRowBytes = 144;                   // 128 bytes + up to 14 of misalignment, in 16-byte blocks

// Where the 128-byte line of a stage's row lies in the operand: `valid` elements (0: none, the row
// or its start beyond the operand's edge) from `start`, inside the aligned bytes [lo, lo + bytes).
struct RowPiece {
  uintptr_t lo;
  int32_t bytes;
  int32_t shift;  // start - lo
  int32_t valid;
};

__device__ __forceinline__ RowPiece row_piece(const RowSource& s, int64_t row, int64_t inner) {
  RowPiece r{0, 0, 0, 0};
  if (row >= s.rows || inner >= s.inner) return r;
  r.valid = int32_t(s.inner - inner < kRowElements ? s.inner - inner : kRowElements);
  const uintptr_t start = reinterpret_cast<uintptr_t>(s.base) + uintptr_t((row * s.ld + inner) * kElementBytes);
  r.lo = start & ~uintptr_t{15};
  r.bytes = int32_t(((start + uintptr_t(r.valid * kElementBytes) + 15) & ~uintptr_t{15}) - r.lo);
  r.shift = int32_t(start - r.lo);
  return r;
}

// Which rows of the operand a stage's tile holds: line ρ of the stage (128 bytes, in the order TMA
// fills it) is row `row0 + ρ` from element `inner0` (A, B K-major), or for an N-major B, whose
// boxes are 64 columns x 64 rows of K, row `row0 + ρ % 64` from element `inner0 + 64·(ρ / 64)`.
struct StageRows {
  int64_t row0, inner0;
  bool column_boxes;
  __device__ __forceinline__ void line(int rho, int64_t& row, int64_t& inner) const {
    row = column_boxes ? row0 + rho % 64 : row0 + rho;
    inner = column_boxes ? inner0 + kRowElements * (rho / 64) : inner0;
  }
};

__device__ __forceinline__ void copy16_async(uint32_t dst, uintptr_t src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

// Fetch: the `Threads` lines of one operand's stage tile into the raw buffer at shared address
// `raw` (kRawRowBytes apart), 16-byte blocks by cp.async. Thread ρ works out where line ρ lies;
// then each warp copies its 32 lines four at a time, eight lanes per line (a warp instruction reads
// four lines' 128 contiguous bytes: a few cache lines), the lanes taking the line's address from
// its owner by shuffles, and the owner copies the ninth block where the line's misalignment spills
// into it. (One bulk copy per line instead ran at ~10 µs per K block: the TMA unit takes small
// copies one by one; eight threads per line working out its address each, at ~4 µs: the
// producer's instructions were the bound. H100, session 14.)
template <int Threads>
__device__ __forceinline__ void fetch_lines(const RowSource& s, const StageRows& g, uint32_t raw, int thread) {
  int64_t row, inner;
  g.line(thread, row, inner);
  const RowPiece piece = row_piece(s, row, inner);
  const int lane = thread % 32, first = thread - lane, block = 16 * (lane % 8);
  // All shuffles first, then all copies: the copies' asm (a memory clobber) would otherwise keep
  // each shuffle's latency between two copies.
  uint64_t lo[8];
  int32_t bytes[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    lo[j] = __shfl_sync(0xffffffffu, uint64_t(piece.lo), 4 * j + lane / 8);
    bytes[j] = __shfl_sync(0xffffffffu, piece.bytes, 4 * j + lane / 8);
  }
#pragma unroll
  for (int j = 0; j < 8; ++j)
    if (block < bytes[j])
      copy16_async(raw + uint32_t((first + 4 * j + lane / 8) * kRawRowBytes + block), uintptr_t(lo[j]) + block);
  if (piece.bytes > 128) copy16_async(raw + uint32_t(thread * kRawRowBytes + 128), piece.lo + 128);
}

// Counts this thread's cp.async copies issued so far on `bar` (initialised with one arrival per
// fetching thread): its arrival happens once they have landed.
__device__ __forceinline__ void arrive_when_copied(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(uint32_t(__cvta_generic_to_shared(bar)))
               : "memory");
}

// The first `keep` (< 8; may be negative) of the eight 2-byte elements of x; the rest zero.
__device__ __forceinline__ uint4 keep_elements(uint4 x, int keep) {
  auto word = [&](uint32_t w, int i) -> uint32_t {
    return 2 * i + 1 < keep ? w : (2 * i < keep ? (w & 0xffffu) : 0u);
  };
  return make_uint4(word(x.x, 0), word(x.y, 1), word(x.z, 2), word(x.w, 3));
}

// The line's 16-byte pieces out of its raw row, shifted by `shift` bytes (even: 2-byte elements),
// piece c to piece c ^ swizzle of `line`; with Masked, elements from `valid` on are zeroed. As a
// stream of words: out[m] = funnel(W[m + q], W[m + q + 1]) by `bits` (q = shift / 4 words, bits
// the remaining 0 or 16), W[m + q] picked in two steps that consecutive pieces share
// (U[m] = W[m + 2·(q / 2)], V[m] = U[m + q % 2]): twelve instructions per piece.
template <bool Masked>
__device__ __forceinline__ void shift_line(const char* raw, char* line, int swizzle, int shift, int valid) {
  const bool two = shift & 8, one = shift & 4;
  const uint32_t bits = (uint32_t(shift) & 3) * 8;
  // The whole raw row first: the stores below may alias it as far as the compiler knows, so
  // loads left between them would each wait out the shared-memory latency.
  uint4 blocks[9];
#pragma unroll
  for (int i = 0; i < 9; ++i) blocks[i] = *reinterpret_cast<const uint4*>(raw + 16 * i);
  uint4 cur = blocks[0];
  uint32_t u0 = two ? cur.z : cur.x, u1 = two ? cur.w : cur.y;  // U[4c], U[4c + 1]
  uint32_t v0 = one ? u1 : u0;                                   // V[4c]
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    // (the raw row's bytes past the copy are stale: they only feed elements past `valid`)
    const uint4 nxt = blocks[c + 1];
    const uint32_t u2 = two ? nxt.x : cur.z, u3 = two ? nxt.y : cur.w;
    const uint32_t u4 = two ? nxt.z : nxt.x, u5 = two ? nxt.w : nxt.y;
    const uint32_t v1 = one ? u2 : u1, v2 = one ? u3 : u2, v3 = one ? u4 : u3, v4 = one ? u5 : u4;
    uint4 x = make_uint4(__funnelshift_r(v0, v1, bits), __funnelshift_r(v1, v2, bits), __funnelshift_r(v2, v3, bits),
                         __funnelshift_r(v3, v4, bits));
    if constexpr (Masked) {
      if (valid < 8 * (c + 1)) x = keep_elements(x, valid - 8 * c);
    }
    *reinterpret_cast<uint4*>(line + 16 * (c ^ swizzle)) = x;
    cur = nxt, u0 = u4, u1 = u5, v0 = v4;
  }
}

// Realign: line ρ of the stage (128 bytes at `line`, in a 1024-byte aligned stage) from its raw
// row, in TMA's 128-byte swizzle (piece c at piece c ^ (ρ % 8)). Only lines cut by the operand's
// edge pay for the masking.
__device__ __forceinline__ void realign_line(const RowPiece& piece, const char* raw, char* line, int rho) {
  const int swizzle = rho % 8;
  if (piece.valid == kRowElements) {
    shift_line<false>(raw, line, swizzle, piece.shift, piece.valid);
  } else if (piece.valid > 0) {
    shift_line<true>(raw, line, swizzle, piece.shift, piece.valid);
  } else {
#pragma unroll
    for (int c = 0; c < 8; ++c) *reinterpret_cast<uint4*>(line + 16 * (c ^ swizzle)) = make_uint4(0, 0, 0, 0);
  }
}

// Realign line ρ = thread of one operand's stage tile (128 lines, one per producer thread).
__device__ __forceinline__ void realign_lines(const RowSource& s, const StageRows& g, const char* raw, char* stage,
                                              int thread) {
  int64_t row, inner;
  g.line(thread, row, inner);
  realign_line(row_piece(s, row, inner), raw + thread * kRawRowBytes, stage + thread * 128, thread);
}

}  // namespace torch_grouped::kernels::row_copy
