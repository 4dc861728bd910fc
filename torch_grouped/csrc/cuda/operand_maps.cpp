#include "operand_maps.h"

namespace torch_grouped {

CUtensorMap a_map(const TmaOperand& a, int tile_m, at::ScalarType dtype) {
  return encode_tma_map(a, dtype, kTileK, tile_m);
}

CUtensorMap b_map(const TmaOperand& b, bool k_major, int tile_n, at::ScalarType dtype) {
  return k_major ? encode_tma_map(b, dtype, kTileK, tile_n) : encode_tma_map(b, dtype, 64, kTileK);
}

bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n) {
  if (n > 1 && stride_n == 1) return false;
  return k <= 1 || stride_k == 1;
}

}  // namespace torch_grouped
