// Builds the per-group TMA maps of the list API on the device, from template maps encoded once
// on the host (csrc/cuda/list_maps.cu).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "../kernels/grouped_gemm_args.h"

namespace torch_grouped {

struct ListMapsArgs {
  CUtensorMap a_template;  // dtype, boxes and swizzle of every group's A map
  CUtensorMap b_template;
  CUtensorMap c_template;  // the outputs' (TMA-store kernels only: c_maps not null)
  const kernels::ListGroup* list;
  CUtensorMap* a_maps;  // out: one per group, 128-byte aligned
  CUtensorMap* b_maps;
  CUtensorMap* c_maps;  // null: no output maps
  int32_t groups;
  int32_t element_size;      // of the operands
  int32_t out_element_size;  // of the outputs
  bool b_k_major;
  bool a_m_major;  // A [k, m] rows of length m (kernels::ListGroup)
  TG_HOST_DEVICE int32_t maps_per_group() const { return c_maps != nullptr ? 3 : 2; }
};

// Reads the problem table from args.list (device memory, uploaded by the caller).
void build_list_tensor_maps(const ListMapsArgs& args, cudaStream_t stream);

// A small upload (the problem table at offset 0, then the per-CTA lists) carried in the launch's
// parameters, which hold up to 32 KB on Hopper (CUDA 12.1+): the kernel copies it to `dst` and
// builds the maps from it, so a call needs no pinned staging block, copy or event (per-call
// pinned blocks pile up in the host allocator's pool while the GPU runs behind, and each new one
// is a cudaHostAlloc), and a CUDA graph keeps the table by value. args.list must be null.
template <size_t N>
struct InlineUpload {
  alignas(16) uint8_t data[N];
  uint32_t bytes;  // used, a multiple of 16
};

// The sizes an upload comes in, the smallest that holds the call's table taken: a launch copies
// the kernel's whole parameter block, whatever the table uses. 64 groups' 7.7 KB of table cost
// 17-24 µs of host to launch in 28 KB, 12.3 µs in 8 KB (H200, profiler on, sessions 53-54).
template <size_t... Sizes>
struct InlineUploadSizes {};
// (each instantiated in list_maps.cu)
using ListUploadSizes = InlineUploadSizes<4 << 10, 8 << 10, 16 << 10, 28 << 10>;

template <size_t N>
void upload_and_build_list_tensor_maps(const ListMapsArgs& args, const InlineUpload<N>& upload, uint8_t* dst,
                                       cudaStream_t stream);

}  // namespace torch_grouped
