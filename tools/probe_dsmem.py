"""What a split-K fixup inside a thread-block cluster would cost on this GPU, against the global
one streamk_mm runs (benchmarks/NOTES.md, session 26: publishing a 128 x 128 fp32 partial through
global memory costs ~3 µs). A throwaway kernel (compiled here with load_inline, sm_90a) stands in
for one tile's fixup: each of S CTAs of a cluster holds a 128 x 128 fp32 partial (64 KB, 256
threads x 64 values, as two consumer warpgroups hold it) and

  dsmem:  stages it in its own shared memory, cluster barrier, sums its 1/S share of the tile's
          rows from the S - 1 peers' shared memory, cluster barrier (the peers' memory stays
          until every rank has read it);
  global: stores it to a global slot, CTA barrier, one thread's acq_rel atomic on a counter; the
          last of the S arrivers reads the S - 1 other slots (streamk_fixup.cuh's publish + sum).

Per variant, S and cluster count: the median over CTAs of the fixup's µs (globaltimer from the
partial in registers to the summed share in registers), for 6 clusters (a tiny call) and for
every SM busy. Prints a table; nothing is kept.
    python3 tools/probe_dsmem.py"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <cooperative_groups.h>
#include <cuda/atomic>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}

template <int S>
__global__ void __cluster_dims__(S, 1, 1) __launch_bounds__(256) dsmem_fixup(float* out, long long* ns) {
  extern __shared__ float4 stage[];                 // 4096 float4 = 64 KB: the tile's partial
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = cluster.block_rank(), t = threadIdx.x;
  float4 acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = make_float4(rank + j, t, j, 1.f);
  __syncthreads();
  const unsigned long long t0 = now();
  for (int j = 0; j < 16; ++j) stage[j * 256 + t] = acc[j];
  cluster.sync();
  // this rank's share: value slots j in [rank * 16 / S, (rank + 1) * 16 / S) of every thread
  float4 sum[16 / S];
  for (int q = 0; q < 16 / S; ++q) sum[q] = acc[rank * (16 / S) + q];
  for (int p = 1; p < S; ++p) {
    const float4* peer = cluster.map_shared_rank(stage, (rank + p) % S);
    for (int q = 0; q < 16 / S; ++q) {
      const float4 v = peer[(rank * (16 / S) + q) * 256 + t];
      sum[q].x += v.x, sum[q].y += v.y, sum[q].z += v.z, sum[q].w += v.w;
    }
  }
  cluster.sync();
  const unsigned long long t1 = now();
  float s = 0.f;
  for (int q = 0; q < 16 / S; ++q) s += sum[q].x + sum[q].y + sum[q].z + sum[q].w;
  out[blockIdx.x * 256 + t] = s;
  if (t == 0) ns[blockIdx.x] = (long long)(t1 - t0);
}

template <int S>
__global__ void __launch_bounds__(256) global_fixup(float4* slots, int* counters, float* out, long long* ns) {
  __shared__ int last;
  const int tile = blockIdx.x / S, rank = blockIdx.x % S, t = threadIdx.x;
  float4 acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = make_float4(rank + j, t, j, 1.f);
  __syncthreads();
  const unsigned long long t0 = now();
  float4* mine = slots + size_t(blockIdx.x) * 4096;
  for (int j = 0; j < 16; ++j) mine[j * 256 + t] = acc[j];
  __syncthreads();
  if (t == 0) {
    cuda::atomic_ref<int, cuda::thread_scope_device> count(counters[tile]);
    last = count.fetch_add(1, cuda::memory_order_acq_rel) == S - 1;
    if (last) count.store(0, cuda::memory_order_relaxed);
  }
  __syncthreads();
  if (last) {
    for (int p = 0; p < S; ++p) {
      if (p == rank) continue;
      const float4* other = slots + size_t(tile * S + p) * 4096;
      for (int j = 0; j < 16; ++j) {
        const float4 v = __ldcg(other + j * 256 + t);
        acc[j].x += v.x, acc[j].y += v.y, acc[j].z += v.z, acc[j].w += v.w;
      }
    }
  }
  const unsigned long long t1 = now();
  float s = 0.f;
  for (int j = 0; j < 16; ++j) s += acc[j].x + acc[j].y + acc[j].z + acc[j].w;
  out[blockIdx.x * 256 + t] = s;
  if (t == 0) ns[blockIdx.x] = last ? (long long)(t1 - t0) : -1;  // the last arriver's path
}

void run(int variant, int s, int ctas, torch::Tensor slots, torch::Tensor counters, torch::Tensor out,
         torch::Tensor ns) {
  float* o = out.data_ptr<float>();
  long long* n = reinterpret_cast<long long*>(ns.data_ptr<int64_t>());
  if (variant == 0) {
    auto launch = [&](auto kernel) {
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
      kernel<<<ctas, 256, 65536>>>(o, n);
    };
    if (s == 2) launch(dsmem_fixup<2>); else if (s == 4) launch(dsmem_fixup<4>); else launch(dsmem_fixup<8>);
  } else {
    float4* sl = reinterpret_cast<float4*>(slots.data_ptr<float>());
    int* c = counters.data_ptr<int>();
    if (s == 2) global_fixup<2><<<ctas, 256>>>(sl, c, o, n);
    else if (s == 4) global_fixup<4><<<ctas, 256>>>(sl, c, o, n);
    else global_fixup<8><<<ctas, 256>>>(sl, c, o, n);
  }
}
"""
CPP = "void run(int variant, int s, int ctas, torch::Tensor slots, torch::Tensor counters, torch::Tensor out, torch::Tensor ns);"


def main():
    ext = load_inline("probe_dsmem", CPP, cuda_sources=CUDA, functions=["run"],
                      extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a", "-std=c++20"])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{'variant':8s} {'S':>2s} {'CTAs':>5s} {'median µs':>10s} {'max µs':>7s}")
    for s in (2, 4, 8):
        for ctas in (6 * s, sms // s * s):
            slots = torch.empty(ctas * 4096 * 4, device="cuda")
            counters = torch.zeros(ctas, dtype=torch.int32, device="cuda")
            out = torch.empty(ctas * 256, device="cuda")
            for variant, name in ((0, "dsmem"), (1, "global")):
                times = []
                for _ in range(20):
                    ns = torch.full((ctas,), -1, dtype=torch.int64, device="cuda")
                    ext.run(variant, s, ctas, slots, counters, out, ns)
                    torch.cuda.synchronize()
                    times += [v / 1e3 for v in ns.tolist() if v >= 0]
                times.sort()
                print(f"{name:8s} {s:2d} {ctas:5d} {times[len(times) // 2]:10.2f} {times[-1]:7.2f}", flush=True)


if __name__ == "__main__":
    main()
