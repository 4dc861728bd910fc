// Candidate pitched copies for tools/probe_pitched_copy.py: rows of 2-byte elements that start
// anywhere on the 2-byte grid (a source row stride of `ld` elements, contiguous within a row) into
// rows of `pitch` elements (a multiple of 8) at a 16-byte-aligned destination, zeros past each row's
// `inner` elements. Plain CUDA with C entry points (loaded by ctypes), so that a probe needs no
// build of the extension.
#include <cuda_runtime.h>

#include <cstdint>

namespace {

// The extension's copy (cuda/pitched_copy.cu) for one contiguous-row job: C chunks of 16 bytes a
// thread, each from eight 2-byte loads, every load of the thread in flight before its stores.
template <int C>
__global__ void __launch_bounds__(256) element_loads(const uint16_t* src, uint16_t* dst, int64_t outer, int64_t inner,
                                                     int64_t ld, int64_t pitch) {
  const int64_t per_row = pitch / 8, total = outer * per_row;
  const int64_t first = int64_t(blockIdx.x) * 256 * C + threadIdx.x;
  uint4 chunk[C];
  uint16_t* out[C] = {};
#pragma unroll
  for (int u = 0; u < C; ++u) {
    const int64_t q = first + u * 256;
    if (q >= total) break;
    const int64_t row = q / per_row, col = (q - row * per_row) * 8;
    const uint16_t* s = src + row * ld;
    uint16_t v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = col + e < inner ? s[col + e] : uint16_t{0};
    chunk[u] = make_uint4(v[0] | uint32_t(v[1]) << 16, v[2] | uint32_t(v[3]) << 16, v[4] | uint32_t(v[5]) << 16,
                          v[6] | uint32_t(v[7]) << 16);
    out[u] = dst + row * pitch + col;
  }
#pragma unroll
  for (int u = 0; u < C; ++u) {
    if (out[u] == nullptr) break;
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(out[u]), "r"(chunk[u].x), "r"(chunk[u].y),
                 "r"(chunk[u].z), "r"(chunk[u].w) : "memory");
  }
}

// The 16 bytes at byte offset `shift` (even, 0..14) of the 32 in (lo, hi).
__device__ __forceinline__ uint4 bytes_at(const uint4& lo, const uint4& hi, int shift) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int first = shift >> 2, bits = (shift & 3) * 8;
  uint32_t o[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    // (a select chain over the five words the window can start at: no local-memory array)
    uint32_t a = w[j], b = w[j + 1];
#pragma unroll
    for (int f = 1; f < 4; ++f)
      if (first == f) a = w[j + f], b = w[j + f + 1];
    o[j] = __funnelshift_r(a, b, bits);
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// One warp per run of 32 consecutive destination chunks of one row, R runs a warp: each lane reads
// the aligned 16-byte block under its chunk's first source byte with one 16-byte load and takes the
// next block from the next lane (the run's last lane reads it itself), so every load instruction
// of the warp is 512 contiguous bytes. A lane past the row's chunks still reads its block where it
// holds bytes of the row (the lane before needs them); blocks that hold none are not read (zeros),
// so no load leaves the 16-byte blocks the row's bytes lie in.
template <int R>
__global__ void __launch_bounds__(256) warp_blocks(const uint16_t* src, uint16_t* dst, int64_t outer, int64_t inner,
                                                   int64_t ld, int64_t pitch) {
  const int lane = threadIdx.x & 31;
  const int64_t per_row = pitch / 8, runs_per_row = (per_row + 31) / 32;
  const int64_t first_run = (int64_t(blockIdx.x) * 8 + (threadIdx.x >> 5)) * R;
  uint4 chunk[R];
  uint16_t* out[R] = {};
#pragma unroll
  for (int u = 0; u < R; ++u) {
    const int64_t run = first_run + u;
    if (run >= outer * runs_per_row) break;
    const int64_t row = run / runs_per_row, c = (run - row * runs_per_row) * 32 + lane;
    const char* row_start = reinterpret_cast<const char*>(src + row * ld);
    const char* row_end = row_start + inner * 2;
    const int shift = static_cast<int>(reinterpret_cast<uintptr_t>(row_start) & 15);
    const uint4* block = reinterpret_cast<const uint4*>(row_start - shift) + c;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const bool live = c < per_row;
    const uint4 lo = reinterpret_cast<const char*>(block) < row_end ? __ldg(block) : zero;
    uint4 hi = zero;
    hi.x = __shfl_down_sync(0xffffffffu, lo.x, 1), hi.y = __shfl_down_sync(0xffffffffu, lo.y, 1);
    hi.z = __shfl_down_sync(0xffffffffu, lo.z, 1), hi.w = __shfl_down_sync(0xffffffffu, lo.w, 1);
    if (lane == 31 && shift != 0)
      hi = reinterpret_cast<const char*>(block + 1) < row_end ? __ldg(block + 1) : zero;
    uint4 v = bytes_at(lo, hi, shift);
    // zeros past the row's end (the blocks read may hold the next row's first elements)
    const int64_t valid = inner - c * 8;
    if (valid < 8) {
      uint32_t* words = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        const uint32_t keep = (e < valid ? 0xffffu : 0u) | (e + 1 < valid ? 0xffff0000u : 0u);
        words[e / 2] &= keep;
      }
    }
    chunk[u] = v;
    out[u] = live ? dst + row * pitch + c * 8 : nullptr;
  }
#pragma unroll
  for (int u = 0; u < R; ++u) {
    if (out[u] == nullptr) continue;
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(out[u]), "r"(chunk[u].x), "r"(chunk[u].y),
                 "r"(chunk[u].z), "r"(chunk[u].w) : "memory");
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

// variant: 2 or 4 = element_loads<2 | 4>, 12 / 14 = warp_blocks<2 | 4>, 20 = cudaMemcpy2DAsync.
// Returns a cudaError_t.
extern "C" int pitched_copy(int variant, const void* src, void* dst, int64_t outer, int64_t inner, int64_t ld,
                            int64_t pitch, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const auto* in = static_cast<const uint16_t*>(src);
  auto* out = static_cast<uint16_t*>(dst);
  const int64_t chunks = outer * (pitch / 8), runs = outer * ceil_div(pitch / 8, 32);
  switch (variant) {
    case 2: element_loads<2><<<ceil_div(chunks, 512), 256, 0, s>>>(in, out, outer, inner, ld, pitch); break;
    case 4: element_loads<4><<<ceil_div(chunks, 1024), 256, 0, s>>>(in, out, outer, inner, ld, pitch); break;
    case 12: warp_blocks<2><<<ceil_div(runs, 16), 256, 0, s>>>(in, out, outer, inner, ld, pitch); break;
    case 14: warp_blocks<4><<<ceil_div(runs, 32), 256, 0, s>>>(in, out, outer, inner, ld, pitch); break;
    case 20:
      return cudaMemcpy2DAsync(out, pitch * 2, in, ld * 2, inner * 2, outer, cudaMemcpyDeviceToDevice, s);
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
