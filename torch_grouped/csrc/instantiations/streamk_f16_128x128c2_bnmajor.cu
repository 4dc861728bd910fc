// Stream-K matmul in 2 x 1 clusters (256 x 128 pair tiles, B multicast), fp16 inputs, B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CLUSTER(streamk_f16_128x128c2_bnmajor, cutlass::half_t, 128, 128, false, StreamK, 2)
