// Runs a list of matmul problems whose sizes the host knows (gemm, syr2k) through the persistent
// grouped kernel: the problem table and the per-CTA tile lists uploaded (in a kernel's parameters
// up to 28 KB, else through one pinned copy), the tensor maps built on the device, then the kernel.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "../kernels/grouped_gemm_launch.h"
#include "tma_map.h"

namespace torch_grouped {

struct ListProblem {
  kernels::ListGroup group;  // sizes, output and operand pointers
  TmaOperand a, b;           // the operands as TMA sees them
};

struct ListLaunch {
  kernels::GroupedGemmKernel kernel;  // its tiles, clusters and resident CTAs
  at::ScalarType dtype;  // of the operands
  bool b_k_major;
  bool host_lists;  // host-precomputed tile lists (per CTA, or per cluster), else the device-only visitor
  // A read M-major where it lies (kernels::k_grouped_kernel's configurations, whose walk serves a list
  // too): gemm's dB_i = A_iᵀ·dY_i, whose A_iᵀ are transposed views.
  bool a_m_major = false;
};

// The walkers of a grouped kernel's persistent grid (its CTAs, or with clusters its clusters), to
// which the scheduler deals its `total` tiles (pair tiles with clusters): every resident one, or
// one per tile if fewer (at least one). resident_walkers: all that are resident at once.
int64_t resident_walkers(const kernels::GroupedGemmKernel& kernel, int device);
int64_t persistent_walkers(const kernels::GroupedGemmKernel& kernel, int device, int64_t total);

// `p` carries the mode's fields (out_kind, tiles or triangle, alpha and beta); the rest is filled
// here. `problems` are in visiting order and must not be empty.
template <class Tiles>
void launch_list(const std::vector<ListProblem>& problems, Tiles tiles, const ListLaunch& how,
                 kernels::GroupedGemmArgs p, const at::Device& device);

// Whether the kernels serve these inputs: bf16 or fp16 operands on a Hopper GPU (sm_90a code).
bool kernel_dtype(at::ScalarType t);
bool kernel_device(const at::Tensor& t);
kernels::InputKind input_kind(at::ScalarType t);
kernels::OutKind out_kind(at::ScalarType t);
at::ScalarType out_dtype(kernels::OutKind k);

// Encoding a tensor map needs the device's context current on this thread. CUDAGuard skips
// cudaSetDevice when the device already matches, which on a fresh thread (autograd's backward
// workers) leaves no context: cuTensorMapEncodeTiled then fails with CUDA_ERROR_INVALID_CONTEXT.
void ensure_context(int device);

}  // namespace torch_grouped
