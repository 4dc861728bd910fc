// Argument validation shared by the CPU and CUDA implementations of every op. Each check raises
// a RuntimeError (TORCH_CHECK) or ValueError (TORCH_CHECK_VALUE) whose message names the op, the
// group, the argument and the expected value.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "../sched/rank2k_visitor.h"
#include "../sched/streamk_plan.h"

namespace torch_grouped {

// Shape of a matmul group as the kernels see it.
struct GroupShape {
  int64_t m, n, k;
};

// gemm: returns the per-group (M, N, K) and fills `out_dtype` with the result dtype.
std::vector<GroupShape> check_gemm(at::TensorList a, at::TensorList b,
                                   std::optional<at::ScalarType> requested, at::ScalarType& out_dtype);

// gemm's `schedule` option: how the persistent kernel finds its tiles.
enum class GemmSchedule { Auto, Host, Device };
GemmSchedule check_gemm_schedule(const std::string& schedule);

// The four forms of torch._grouped_mm.
enum class GroupedMmForm { A2dB3d, A3dB2d, A2dB2d, A3dB3d };

struct GroupedMmShape {
  GroupedMmForm form;
  int64_t groups;
  std::vector<int64_t> out_sizes;
  at::ScalarType out_dtype;
};
GroupedMmShape check_grouped_mm(const at::Tensor& a, const at::Tensor& b,
                                const std::optional<at::Tensor>& offs,
                                std::optional<at::ScalarType> requested);
// Checks the values of `offs` (non-decreasing, within [0, limit]). Reads them, so only for
// tensors already on the host.
void check_offsets_values(const at::Tensor& offs_cpu, int64_t limit, const char* along);

sched::Uplo check_syr2k(at::TensorList a, at::TensorList b, at::TensorList c,
                        const std::string& uplo);

sched::Decomposition check_streamk(const at::Tensor& a, const at::Tensor& b,
                                   const std::string& decomposition, int64_t splits, int64_t grid,
                                   bool& is_auto);
// A decomposition's name (auto, data_parallel, split_k, stream_k, dp_one_tile_sk,
// two_tile_sk_dp); `is_auto` for "auto". Anything else is a ValueError naming `op`.
sched::Decomposition parse_decomposition(const char* op, const std::string& decomposition, bool& is_auto);

// Normalises `dims` (negative values wrap) and checks it is a permutation of x's axes.
std::vector<int64_t> check_permutation(const at::Tensor& x, at::IntArrayRef dims);

}  // namespace torch_grouped
