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

// Whether fp64 calls on Hopper take the DMMA kernels. TORCH_GROUPED_FP64_KERNELS=1: always; 0:
// never (cuBLAS per problem, as before the kernels existed); unset: the measured rule below. Any
// other value is an error. Read on every call, so that tests and benchmarks can switch.
// gemm and syr2k lists of `problems` problems and `flops` in all (2mnk, or syr2k's 2n(n+1)k).
bool fp64_list_on_kernel(int64_t problems, double flops);
// grouped_mm, every form.
bool fp64_grouped_mm_on_kernel();

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
