// The fp64 grouped GEMM kernel (kernels/dmma_grouped.cuh): gemm and grouped_mm, both tile shapes.
#include "../kernels/dmma_grouped.cuh"

namespace torch_grouped::kernels {

void launch_dmma_grouped(const DmmaArgs& args, DmmaTile tile, int grid, cudaStream_t stream) {
  launch_dmma_tile<false>(args, tile, grid, stream);
}
int dmma_grouped_resident(int device, DmmaTile tile) { return resident_dmma_tile<false>(device, tile); }

}  // namespace torch_grouped::kernels
