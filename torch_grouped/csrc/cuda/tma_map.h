// TMA tensor maps (CUtensorMap) of matmul operands, encoded on the host.
#pragma once
#include <ATen/ATen.h>
#include <cuda.h>

#include <cstdint>

namespace torch_grouped {

// Encodes `t`, a [batch, outer, inner] view with unit stride along `inner`, as a 3-D map with
// 128-byte swizzled boxes of box_inner x box_outer elements (out-of-bounds reads give zeros).
// Returns false, leaving `map` untouched, when the tensor breaks TMA's rules: 2-byte elements,
// a 16-byte aligned base, strides that are multiples of 16 bytes, non-overlapping rows.
bool encode_tma_map_3d(const at::Tensor& t, uint32_t box_inner, uint32_t box_outer, CUtensorMap& map);

}  // namespace torch_grouped
