// fp32 operands for the TF32 Rank2K kernel, as TMA addresses them. TF32 WGMMA reads the top 19
// bits of each fp32 element (sign, exponent, 10 mantissa bits). syr2k's two modes:
//   Split (torch's matmuls in full fp32: torch.backends.cuda.matmul.allow_tf32 off) — 3xTF32:
//     x = hi + lo with hi = tf32(x), lo = tf32(x - hi), and a·bᵀ ≈ a_hi·b_hiᵀ + a_hi·b_loᵀ +
//     a_lo·b_hiᵀ (the lo·lo term is below fp32's rounding). One K loop of three times the length
//     computes it: a as [a_hi | a_hi | a_lo] and b as [b_hi | b_lo | b_hi] along K, so that
//     a'·b'ᵀ is the sum above and b'·a'ᵀ its transpose (the Rank2K kernel's second pass).
//   AsIs (allow_tf32 on): the operand itself, copied only where TMA cannot address it.
// Every copy of one call shares one allocation and one launch, as StagedOperands does for the
// half-precision kernels.
#pragma once
#include <ATen/ATen.h>
#include <cuda_runtime.h>

#include <optional>
#include <vector>

#include "tma_map.h"

namespace torch_grouped {

// One [rows, k] fp32 operand rewritten as [rows, parts·k] in rows of `pitch` elements (a multiple
// of 4: 16-byte aligned rows), zeros past parts·k. Part s of a row is column c - s·k of the
// source row, its hi half when bit s of lo_parts is clear, its lo half when set; with parts = 1
// and exact the source's bits unchanged.
struct Tf32Job {
  const float* src;
  float* dst;
  int64_t rows, k, src_row_stride, src_col_stride, pitch;
  int32_t parts;
  uint32_t lo_parts;
  bool exact;
  int64_t first_block = 0;  // filled by the launch
};

enum class Tf32Mode { AsIs, Split };

// Whether syr2k's fp32 operands take the 3xTF32 split: torch's matmul precision for fp32 on CUDA
// is full fp32 (allow_tf32 off, the default).
Tf32Mode syr2k_tf32_mode();

class Tf32Operands {
 public:
  explicit Tf32Operands(Tf32Mode mode) : mode_(mode) {}
  // Adds a ([rows, k], fp32) in its role: `a_role` gives [hi | hi | lo] when split, else
  // [hi | lo | hi]. Returns the operand's index.
  int add(const at::Tensor& t, bool a_role);
  // The length of K the kernel runs for an operand of k columns.
  int64_t kernel_k(int64_t k) const { return mode_ == Tf32Mode::Split ? 3 * k : k; }
  // Makes the copies on `stream`; the buffer goes to `keep` (alive until the kernel is queued).
  void copy(const at::Device& device, cudaStream_t stream, std::vector<at::Tensor>& keep);
  // Operand i as TMA addresses it (after copy()); nothing beyond TMA's extents.
  const std::optional<TmaOperand>& operator[](int i) const { return operands_[i]; }

 private:
  Tf32Mode mode_;
  std::vector<std::optional<TmaOperand>> operands_;
  std::vector<Tf32Job> jobs_;
  std::vector<int> job_operand_;
  int64_t bytes_ = 0;
};

}  // namespace torch_grouped
