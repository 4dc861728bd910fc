// The fp64 Rank2K kernel (kernels/dmma_grouped.cuh): syr2k over the triangle, both tile shapes.
#include "../kernels/dmma_grouped.cuh"

namespace torch_grouped::kernels {

void launch_dmma_rank2k(const DmmaArgs& args, DmmaTile tile, int grid, cudaStream_t stream) {
  launch_dmma_tile<true>(args, tile, grid, stream);
}
int dmma_rank2k_resident(int device, DmmaTile tile) { return resident_dmma_tile<true>(device, tile); }

}  // namespace torch_grouped::kernels
