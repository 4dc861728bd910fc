// The CUDA path of every op: each dispatches to our kernels (csrc/cuda/*), which fall back to
// PyTorch's own where they do not apply.
#include <torch/library.h>

#include "grouped_gemm_cuda.h"
#include "layout_cuda.h"
#include "streamk_cuda.h"
#include "symmetric_sum.h"
#include "syr2k_cuda.h"

namespace torch_grouped {

TORCH_LIBRARY_IMPL(grouped, CUDA, m) {
  m.impl("gemm", &gemm_cuda);
  m.impl("grouped_mm", &grouped_mm_cuda);
  m.impl("syr2k", &syr2k_cuda);
  m.impl("streamk_mm", &streamk_mm_cuda);
  m.impl("permute_copy", &permute_copy_cuda);
  m.impl("layout_transform", &layout_transform_cuda);
  m.impl("_streamk_tile", &streamk_tile_cuda);
  m.impl("_streamk_walk", &streamk_walk_cuda);
  m.impl("_symmetric_sum", &symmetric_sum_cuda);
}

}  // namespace torch_grouped
