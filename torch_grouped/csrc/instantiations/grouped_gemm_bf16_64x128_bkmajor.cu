// Grouped GEMM, bf16 inputs, 64x128 tiles, B K-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(grouped_gemm_bf16_64x128_bkmajor, cutlass::bfloat16_t, 64, 128, true, Grouped)
