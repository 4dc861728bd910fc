// The fp64 grouped GEMM kernel (kernels/dmma_grouped.cuh): gemm and grouped_mm, 64 x 64 tiles.
#include "../kernels/dmma_grouped.cuh"

namespace torch_grouped::kernels {

void launch_dmma_grouped(const DmmaArgs& args, int grid, cudaStream_t stream) { launch_dmma<false>(args, grid, stream); }
int dmma_grouped_resident(int device) { return resident_dmma_ctas<false>(device); }

}  // namespace torch_grouped::kernels
