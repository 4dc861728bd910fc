// Grouped GEMM, f16 inputs, 64x128 tiles, B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(grouped_gemm_f16_64x128_bnmajor, cutlass::half_t, 64, 128, false, Grouped)
