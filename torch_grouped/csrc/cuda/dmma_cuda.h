// fp64 gemm (list API), grouped_mm (every form) and syr2k on Hopper's FP64 tensor cores, through
// the fp64 DMMA kernels (kernels/dmma_grouped.cuh): operands read where they lie (any strides),
// offsets read on the device only, outputs fully written (zeros for empty groups and K = 0).
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "../common/checks.h"
#include "../sched/rank2k_visitor.h"

namespace torch_grouped {

// TORCH_GROUPED_FP64_KERNELS=1 sends fp64 gemm, grouped_mm and syr2k on Hopper to the kernels; unset or 0:
// PyTorch's (cuBLAS per group), as before the kernel existed. Opt-in until the kernel has been
// measured on a GPU (benchmarks/NOTES.md, session 20). Any other value is an error. Read on
// every call, so that tests and benchmarks can switch.
bool fp64_kernels_enabled();

// `shapes` from check_gemm; `panel`: the tiles' column panel width (sched::GemmTiles).
std::vector<at::Tensor> gemm_f64_cuda(at::TensorList a, at::TensorList b, const std::vector<GroupShape>& shapes,
                                      GemmSchedule mode, bool sort_by_k, int panel);

// Fills `out` (s.out_sizes, fp64, non-empty; K > 0 and groups > 0). Returns false, having done
// nothing, for sizes beyond the kernel's 32-bit coordinates (2^31 rows, columns or K).
bool grouped_mm_f64_cuda(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                         const GroupedMmShape& s, at::Tensor& out, int panel);

// syr2k's groups (checked), over each `uplo` triangle's tiles (all_tiles: every tile, the GEMM
// walk the benchmark compares with), each problem's output exactly symmetric.
std::vector<at::Tensor> syr2k_f64_cuda(at::TensorList a, at::TensorList b, at::TensorList c, sched::Uplo uplo,
                                       double alpha, double beta, bool all_tiles);

}  // namespace torch_grouped
