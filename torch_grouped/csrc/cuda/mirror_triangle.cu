// One block per 32 x 32 tile of the kept triangle (sched::triangle_row_col, the Rank2K walk's
// closed form): read coalesced along its rows into shared memory, written coalesced along the
// rows of the mirrored tile. A diagonal tile reads its kept half and writes the other.
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include "../sched/rank2k_visitor.h"
#include "mirror_triangle.h"

namespace torch_grouped {
namespace {

constexpr int kSide = 32, kRows = 8;  // 32 x 8 threads, four rows each

template <typename T>
__global__ void __launch_bounds__(kSide * kRows) mirror_kernel(T* __restrict__ a, int64_t n, bool from_lower) {
  __shared__ T tile[kSide][kSide + 1];  // +1: the transposed reads fall in distinct banks
  int64_t ti, tj;                       // tile (ti, tj) of the lower triangle, ti >= tj
  sched::triangle_row_col(blockIdx.x, ti, tj);
  // kept tile: rows r0.., columns c0..; lower: (ti, tj), upper: (tj, ti)
  const int64_t r0 = (from_lower ? ti : tj) * kSide, c0 = (from_lower ? tj : ti) * kSide;
  const int x = threadIdx.x;
  for (int y = threadIdx.y; y < kSide; y += kRows) {
    const int64_t r = r0 + y, c = c0 + x;
    if (r < n && c < n) tile[y][x] = a[r * n + c];
  }
  __syncthreads();
  // the mirror: element (c, r) = kept (r, c), written along rows of the mirrored tile
  for (int y = threadIdx.y; y < kSide; y += kRows) {
    const int64_t r = c0 + y, c = r0 + x;  // output position; its kept source is (c, r)
    const bool mirrored = from_lower ? c > r : c < r;
    if (r < n && c < n && mirrored) a[r * n + c] = tile[x][y];
  }
}

}  // namespace

void mirror_triangle(at::Tensor& out, bool from_lower) {
  TORCH_INTERNAL_ASSERT(out.dim() == 2 && out.size(0) == out.size(1) && out.is_contiguous());
  const int64_t n = out.size(0);
  if (n < 2) return;
  const int64_t tiles = (n + kSide - 1) / kSide, blocks = tiles * (tiles + 1) / 2;
  TORCH_CHECK(blocks < (int64_t{1} << 31), "syr2k: a matrix of order ", n, " is too large to mirror");
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(out.get_device()).stream();
  const dim3 threads(kSide, kRows);
  if (out.element_size() == 4) {
    mirror_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(static_cast<uint32_t*>(out.data_ptr()), n, from_lower);
  } else {
    TORCH_INTERNAL_ASSERT(out.element_size() == 8);
    mirror_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(static_cast<uint64_t*>(out.data_ptr()), n, from_lower);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace torch_grouped
