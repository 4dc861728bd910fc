#include "tma_map.h"

#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

namespace torch_grouped {

// Found through the runtime so that the extension does not link libcuda.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    C10_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                    cudaEnableDefault, &found));
    TORCH_CHECK(found == cudaDriverEntryPointSuccess && p != nullptr,
                "torch_grouped: the CUDA driver has no cuTensorMapEncodeTiled (driver too old for TMA)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

std::optional<TmaOperand> tma_operand(void* base, at::ScalarType dtype, const int64_t sizes[3], const int64_t strides[3]) {
  if (dtype != at::kBFloat16 && dtype != at::kHalf && dtype != at::kFloat && dtype != at::kDouble) return std::nullopt;
  const int64_t es = at::elementSize(dtype);
  const int64_t batch = sizes[0], outer = sizes[1], inner = sizes[2];
  if (batch == 0 || outer == 0 || inner == 0) return std::nullopt;
  if (inner > 1 && strides[2] != 1) return std::nullopt;
  const int64_t outer_stride = outer > 1 ? strides[1] : (inner * es + 15) / 16 * 16 / es;
  const int64_t batch_stride = batch > 1 ? strides[0] : outer * outer_stride;
  const bool aligned = reinterpret_cast<uintptr_t>(base) % 16 == 0 && (outer_stride * es) % 16 == 0 &&
                       (batch_stride * es) % 16 == 0;
  const bool dense = outer_stride >= inner && batch_stride >= outer * outer_stride;
  const bool fits = batch_stride * es < (int64_t(1) << 40) && inner < (int64_t(1) << 31) &&
                    outer < (int64_t(1) << 31) && batch < (int64_t(1) << 31);
  if (!aligned || !dense || !fits) return std::nullopt;
  return TmaOperand{base, inner, outer, batch, outer_stride, batch_stride};
}

std::optional<TmaOperand> tma_operand(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.dim() == 3);
  const int64_t sizes[3] = {t.size(0), t.size(1), t.size(2)};
  const int64_t strides[3] = {t.stride(0), t.stride(1), t.stride(2)};
  return tma_operand(t.data_ptr(), t.scalar_type(), sizes, strides);
}

CUtensorMap encode_tma_map(const TmaOperand& op, at::ScalarType dtype, uint32_t box_inner, uint32_t box_outer) {
  const int64_t es = at::elementSize(dtype);
  const CUtensorMapDataType type = dtype == at::kBFloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : dtype == at::kHalf   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : dtype == at::kDouble ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
                                                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const cuuint64_t dims[3] = {cuuint64_t(op.inner), cuuint64_t(op.outer), cuuint64_t(op.batch)};
  const cuuint64_t strides[2] = {cuuint64_t(op.outer_stride * es), cuuint64_t(op.batch_stride * es)};
  const cuuint32_t box[3] = {box_inner, box_outer, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map;
  const CUresult r = tensor_map_encoder()(&map, type, 3, op.base, dims, strides, box, element_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(r == CUDA_SUCCESS, "torch_grouped: cuTensorMapEncodeTiled failed with error ", int(r),
              " for an operand of ", op.batch, " x ", op.outer, " x ", op.inner, " elements");
  return map;
}

}  // namespace torch_grouped
