// Operand tiles from rows that TMA cannot address (kernels/grouped_gemm_args.h, RowSource): a row
// stride that is not a multiple of 16 bytes (K = 140, an even N such as 830, ...) or a base off the
// 16-byte grid. Copying such an operand into a pitched buffer first costs a read and a write of all
// of it plus a kernel boundary (streamk_mm 497 x 212 x 47612: 67 MB of copies, half of the call).
// Where every row starts on a `width`-byte boundary (4, 8 or 16: an even K, N), the producer
// warpgroup instead copies the tile's rows straight into the stage with cp.async pieces of `width`
// bytes, each to where TMA's 128-byte swizzle puts it, and cp.async's zero fill (src-size) writes
// the zeros past the operand's edges; the stage's full barrier counts one arrival per producer
// thread, made when that thread's copies have landed. (Rows of odd 2-byte elements, 2-byte
// aligned, are still copied first: a version that fetched such rows into a raw buffer and
// realigned them with funnel shifts was bound by the producer's instructions, 0.4-1.1x the copies'
// speed; H100, session 14, benchmarks/NOTES.md.)
//
// A piece is only read where it holds elements of its row, and then only those bytes (src-size),
// so nothing outside the tensor is read.
#pragma once
#include <cstdint>

#include "grouped_gemm_args.h"

namespace torch_grouped::kernels::row_copy {

constexpr int kElementBytes = 2;                   // bf16 / fp16
constexpr int kLineBytes = 128;                    // one swizzled line of a stage
constexpr int kLineElements = kLineBytes / kElementBytes;

// Which rows of the operand a stage's tile holds: line ρ of the stage (128 bytes, in the order TMA
// fills it) is row `row0 + ρ` from element `inner0` (A, B K-major), or with ColumnBoxes (an N-major
// B, whose boxes are 64 columns x 64 rows of K) row `row0 + ρ % 64` from element
// `inner0 + 64·(ρ / 64)`.
struct StageRows {
  int64_t row0, inner0;
};

// One cp.async of Width bytes into shared address `dst`, of which the first `bytes` (0..Width)
// come from `src` and the rest are zeros.
template <int Width>
__device__ __forceinline__ void copy_async(uint32_t dst, uintptr_t src, uint32_t bytes) {
  if constexpr (Width == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src), "n"(Width), "r"(bytes)
                 : "memory");
  }
}

// One cp.async of Width bytes, all of them from `src` (no zero fill: no src-size operand, which
// the hardware takes from the source address's low bits, so the zero-fill form costs a
// subtraction, a mask and an add per copy besides the selects of a safe address).
template <int Width>
__device__ __forceinline__ void copy_async_whole(uint32_t dst, uintptr_t src) {
  if constexpr (Width == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(dst), "l"(src), "n"(Width) : "memory");
  }
}

// The `Lines` lines of one operand's stage tile (the tile's 256, 128 or 64 rows, or columns of an
// N-major B), at shared address `stage` (1024-byte aligned), from the 128 producer threads: a
// line takes 128 / Width lanes, piece e of line ρ going where TMA's
// 128-byte swizzle puts it (byte e·Width ^ 16·(ρ % 8) of the line). A thread's lines are a pass
// (kStep lines, a multiple of 4) apart, so its source address steps by a constant and only the
// first of each box is computed; its lines' swizzle rows ρ % 8 are the first's, or (4-byte pieces,
// 4 lines a pass) the first's ^ 4 on odd passes, since adding 4 modulo 8 flips bit 2.
//
// A box wholly inside the operand (all its rows, and its 64 elements of each: every box but those
// at the M or N edge and the K tail) takes a loop without zero fill or row bounds, about three
// instructions per copy; the others the general loop, ~13 (the producer's instructions bound the
// kernel when its tiles are many: H100, session 14).
template <int Width, bool ColumnBoxes, int Lines>
__device__ __forceinline__ void copy_lines(const RowSource& s, const StageRows& g, uint32_t stage, int thread) {
  constexpr int kLanesPerLine = kLineBytes / Width, kStep = 128 / kLanesPerLine;  // lines per pass
  constexpr int kBoxLines = ColumnBoxes ? 64 : Lines;
  static_assert(kStep % 4 == 0, "a thread's swizzle rows are its first's, or that ^ 4");
  static_assert((Lines == 256 || Lines == 128 || Lines == 64) && Lines % kBoxLines == 0, "whole boxes of the tile's lines");
  const int offset = (thread % kLanesPerLine) * Width, first = thread / kLanesPerLine;
  const auto swizzled = [&](int j) { return uint32_t(offset ^ (((first ^ (j * kStep)) & 7) << 4)); };
  const int64_t ld_bytes = s.ld * kElementBytes;
  const int64_t rows_left = s.rows - g.row0;
  const int rows = int(rows_left <= 0 ? 0 : (rows_left >= kBoxLines ? kBoxLines : rows_left));
#pragma unroll
  for (int box = 0; box < Lines / kBoxLines; ++box) {
    const int64_t inner = g.inner0 + box * kLineElements;
    uintptr_t src = reinterpret_cast<uintptr_t>(s.base) + uintptr_t((g.row0 + first) * ld_bytes + inner * kElementBytes + offset);
    const uint32_t line0 = stage + uint32_t((box * kBoxLines + first) * kLineBytes);
    const auto dst = [&](int j) { return line0 + uint32_t(j * kStep * kLineBytes) + swizzled(j); };
    if (rows == kBoxLines && s.inner - inner >= kLineElements) {
#pragma unroll
      for (int j = 0; j < kBoxLines / kStep; ++j, src += uintptr_t(kStep * ld_bytes))
        copy_async_whole<Width>(dst(j), src);
      continue;
    }
    const int64_t left = (s.inner - inner) * kElementBytes - offset;  // bytes of this piece's column left in a row
    const uint32_t piece = uint32_t(left <= 0 ? 0 : (left >= Width ? Width : left));
#pragma unroll
    for (int j = 0; j < kBoxLines / kStep; ++j, src += uintptr_t(kStep * ld_bytes)) {
      const uint32_t bytes = first + j * kStep < rows ? piece : 0u;
      copy_async<Width>(dst(j), bytes > 0 ? src : reinterpret_cast<uintptr_t>(s.base), bytes);
    }
  }
}

template <bool ColumnBoxes, int Lines>
__device__ __forceinline__ void copy_lines(const RowSource& s, const StageRows& g, uint32_t stage, int thread) {
  switch (s.width) {
    case 16: copy_lines<16, ColumnBoxes, Lines>(s, g, stage, thread); break;
    case 8: copy_lines<8, ColumnBoxes, Lines>(s, g, stage, thread); break;
    default: copy_lines<4, ColumnBoxes, Lines>(s, g, stage, thread); break;
  }
}

// Counts this thread's cp.async copies issued so far on `bar` (its arrival, one of those the
// barrier expects, happens once they have landed).
__device__ __forceinline__ void arrive_when_copied(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(uint32_t(__cvta_generic_to_shared(bar)))
               : "memory");
}

}  // namespace torch_grouped::kernels::row_copy
