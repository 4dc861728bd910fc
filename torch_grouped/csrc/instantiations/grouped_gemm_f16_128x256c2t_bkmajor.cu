// Grouped GEMM, f16 inputs, 128x256 tiles in 2 x 1 clusters (B multicast), B K-major, the epilogue
// through TMA stores (TORCH_GROUPED_CLUSTER=1 with TORCH_GROUPED_TMA_STORE=1).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CONFIG(grouped_gemm_f16_128x256c2t_bkmajor, cutlass::half_t, 128, 256, true, Grouped, 2, true)
