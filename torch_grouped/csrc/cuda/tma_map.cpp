#include "tma_map.h"

#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

namespace torch_grouped {
namespace {

// The driver's encoder, found through the runtime so that the extension does not link libcuda.
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
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

}  // namespace

bool encode_tma_map_3d(const at::Tensor& t, uint32_t box_inner, uint32_t box_outer, CUtensorMap& map) {
  TORCH_INTERNAL_ASSERT(t.dim() == 3);
  CUtensorMapDataType type;
  if (t.scalar_type() == at::kBFloat16) {
    type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  } else if (t.scalar_type() == at::kHalf) {
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  } else {
    return false;
  }
  const int64_t es = t.element_size();
  const int64_t batch = t.size(0), outer = t.size(1), inner = t.size(2);
  if (batch == 0 || outer == 0 || inner == 0) return false;
  if (inner > 1 && t.stride(2) != 1) return false;
  // A size-1 dimension may carry any stride; give it the one of a dense layout instead.
  const int64_t outer_stride = outer > 1 ? t.stride(1) : (inner * es + 15) / 16 * 16 / es;
  const int64_t batch_stride = batch > 1 ? t.stride(0) : outer * outer_stride;
  const bool aligned = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0 &&
                       (outer_stride * es) % 16 == 0 && (batch_stride * es) % 16 == 0;
  const bool dense = outer_stride >= inner && batch_stride >= outer * outer_stride;
  const bool fits = batch_stride * es < (int64_t(1) << 40) && inner < (int64_t(1) << 32) &&
                    outer < (int64_t(1) << 31) && batch < (int64_t(1) << 31);
  if (!aligned || !dense || !fits) return false;

  const cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(batch)};
  const cuuint64_t strides[2] = {cuuint64_t(outer_stride * es), cuuint64_t(batch_stride * es)};
  const cuuint32_t box[3] = {box_inner, box_outer, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = encoder()(&map, type, 3, t.data_ptr(), dims, strides, box, element_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(r == CUDA_SUCCESS, "torch_grouped: cuTensorMapEncodeTiled failed with error ", int(r),
              " for a tensor of shape ", t.sizes(), " and strides ", t.strides());
  return true;
}

}  // namespace torch_grouped
