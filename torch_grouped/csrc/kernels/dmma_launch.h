// What the host hands the fp64 grouped kernel (dmma_grouped.cuh), and its launcher, without CUDA
// device code: the CUDA paths of gemm and grouped_mm include this.
//
// Hopper's FP64 tensor cores have no WGMMA form, so fp64 runs its own kernel (mma.sync DMMA, operands
// through cp.async) under the same grouped problem visitor as the WGMMA kernels (tile_walker.cuh):
// `shape` is the GroupedGemmArgs of the call (form, sizes, offsets, output, tiles, host lists), and
// the operands are read through pointers and element strides, any layout, no copies.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "grouped_gemm_args.h"

namespace torch_grouped::kernels {

// The kernel's two tiles (sched/dmma_tile_choice.h weighs them): 128 x 64 or 64 x 64. A launch
// runs the one its walk's tiles (shape.tiles, or shape.triangle for Rank2K) name.
constexpr int kDmmaWideTileM = 128, kDmmaSquareTileM = 64, kDmmaTileN = 64;

// A matmul operand as rows x K: element (row, k) at base[row·row_stride + k·k_stride] (A: rows are
// M; B: rows are N, so B(k, j) = base[j·row_stride + k·k_stride]). batch_stride: the non-list
// forms' step from one group's operand to the next (GroupProblem::a_batch / b_batch).
struct DmmaOperand {
  const double* base;
  int64_t row_stride, k_stride, batch_stride;
};

// Whether an operand can take the kernel's KFast loads (unit stride along K; dmma_grouped.cuh).
inline bool k_fast(const DmmaOperand& v) { return v.k_stride == 1; }

// Whether an operand of `rows` x `k` can be copied two doubles (16 bytes) at a time along the
// axis the kernel's loads walk with consecutive threads: K in a KFast kernel (`kfast_kernel`, whose
// operands all have unit K stride), else its rows, which must then have unit stride. Every pair
// starts at an even offset along that axis from a tile's or problem's origin, so it is 16-byte
// aligned where the base is and the steps across the other axis and between groups are even, and
// it lies wholly inside or wholly out where that axis' extent is even. An extent only the device
// reads (a grouped form's ragged axis, which offs also offsets the operand along) is -1: no pairs.
// An operand without elements is never read (whatever strides an empty tensor has).
inline bool pairs_ok(const DmmaOperand& v, bool kfast_kernel, int64_t rows, int64_t k) {
  if (rows == 0 || k == 0) return true;
  if (reinterpret_cast<uintptr_t>(v.base) % 16 != 0 || v.batch_stride % 2 != 0) return false;
  if (kfast_kernel) return v.row_stride % 2 == 0 && k >= 0 && k % 2 == 0;
  return v.row_stride == 1 && v.k_stride % 2 == 0 && rows >= 0 && rows % 2 == 0;
}

// One group of the list form: its operands (its sizes and output are shape.list's ListGroup).
struct DmmaListOperands {
  DmmaOperand a, b;
};

struct DmmaArgs {
  GroupedGemmArgs shape;                   // out_kind Double; its maps read only where `tma`
  DmmaOperand a, b;                        // the non-list forms (RaggedM, RaggedN, Batched, RaggedK)
  const DmmaListOperands* list_operands;  // List: per group, device memory
  double alpha, beta;                      // Rank2K (syr2k): out = alpha (A Bᵀ + B Aᵀ) + beta c
  // Whether every group's A (B) has unit stride along K: the kernel of that orientation, whose
  // loads walk K with consecutive threads (else the general loads, right for any strides).
  bool a_k_fast, b_k_fast;
  // Whether every operand of every group allows 16-byte copies (pairs_ok): the kernels that copy
  // two doubles at a time (else one).
  bool pairs;
  // The List form only, every A and B K-contiguous (a_k_fast and b_k_fast): each K block as TMA
  // boxes through the per-group maps shape.a_maps and shape.b_maps (the kernels that copy
  // nothing; pairs is then not read).
  bool tma;
};

// gemm and grouped_mm: shape.tiles over the groups.
void launch_dmma_grouped(const DmmaArgs& args, int grid, cudaStream_t stream);
// syr2k: the List form, shape.triangle over each group's `uplo` triangle (a and b of a group both
// [n, k]; its c_in, when set, read from that triangle), every tile stored with its mirror.
void launch_dmma_rank2k(const DmmaArgs& args, int grid, cudaStream_t stream);
// CTAs of each kernel resident at once on `device` (the persistent grid), cached per device.
int dmma_grouped_resident(int device);
int dmma_rank2k_resident(int device);

}  // namespace torch_grouped::kernels
