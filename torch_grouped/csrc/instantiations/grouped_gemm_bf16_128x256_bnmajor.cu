// Grouped GEMM, bf16 inputs, 128x256 tiles, B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(grouped_gemm_bf16_128x256_bnmajor, cutlass::bfloat16_t, 128, 256, false, Grouped)
