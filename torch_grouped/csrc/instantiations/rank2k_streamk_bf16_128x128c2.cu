// syr2k of one problem over Stream-K work units in 2 x 1 clusters: 256 x 128 pair tiles of the
// triangle, each CTA a 128 x 128 half, the B-role operand multicast; bf16 inputs.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CLUSTER(rank2k_streamk_bf16_128x128c2, cutlass::bfloat16_t, 128, 128, true, Rank2KStreamK, 2)
