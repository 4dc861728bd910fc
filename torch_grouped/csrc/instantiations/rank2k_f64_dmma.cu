// The fp64 Rank2K kernel (kernels/dmma_grouped.cuh): syr2k over the triangle's 64 x 64 tiles.
#include "../kernels/dmma_grouped.cuh"

namespace torch_grouped::kernels {

void launch_dmma_rank2k(const DmmaArgs& args, int grid, cudaStream_t stream) { launch_dmma<true>(args, grid, stream); }
int dmma_rank2k_resident(int device) { return resident_dmma_ctas<true>(device); }

}  // namespace torch_grouped::kernels
