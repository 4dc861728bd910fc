// Stream-K matmul, f16 inputs, 128x128 tiles, A M-major (read where it lies), B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_STREAMK_A_M_MAJOR(streamk_f16_128x128_amajor, cutlass::half_t, 128)
