// Implementations written with ATen operators only. They run on any device and are the CPU
// path of every op; the CUDA path uses them where our own kernel does not exist yet.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "../sched/rank2k_visitor.h"

namespace torch_grouped {

// The dtype the portable paths accumulate in: fp64 for double inputs, fp32 otherwise.
inline at::ScalarType accumulate_dtype(const at::Tensor& t) {
  return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

// a @ b in `out_dtype`, accumulating in fp32 for half inputs (fp64 for double); K = 0 gives zeros.
at::Tensor matmul_accumulate(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype);

std::vector<at::Tensor> gemm_portable(at::TensorList a, at::TensorList b,
                                      std::optional<at::ScalarType> out_dtype,
                                      const std::string& schedule, bool sort_by_k);

// Reads `offs` on the host: on a GPU this synchronises.
at::Tensor grouped_mm_portable(const at::Tensor& a, const at::Tensor& b,
                               const std::optional<at::Tensor>& offs,
                               std::optional<at::ScalarType> out_dtype);

// Keeps the `uplo` triangle of t (diagonal included) and mirrors it into the other one.
at::Tensor fold_triangle(const at::Tensor& t, sched::Uplo uplo);

// g + gᵀ of a square matrix through ATen, contiguous (grouped::_symmetric_sum's CPU path, and its
// GPU path for what its kernel does not serve).
at::Tensor symmetric_sum_aten(const at::Tensor& g);
std::vector<at::Tensor> symmetric_sum_portable(at::TensorList g);

// Walks the triangle's tiles with the grouped Rank2K scheduler, as the GPU kernel does.
std::vector<at::Tensor> syr2k_tiled(at::TensorList a, at::TensorList b, at::TensorList c,
                                    const std::string& uplo, double alpha, double beta);
// Two matmuls per group and an exact symmetrisation.
std::vector<at::Tensor> syr2k_composite(at::TensorList a, at::TensorList b, at::TensorList c,
                                        const std::string& uplo, double alpha, double beta);

// The CPU path's Stream-K tile (M, N, K): small, so that small shapes still cut tiles.
constexpr int64_t kCpuStreamKTile[3] = {64, 64, 32};

// Runs the Stream-K plan CTA by CTA, with partial tiles and the fixup, as the GPU kernel does.
// `sms` is the grid used for `grid = 0`.
at::Tensor streamk_mm_tiled(const at::Tensor& a, const at::Tensor& b,
                            const std::string& decomposition, int64_t splits, int64_t grid,
                            int64_t sms);

at::Tensor permute_copy_portable(const at::Tensor& x, at::IntArrayRef dims);
at::Tensor layout_transform_portable(const at::Tensor& x, const std::string& src,
                                     const std::string& dst);

}  // namespace torch_grouped
