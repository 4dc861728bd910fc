#include "operand_maps.h"

#include <optional>

#include "tma_map.h"

namespace torch_grouped {
namespace {

// `t` ([batch, outer, inner]) as TMA addresses it, or a pitched copy of it kept in `keep`.
std::optional<TmaOperand> operand_or_copy(const at::Tensor& t, std::vector<at::Tensor>& keep) {
  if (auto op = tma_operand(t)) return op;
  keep.push_back(pitched_copy(t));
  return tma_operand(keep.back());
}

}  // namespace

at::Tensor pitched_copy(const at::Tensor& t) {
  std::vector<int64_t> sizes = t.sizes().vec();
  const int64_t cols = sizes.back();
  sizes.back() = (cols + 7) / 8 * 8;
  at::Tensor out = at::empty(sizes, t.options()).narrow(-1, 0, cols);
  out.copy_(t);
  return out;
}

bool map_a(const at::Tensor& a3, int tile_m, at::ScalarType dtype, CUtensorMap& map, std::vector<at::Tensor>& keep) {
  const auto op = operand_or_copy(a3, keep);
  if (op) map = encode_tma_map(*op, dtype, kTileK, tile_m);
  return op.has_value();
}

bool map_b(const at::Tensor& b3, bool k_major, int tile_n, at::ScalarType dtype, CUtensorMap& map,
           std::vector<at::Tensor>& keep) {
  const auto op = operand_or_copy(k_major ? b3.transpose(1, 2) : b3, keep);
  if (op) map = k_major ? encode_tma_map(*op, dtype, kTileK, tile_n) : encode_tma_map(*op, dtype, 64, kTileK);
  return op.has_value();
}

bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n) {
  if (n > 1 && stride_n == 1) return false;
  return k <= 1 || stride_k == 1;
}

}  // namespace torch_grouped
