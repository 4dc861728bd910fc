// CUDA paths of gemm (list API) and grouped_mm (offsets API) through the persistent grouped GEMM
// kernel (kernels/grouped_gemm_sm90.cuh). What the kernel does not cover (other GPUs, fp32/fp64,
// K-grouped offsets, operands TMA cannot address) takes the portable path: correct, slower.
#include "grouped_gemm_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <mutex>
#include <vector>

#include "../common/checks.h"
#include "../cpu/portable.h"
#include "../kernels/grouped_gemm_launch.h"
#include "../sched/group_order.h"
#include "device_info.h"
#include "tma_map.h"

namespace torch_grouped {
namespace {

using kernels::GroupedForm;
using kernels::GroupedGemmArgs;
using kernels::OutKind;

constexpr int kTileM = 128, kTileK = 64;
// Column panels of this many tiles (sched::GemmTiles::panel): a wave of 132 CTAs then reads about
// 16 A strips and 8 B strips, which stay in L2.
constexpr int kPanel = 8;

bool kernel_dtype(at::ScalarType t) { return t == at::kBFloat16 || t == at::kHalf; }

bool kernel_device(const at::Tensor& t) { return compute_capability_major(t.get_device()) == 9; }

kernels::InputKind input_kind(at::ScalarType t) {
  return t == at::kBFloat16 ? kernels::InputKind::BFloat16 : kernels::InputKind::Half;
}

OutKind out_kind(at::ScalarType t) {
  return t == at::kFloat ? OutKind::Float : (t == at::kBFloat16 ? OutKind::BFloat16 : OutKind::Half);
}

// 128x256 tiles when there are enough of them to fill every SM twice, 128x128 otherwise.
int choose_tile_n(int64_t row_tiles_128, int64_t n, int sms) {
  const int64_t tiles_256 = row_tiles_128 * sched::ceil_div(n, 256);
  return n > 128 && tiles_256 >= 2 * sms ? 256 : 128;
}

// A as [batch, rows, K] with unit stride along K; a copy only when the layout forces one.
// `keep` holds that copy until the launch (the allocator reuses it only in stream order).
bool map_a(const at::Tensor& a3, CUtensorMap& map, std::vector<at::Tensor>& keep) {
  if (encode_tma_map_3d(a3, kTileK, kTileM, map)) return true;
  keep.push_back(a3.contiguous());
  return encode_tma_map_3d(keep.back(), kTileK, kTileM, map);
}

// B as [batch, K, N]: K-major maps it as [batch, N, K] with tile_n-row boxes, N-major as
// [batch, K, N] with 64-column boxes.
bool map_b(const at::Tensor& b3, bool k_major, int tile_n, CUtensorMap& map, std::vector<at::Tensor>& keep) {
  if (k_major) {
    const at::Tensor t = b3.transpose(1, 2);
    if (encode_tma_map_3d(t, kTileK, tile_n, map)) return true;
    keep.push_back(t.contiguous());
    return encode_tma_map_3d(keep.back(), kTileK, tile_n, map);
  }
  if (encode_tma_map_3d(b3, 64, kTileK, map)) return true;
  keep.push_back(b3.contiguous());
  return encode_tma_map_3d(keep.back(), 64, kTileK, map);
}

// Unit stride along K (or a single row or column, which fits either way).
bool b_is_k_major(const at::Tensor& b3) {
  if (b3.size(2) > 1 && b3.stride(2) == 1) return false;
  return b3.size(1) <= 1 || b3.stride(1) == 1;
}

void launch(const GroupedGemmArgs& args, at::ScalarType input, int tile_n, bool b_k_major, int64_t tiles_bound,
            const at::Tensor& like) {
  const int sms = multiprocessor_count(like.get_device());
  const int grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(sms, tiles_bound)));
  const auto kernel = kernels::grouped_gemm_kernel(input_kind(input), tile_n, b_k_major);
  kernel.launch(args, grid, c10::cuda::getCurrentCUDAStream(like.get_device()).stream());
}

// Keeps pinned staging buffers alive while a CUDA graph that copies from them may replay.
void keep_for_graph(const at::Tensor& host) {
  static std::mutex lock;
  static std::vector<at::Tensor> kept;
  std::lock_guard<std::mutex> guard(lock);
  kept.push_back(host);
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

template <class T>
T* carve(uint8_t* base, size_t& offset, size_t count) {
  offset = (offset + 127) / 128 * 128;  // tensor maps need 64-byte alignment; keep 128
  T* p = reinterpret_cast<T*>(base + offset);
  offset += count * sizeof(T);
  return p;
}

}  // namespace

