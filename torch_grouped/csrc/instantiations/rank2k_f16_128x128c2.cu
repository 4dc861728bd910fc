// Grouped Rank2K (syr2k), f16 inputs, 128x128 tiles in 2 x 1 clusters (256 x 128 pair tiles of
// the triangle walk, the B-role operand multicast).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CLUSTER(rank2k_f16_128x128c2, cutlass::half_t, 128, 128, true, Rank2K, 2)
