// fp32 operands for the TF32 kernels (Rank2K, grouped, Stream-K), as TMA addresses them. TF32
// WGMMA reads the top 19 bits of each fp32 element (sign, exponent, 10 mantissa bits). The two
// modes:
//   Split (torch's matmuls in full fp32: torch.backends.cuda.matmul.allow_tf32 off) — 3xTF32:
//     x = hi + lo with hi = tf32(x), lo = tf32(x - hi), and a·bᵀ ≈ a_hi·b_hiᵀ + a_hi·b_loᵀ +
//     a_lo·b_hiᵀ (the lo·lo term is below fp32's rounding). One K loop of three times the length
//     computes it: each operand row staged as [hi | lo] (lo from the K block after hi's last),
//     the kernel's producer reading a's parts as hi, hi, lo and b's as hi, lo, hi
//     (kernels::split_k_coords, args.tf32_split), so that a pass sums the products above
//     (syr2k's second pass their transpose; gemm and streamk_mm have one pass, B staged as Bᵀ's
//     rows).
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

// One [rows, k] fp32 operand rewritten in rows of `pitch` elements (a multiple of 4: 16-byte
// aligned rows): split (lo_at > 0), each row's hi parts at columns [0, k), zeros up to lo_at (a
// multiple of the kernel's K block), its lo parts at [lo_at, lo_at + k), zeros up to the pitch
// (2·lo_at); else the source's bits unchanged at [0, k), zeros up to the pitch.
struct Tf32Job {
  const float* src;
  float* dst;
  int64_t rows, k, src_row_stride, src_col_stride, pitch, lo_at;
  int64_t first_block = 0;  // filled by the launch
};

enum class Tf32Mode { AsIs, Split };

// Whether fp32 operands take the 3xTF32 split (syr2k, gemm, streamk_mm): torch's matmul precision
// for fp32 on CUDA is full fp32 (allow_tf32 off, the default).
Tf32Mode tf32_mode();

// Where fp32 gemm, streamk_mm and grouped_mm run, by TORCH_GROUPED_FP32_KERNELS: unset, the TF32
// kernels where they were measured faster than cuBLAS (the rules below; grouped_mm always, its
// other path synchronising on offs); 0, cuBLAS always; 1, the TF32 kernels always (any other value
// is an error). Read on every call, so that tests and benchmarks can switch. (syr2k's fp32 always
// takes its TF32 kernel.)
bool fp32_streamk_on_kernel(int64_t m, int64_t n);
bool fp32_gemm_on_kernel(int64_t groups, double flops);
bool fp32_grouped_mm_on_kernel();

class Tf32Operands {
 public:
  explicit Tf32Operands(Tf32Mode mode) : mode_(mode) {}
  // Adds t ([rows, k] or [batches, rows, k], fp32). Returns the operand's index.
  int add(const at::Tensor& t);
  bool split() const { return mode_ == Tf32Mode::Split; }
  // The length of K the kernel runs for an operand of k columns: 3 parts of hi's padded length
  // when split.
  int64_t kernel_k(int64_t k) const { return split() ? passes() * lo_at(k) : k; }
  // The passes over the operands that K loop makes (hi·hi, hi·lo, lo·hi when split).
  int passes() const { return split() ? 3 : 1; }
  // Where a split row's lo parts start: hi's length rounded up to whole K blocks of 32.
  static int64_t lo_at(int64_t k) { return (k + 31) / 32 * 32; }
  // Makes the copies on `stream`; the buffer goes to `keep` (alive until the kernel is queued).
  void copy(const at::Device& device, cudaStream_t stream, std::vector<at::Tensor>& keep);
  // Operand i as TMA addresses it (after copy()); nothing beyond TMA's extents.
  const std::optional<TmaOperand>& operator[](int i) const { return operands_[i]; }

 private:
  Tf32Mode mode_;
  std::vector<std::optional<TmaOperand>> operands_;
  std::vector<int64_t> batches_;  // per operand
  std::vector<Tf32Job> jobs_;
  std::vector<int> job_operand_;
  int64_t bytes_ = 0;
};

}  // namespace torch_grouped
