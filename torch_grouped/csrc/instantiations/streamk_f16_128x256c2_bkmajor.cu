// Stream-K matmul in 2 x 1 clusters (256 x 256 pair tiles, B multicast), fp16 inputs, B K-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CLUSTER(streamk_f16_128x256c2_bkmajor, cutlass::half_t, 128, 256, true, StreamK, 2)