at::Tensor grouped_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                           std::optional<at::ScalarType> out_dtype) {
  const GroupedMmShape s = check_grouped_mm(a, b, offs, out_dtype);
  c10::cuda::CUDAGuard guard(a.device());
  if (!kernel_dtype(a.scalar_type()) || !kernel_device(a) || s.form == GroupedMmForm::A2dB2d) {
    return grouped_mm_portable(a, b, offs, out_dtype);
  }
  at::Tensor out = at::empty(s.out_sizes, a.options().dtype(s.out_dtype));
  const int64_t k = a.size(-1);
  if (out.numel() == 0) return out;
  if (k == 0 || s.groups == 0) return out.zero_();

  GroupedGemmArgs p{};
  const at::Tensor a3 = a.dim() == 2 ? a.unsqueeze(0) : a;
  const at::Tensor b3 = b.dim() == 2 ? b.unsqueeze(0) : b;
  p.k = k;
  p.groups = static_cast<int32_t>(s.groups);
  p.c = out.data_ptr();
  p.ldc = out.size(-1);
  p.out_kind = out_kind(s.out_dtype);
  // Upper bounds of the tiles of all groups (every ragged group adds at most one partial tile
  // row or column, the virtual tail group one more), for the tile choice and the grid.
  int64_t row_tiles, col_groups = 0;
  switch (s.form) {
    case GroupedMmForm::A2dB3d:
      p.form = GroupedForm::RaggedM, p.m = a.size(0), p.n = b.size(2), p.offs = offs->data_ptr<int32_t>();
      row_tiles = sched::ceil_div(p.m, kTileM) + s.groups + 1;
      break;
    case GroupedMmForm::A3dB2d:
      p.form = GroupedForm::RaggedN, p.m = a.size(1), p.n = b.size(1), p.offs = offs->data_ptr<int32_t>();
      row_tiles = sched::ceil_div(p.m, kTileM), col_groups = s.groups + 1;
      break;
    default:
      p.form = GroupedForm::Batched, p.m = a.size(1), p.n = b.size(2), p.c_batch_stride = p.m * p.n;
      row_tiles = sched::ceil_div(p.m, kTileM) * s.groups;
      break;
  }
  const int sms = multiprocessor_count(a.get_device());
  const int tile_n = choose_tile_n(row_tiles, p.n, sms);
  const int64_t tiles_bound = row_tiles * (sched::ceil_div(p.n, tile_n) + col_groups);
  const bool k_major = b_is_k_major(b3);
  std::vector<at::Tensor> keep;
  if (!map_a(a3, p.a_map, keep) || !map_b(b3, k_major, tile_n, p.b_map, keep)) {
    return grouped_mm_portable(a, b, offs, out_dtype);  // K or N not a multiple of 8 elements
  }
  p.tiles = sched::GemmTiles{{kTileM, tile_n}, kPanel};
  launch(p, a.scalar_type(), tile_n, k_major, tiles_bound, a);
  return out;
}

