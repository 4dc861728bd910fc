#include "operand_maps.h"

#include <cstdlib>
#include <cstring>

namespace torch_grouped {

CUtensorMap a_map(const TmaOperand& a, int tile_m, at::ScalarType dtype) {
  return encode_tma_map(a, dtype, tile_k(dtype), tile_m);
}

CUtensorMap mn_major_map(const TmaOperand& t, at::ScalarType dtype) { return encode_tma_map(t, dtype, 64, kTileK); }

CUtensorMap b_map(const TmaOperand& b, bool k_major, int tile_n, at::ScalarType dtype) {
  return k_major ? encode_tma_map(b, dtype, tile_k(dtype), tile_n) : mn_major_map(b, dtype);
}

bool tma_store_enabled(bool by_default) {
  const char* v = std::getenv("TORCH_GROUPED_TMA_STORE");
  if (v == nullptr || *v == '\0') return by_default;
  TORCH_CHECK_VALUE(std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0,
                    "TORCH_GROUPED_TMA_STORE must be 0 or 1 (unset: each op's default); got '", v, "'");
  return *v == '1';
}

CUtensorMap output_box_map(const TmaOperand& out, at::ScalarType dtype) {
  // boxes of one 128-byte line of columns x the 64 rows of a consumer warpgroup
  return encode_tma_map(out, dtype, 128 / uint32_t(at::elementSize(dtype)), 64);
}

std::optional<CUtensorMap> output_map(const at::Tensor& out, bool by_default) {
  if (!tma_store_enabled(by_default)) return std::nullopt;
  const int64_t sizes[3] = {out.dim() == 3 ? out.size(0) : 1, out.size(-2), out.size(-1)};
  const int64_t strides[3] = {out.dim() == 3 ? out.stride(0) : out.size(-2) * out.stride(-2), out.stride(-2),
                              out.stride(-1)};
  const std::optional<TmaOperand> op = tma_operand(out.data_ptr(), out.scalar_type(), sizes, strides);
  if (!op) return std::nullopt;
  return output_box_map(*op, out.scalar_type());
}

bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n) {
  if (n > 1 && stride_n == 1) return false;
  return k <= 1 || stride_k == 1;
}

bool a_is_m_major(int64_t m, int64_t k, int64_t stride_m, int64_t stride_k) {
  return m > 1 && stride_m == 1 && (k <= 1 || stride_k != 1);
}

}  // namespace torch_grouped
