// TMA tensor maps (CUtensorMap) of matmul operands, encoded on the host.
#pragma once
#include <ATen/ATen.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <optional>

namespace torch_grouped {

// The driver's cuTensorMapEncodeTiled, looked up once (for maps other than the matmul operands,
// e.g. permute_copy's 5-D input maps).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

// A [batch, outer, inner] operand as TMA addresses it: unit stride along `inner`, strides in
// elements. Size-1 dimensions get the stride of a dense layout, whatever the tensor says.
struct TmaOperand {
  void* base;
  int64_t inner, outer, batch;
  int64_t outer_stride, batch_stride;
};

// `t` ([batch, outer, inner]) as a TMA operand, or nothing when it breaks TMA's rules: bf16, fp16,
// fp32 (TF32 operands, outputs) or fp64 (the DMMA kernels') elements, unit inner stride, a 16-byte
// aligned base, strides that are multiples of 16 bytes, non-overlapping rows, no empty dimension.
std::optional<TmaOperand> tma_operand(const at::Tensor& t);
// The same from raw sizes and strides ([batch, outer, inner], elements), without making a view:
// the list API calls this for every group, where a view costs a microsecond.
std::optional<TmaOperand> tma_operand(void* base, at::ScalarType dtype, const int64_t sizes[3], const int64_t strides[3]);

// Encodes `op` as a 3-D map with 128-byte swizzled boxes of box_inner x box_outer elements
// (out-of-bounds reads give zeros). Needs the device's context current on this thread.
CUtensorMap encode_tma_map(const TmaOperand& op, at::ScalarType dtype, uint32_t box_inner, uint32_t box_outer);

}  // namespace torch_grouped
