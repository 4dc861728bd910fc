// The CPU path of every op: the portable implementations, the scheduled ones where the CPU
// follows the GPU's schedule (syr2k's triangle walk, streamk_mm's partial tiles and fixup).
#include <torch/library.h>

#include "../common/checks.h"
#include "portable.h"

namespace torch_grouped {
namespace {

// The CPU has no SMs; a grid of 8 "CTAs" keeps the Stream-K fixup exercised on small shapes.
constexpr int64_t kCpuGrid = 8;

at::Tensor streamk_mm_cpu(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                          int64_t splits, int64_t grid) {
  return streamk_mm_tiled(a, b, decomposition, splits, grid, kCpuGrid);
}

std::vector<int64_t> streamk_tile_cpu(const at::Tensor& a, const at::Tensor& b, int64_t grid) {
  bool is_auto = false;
  check_streamk(a, b, "auto", 0, grid, is_auto);
  return {kCpuStreamKTile[0], kCpuStreamKTile[1], kCpuStreamKTile[2]};
}

// The CPU path's walk: its tiles, one walker per grid slot (no clusters).
std::vector<int64_t> streamk_walk_cpu(const at::Tensor& a, const at::Tensor& b, int64_t grid) {
  bool is_auto = false;
  check_streamk(a, b, "auto", 0, grid, is_auto);
  return {kCpuStreamKTile[0], grid > 0 ? grid : kCpuGrid};
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, CPU, m) {
  m.impl("gemm", &gemm_portable);
  m.impl("grouped_mm", &grouped_mm_portable);
  m.impl("syr2k", &syr2k_tiled);
  m.impl("streamk_mm", &streamk_mm_cpu);
  m.impl("permute_copy", &permute_copy_portable);
  m.impl("layout_transform", &layout_transform_portable);
  m.impl("_streamk_tile", &streamk_tile_cpu);
  m.impl("_streamk_walk", &streamk_walk_cpu);
  m.impl("_symmetric_sum", &symmetric_sum_portable);
}

}  // namespace torch_grouped