std::vector<at::Tensor> gemm_cuda(at::TensorList a, at::TensorList b, std::optional<at::ScalarType> out_dtype,
                                  const std::string& schedule, bool sort_by_k) {
  at::ScalarType od;
  const std::vector<GroupShape> shapes = check_gemm(a, b, out_dtype, od);
  const GemmSchedule mode = check_gemm_schedule(schedule);
  if (a.empty()) return {};
  c10::cuda::CUDAGuard guard(a[0].device());
  if (!kernel_dtype(a[0].scalar_type()) || !kernel_device(a[0])) {
    return gemm_portable(a, b, out_dtype, schedule, sort_by_k);
  }
  std::vector<at::Tensor> out;
  std::vector<int32_t> active;  // groups with output elements and K > 0
  std::vector<int64_t> ks;
  int k_major_votes = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    out.push_back(at::empty({shapes[i].m, shapes[i].n}, a[i].options().dtype(od)));
    if (out.back().numel() == 0) continue;
    if (shapes[i].k == 0) {
      out.back().zero_();
      continue;
    }
    active.push_back(static_cast<int32_t>(i));
    ks.push_back(shapes[i].k);
    k_major_votes += b_is_k_major(b[i].unsqueeze(0)) ? 1 : -1;
  }
  if (active.empty()) return out;
  // One kernel serves one B layout: the minority gets a copy in the majority's layout.
  const bool k_major = k_major_votes > 0;
  std::vector<int32_t> order(active.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int32_t>(j);
  if (sort_by_k) order = sched::order_by_k_descending(ks);

  const int sms = multiprocessor_count(a[0].get_device());
  int64_t row_tiles = 0, widest = 0;
  for (int32_t i : active) row_tiles += sched::ceil_div(shapes[i].m, kTileM), widest = std::max(widest, shapes[i].n);
  const int tile_n = choose_tile_n(row_tiles, widest, sms);
  const sched::GemmTiles tiles{{kTileM, tile_n}, kPanel};

  // Visiting order, sizes and the tile total.
  const int32_t groups = static_cast<int32_t>(active.size());
  std::vector<int64_t> ms(groups), ns(groups);
  for (int32_t j = 0; j < groups; ++j) ms[j] = shapes[active[order[j]]].m, ns[j] = shapes[active[order[j]]].n;
  const sched::GroupSizes sizes{ms.data(), ns.data(), groups};
  const int64_t total = sched::total_tiles(sizes, tiles);
  const int grid = static_cast<int>(std::min<int64_t>(sms, total));
  const bool host_lists = mode != GemmSchedule::Device;
  const int64_t stride = host_lists ? sched::ceil_div(total, grid) : 0;

  // One pinned staging buffer, one copy: tensor maps, sizes, per-CTA lists.
  const size_t bytes = 128 * 4 + groups * (2 * sizeof(CUtensorMap) + sizeof(kernels::ListGroup)) +
                       grid * stride * sizeof(sched::PrecomputedEntry);
  at::Tensor host = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  uint8_t* base = host.data_ptr<uint8_t>();
  size_t offset = 0;
  auto* a_maps = carve<CUtensorMap>(base, offset, groups);
  auto* b_maps = carve<CUtensorMap>(base, offset, groups);
  auto* list = carve<kernels::ListGroup>(base, offset, groups);
  auto* entries = carve<sched::PrecomputedEntry>(base, offset, grid * stride);
  std::vector<at::Tensor> keep;
  for (int32_t j = 0; j < groups; ++j) {
    const int32_t i = active[order[j]];
    if (!map_a(a[i].unsqueeze(0), a_maps[j], keep) || !map_b(b[i].unsqueeze(0), k_major, tile_n, b_maps[j], keep)) {
      return gemm_portable(a, b, out_dtype, schedule, sort_by_k);  // K or N not a multiple of 8
    }
    list[j] = kernels::ListGroup{shapes[i].m, shapes[i].n, shapes[i].k, out[i].data_ptr(), out[i].stride(0)};
  }
  if (host_lists) {
    for (int64_t cta = 0; cta < grid; ++cta) {
      sched::PrecomputedEntry* mine = entries + cta * stride;
      const int64_t count = sched::entries_for_cta(total, grid, cta);
      sched::fill_cta_schedule(sizes, tiles, grid, cta, mine);
      for (int64_t j = count; j < stride; ++j) mine[j] = sched::PrecomputedEntry{-1, 0};
    }
  }
  const at::Tensor dev = host.to(a[0].device(), /*non_blocking=*/true);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a[0].get_device()).stream();
  if (capturing(stream)) keep_for_graph(host);
  uint8_t* dbase = dev.data_ptr<uint8_t>();
  auto dev_ptr = [&](const void* p) { return dbase + (static_cast<const uint8_t*>(p) - base); };

  GroupedGemmArgs p{};
  p.form = GroupedForm::List;
  p.groups = groups;
  p.a_maps = reinterpret_cast<const CUtensorMap*>(dev_ptr(a_maps));
  p.b_maps = reinterpret_cast<const CUtensorMap*>(dev_ptr(b_maps));
  p.list = reinterpret_cast<const kernels::ListGroup*>(dev_ptr(list));
  p.precomputed = host_lists ? reinterpret_cast<const sched::PrecomputedEntry*>(dev_ptr(entries)) : nullptr;
  p.precomputed_stride = stride;
  p.out_kind = out_kind(od);
  p.tiles = tiles;
  launch(p, a[0].scalar_type(), tile_n, k_major, total, a[0]);
  return out;
}

}  // namespace torch_grouped
