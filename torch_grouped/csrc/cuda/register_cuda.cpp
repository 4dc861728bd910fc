// The CUDA path of every op. Ops whose own kernels exist dispatch to them (csrc/cuda/*.cu);
// the others use PyTorch's kernels through the portable implementations until theirs land.
#include <torch/library.h>

#include "../common/checks.h"
#include "../cpu/portable.h"
#include "grouped_gemm_cuda.h"
#include "layout_cuda.h"
#include "syr2k_cuda.h"

namespace torch_grouped {
namespace {

// Until the Stream-K kernel lands: validate the arguments as the kernel will, then cuBLAS.
at::Tensor streamk_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                           int64_t splits, int64_t grid) {
  bool is_auto = false;
  check_streamk(a, b, decomposition, splits, grid, is_auto);
  return matmul_accumulate(a, b, a.scalar_type());
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, CUDA, m) {
  m.impl("gemm", &gemm_cuda);
  m.impl("grouped_mm", &grouped_mm_cuda);
  m.impl("syr2k", &syr2k_cuda);
  m.impl("streamk_mm", &streamk_mm_cuda);
  m.impl("permute_copy", &permute_copy_cuda);
  m.impl("layout_transform", &layout_transform_cuda);
}

}  // namespace torch_grouped
