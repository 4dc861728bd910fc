#include "operand_maps.h"

#include <cstdlib>
#include <cstring>

namespace torch_grouped {

CUtensorMap a_map(const TmaOperand& a, int tile_m, at::ScalarType dtype) {
  return encode_tma_map(a, dtype, kTileK, tile_m);
}

CUtensorMap b_map(const TmaOperand& b, bool k_major, int tile_n, at::ScalarType dtype) {
  return k_major ? encode_tma_map(b, dtype, kTileK, tile_n) : encode_tma_map(b, dtype, 64, kTileK);
}

std::optional<CUtensorMap> output_map(const at::Tensor& out) {
  const char* v = std::getenv("TORCH_GROUPED_TMA_STORE");
  if (v == nullptr || std::strcmp(v, "1") != 0) return std::nullopt;
  const at::Tensor o = out.dim() == 2 ? out.unsqueeze(0) : out;
  const std::optional<TmaOperand> op = tma_operand(o);
  if (!op) return std::nullopt;
  // boxes of one 128-byte line of columns x the 64 rows of a consumer warpgroup
  return encode_tma_map(*op, out.scalar_type(), 128 / uint32_t(out.element_size()), 64);
}

bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n) {
  if (n > 1 && stride_n == 1) return false;
  return k <= 1 || stride_k == 1;
}

}  // namespace torch_grouped
