// The matmul kernels' operands as TMA addresses them. An operand TMA cannot address (a row
// stride that is not a multiple of 16 bytes, such as K = 140 or an odd N; a layout without a unit
// stride where the kernel reads one) is copied into a pitched layout whose rows start at 16-byte
// boundaries. All copies of one call share one allocation and one launch (cuda/pitched_copy.cu):
// through at::copy_, each copy cost an allocation, a TensorIterator, a view and a launch on the
// host, 50 µs of an 87 µs streamk_mm of 708 x 830 x 140 (H100 machine, session 5, run 1).
#pragma once
#include <ATen/ATen.h>
#include <cuda_runtime.h>

#include <optional>
#include <vector>

#include "../kernels/grouped_gemm_args.h"
#include "pitched_copy.h"
#include "tma_map.h"

namespace torch_grouped {

class StagedOperands {
 public:
  // Adds `t` ([rows, cols] or [batch, rows, cols]) as a [batch, outer, inner] operand: rows x
  // cols, or cols x rows when `transposed`. Reads sizes and strides without making views (the
  // list API adds hundreds of groups). Returns the operand's index.
  int add(const at::Tensor& t, bool transposed = false);

  // Whether add() would take `t` as it lies (no copy).
  static bool addressable(const at::Tensor& t, bool transposed = false);

  // `t` ([rows, cols], one matrix) as the row-copy kernels read it in place (kernels/row_copy.cuh):
  // rows x cols, or cols x rows when `transposed`; nothing unless the rows are contiguous and
  // start on 4-byte boundaries.
  static std::optional<kernels::RowSource> row_source(const at::Tensor& t, bool transposed = false);

  // Makes the copies on `stream`; the buffer goes to `keep`, which must live until the kernel
  // that reads it has been queued (the allocator reuses memory in stream order only).
  void copy(const at::Device& device, cudaStream_t stream, std::vector<at::Tensor>& keep);

  // Operand i as TMA addresses it (after copy()); nothing for an operand beyond TMA's extents
  // (2^31 rows or columns, 2^40 bytes per batch).
  const std::optional<TmaOperand>& operator[](int i) const { return operands_[i]; }

 private:
  std::vector<std::optional<TmaOperand>> operands_;
  std::vector<PitchedCopyJob> jobs_;
  std::vector<int> job_operand_;  // the operand each job fills
  at::ScalarType dtype_ = at::kHalf;
  int64_t bytes_ = 0;
};

}  // namespace torch_grouped
