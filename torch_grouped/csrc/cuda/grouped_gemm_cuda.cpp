// CUDA paths of gemm (list API) and grouped_mm (offsets API) through the persistent grouped GEMM
// kernel (kernels/grouped_gemm_sm90.cuh). What the kernel does not cover (other GPUs, fp32/fp64,
// K-grouped offsets, operands TMA cannot address) takes the portable path: correct, slower.
#include "grouped_gemm_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <vector>

#include "../common/checks.h"
#include "../cpu/portable.h"
#include "../kernels/grouped_gemm_launch.h"
#include "../sched/group_order.h"
#include "device_info.h"
#include "list_maps.h"
#include "tma_map.h"

namespace torch_grouped {
namespace {

using kernels::GroupedForm;
using kernels::GroupedGemmArgs;
using kernels::OutKind;

constexpr int kTileK = 64;
// Column panels of this many tiles (sched::GemmTiles::panel): a wave of 132 CTAs then reads about
// 16 A strips and 8 B strips, which stay in L2.
constexpr int kPanel = 8;

// Encoding a tensor map needs the device's context current on this thread. CUDAGuard skips
// cudaSetDevice when the device already matches, which on a fresh thread (autograd's backward
// workers) leaves no context: cuTensorMapEncodeTiled then fails with CUDA_ERROR_INVALID_CONTEXT.
void ensure_context(int device) { C10_CUDA_CHECK(cudaSetDevice(device)); }

bool kernel_dtype(at::ScalarType t) { return t == at::kBFloat16 || t == at::kHalf; }

bool kernel_device(const at::Tensor& t) { return compute_capability_major(t.get_device()) == 9; }

kernels::InputKind input_kind(at::ScalarType t) {
  return t == at::kBFloat16 ? kernels::InputKind::BFloat16 : kernels::InputKind::Half;
}

OutKind out_kind(at::ScalarType t) {
  return t == at::kFloat ? OutKind::Float : (t == at::kBFloat16 ? OutKind::BFloat16 : OutKind::Half);
}

struct Tile {
  int m, n;
};
constexpr Tile kTiles[] = {{128, 256}, {128, 128}, {64, 128}};

// TORCH_GROUPED_TILE=MxN forces a tile (for the benchmarks' sweeps); unset or empty: the model.
std::optional<Tile> forced_tile() {
  const char* v = std::getenv("TORCH_GROUPED_TILE");
  if (v == nullptr || *v == 0) return std::nullopt;
  for (const Tile& t : kTiles) {
    if (std::to_string(t.m) + "x" + std::to_string(t.n) == v) return t;
  }
  TORCH_CHECK_VALUE(false, "TORCH_GROUPED_TILE must be one of 128x256, 128x128, 64x128; got '", v, "'");
  return std::nullopt;
}

// The tile with the least modelled time: waves of the persistent grid times the time of one tile
// (its area over the tile's relative WGMMA efficiency; two 64-row CTAs share an SM, so theirs
// counts twice). `tiles(tile)` estimates the tile count of the call.
template <class TileCountFn>
Tile choose_tile(int sms, TileCountFn tiles) {
  if (auto t = forced_tile()) return *t;
  Tile best = kTiles[0];
  double best_cost = 0;
  for (const Tile& t : kTiles) {
    const int per_sm = t.m == 64 ? 2 : 1;
    const double efficiency = t.n == 256 ? 1.0 : (t.m == 128 ? 0.92 : 0.85);
    const double waves = static_cast<double>(sched::ceil_div(tiles(t), int64_t(sms) * per_sm));
    const double cost = waves * per_sm * t.m * t.n / efficiency;
    if (best_cost == 0 || cost < best_cost) best = t, best_cost = cost;
  }
  return best;
}

// A as [batch, rows, K] with unit stride along K; a copy only when the layout forces one.
// `keep` holds that copy until the launch (the allocator reuses it only in stream order).
std::optional<TmaOperand> operand_a(const at::Tensor& a3, std::vector<at::Tensor>& keep) {
  if (auto op = tma_operand(a3)) return op;
  keep.push_back(a3.contiguous());
  return tma_operand(keep.back());
}

// B as [batch, K, N]: K-major as the [batch, N, K] view, N-major as is.
std::optional<TmaOperand> operand_b(const at::Tensor& b3, bool k_major, std::vector<at::Tensor>& keep) {
  const at::Tensor t = k_major ? b3.transpose(1, 2) : b3;
  if (auto op = tma_operand(t)) return op;
  keep.push_back(t.contiguous());
  return tma_operand(keep.back());
}

// A 2-D list operand as [1, outer, inner]: [rows, cols] with unit column stride, or its
// transpose when `transposed` (then the unit stride must be along rows).
std::optional<TmaOperand> list_operand(const at::Tensor& t, bool transposed, std::vector<at::Tensor>& keep) {
  const int d = transposed ? 1 : 0;
  const int64_t sizes[3] = {1, t.size(d), t.size(1 - d)};
  const int64_t strides[3] = {t.numel(), t.stride(d), t.stride(1 - d)};
  if (auto op = tma_operand(t.data_ptr(), t.scalar_type(), sizes, strides)) return op;
  keep.push_back(transposed ? t.t().contiguous() : t.contiguous());
  return tma_operand(keep.back().unsqueeze(0));
}

// The maps of the non-list forms: A boxes of 64 x tile_m; B boxes of 64 x tile_n (K-major) or
// 64 columns x 64 rows of K (N-major).
bool map_a(const at::Tensor& a3, int tile_m, at::ScalarType dtype, CUtensorMap& map, std::vector<at::Tensor>& keep) {
  const auto op = operand_a(a3, keep);
  if (op) map = encode_tma_map(*op, dtype, kTileK, tile_m);
  return op.has_value();
}

bool map_b(const at::Tensor& b3, bool k_major, int tile_n, at::ScalarType dtype, CUtensorMap& map,
           std::vector<at::Tensor>& keep) {
  const auto op = operand_b(b3, k_major, keep);
  if (op) map = k_major ? encode_tma_map(*op, dtype, kTileK, tile_n) : encode_tma_map(*op, dtype, 64, kTileK);
  return op.has_value();
}

// Unit stride along K (or a single row or column, which fits either way).
bool b_is_k_major(const at::Tensor& b3) {
  if (b3.size(2) > 1 && b3.stride(2) == 1) return false;
  return b3.size(1) <= 1 || b3.stride(1) == 1;
}

void launch(const GroupedGemmArgs& args, at::ScalarType input, Tile tile, bool b_k_major, int grid,
            const at::Tensor& like) {
  const auto kernel = kernels::grouped_gemm_kernel(input_kind(input), tile.m, tile.n, b_k_major);
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
  ensure_context(a.get_device());
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
  // Tiles of all groups: every ragged group adds on average half a partial tile row (column),
  // at most one; the virtual tail group one more.
  auto tiles = [&](Tile t, bool bound) {
    const int64_t partial = bound ? s.groups + 1 : s.groups / 2 + 1;
    switch (s.form) {
      case GroupedMmForm::A2dB3d: return (sched::ceil_div(a.size(0), t.m) + partial) * sched::ceil_div(b.size(2), t.n);
      case GroupedMmForm::A3dB2d: return sched::ceil_div(a.size(1), t.m) * (sched::ceil_div(b.size(1), t.n) + partial);
      default: return sched::ceil_div(a.size(1), t.m) * sched::ceil_div(b.size(2), t.n) * s.groups;
    }
  };
  switch (s.form) {
    case GroupedMmForm::A2dB3d:
      p.form = GroupedForm::RaggedM, p.m = a.size(0), p.n = b.size(2), p.offs = offs->data_ptr<int32_t>();
      break;
    case GroupedMmForm::A3dB2d:
      p.form = GroupedForm::RaggedN, p.m = a.size(1), p.n = b.size(1), p.offs = offs->data_ptr<int32_t>();
      break;
    default:
      p.form = GroupedForm::Batched, p.m = a.size(1), p.n = b.size(2), p.c_batch_stride = p.m * p.n;
      break;
  }
  const int sms = multiprocessor_count(a.get_device());
  const Tile tile = choose_tile(sms, [&](Tile t) { return tiles(t, false); });
  const int grid = static_cast<int>(std::min<int64_t>(int64_t(sms) * (tile.m == 64 ? 2 : 1), tiles(tile, true)));
  const bool k_major = b_is_k_major(b3);
  std::vector<at::Tensor> keep;
  if (!map_a(a3, tile.m, a.scalar_type(), p.a_map, keep) || !map_b(b3, k_major, tile.n, a.scalar_type(), p.b_map, keep)) {
    return grouped_mm_portable(a, b, offs, out_dtype);  // K or N not a multiple of 8 elements
  }
  p.tiles = sched::GemmTiles{{tile.m, tile.n}, kPanel};
  launch(p, a.scalar_type(), tile, k_major, grid, a);
  return out;
}

std::vector<at::Tensor> gemm_cuda(at::TensorList a, at::TensorList b, std::optional<at::ScalarType> out_dtype,
                                  const std::string& schedule, bool sort_by_k) {
  at::ScalarType od;
  const std::vector<GroupShape> shapes = check_gemm(a, b, out_dtype, od);
  const GemmSchedule mode = check_gemm_schedule(schedule);
  if (a.empty()) return {};
  c10::cuda::CUDAGuard guard(a[0].device());
  ensure_context(a[0].get_device());
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
    k_major_votes += b[i].size(1) > 1 && b[i].stride(1) == 1 ? -1 : 1;
  }
  if (active.empty()) return out;
  // One kernel serves one B layout: the minority gets a copy in the majority's layout.
  const bool k_major = k_major_votes > 0;
  std::vector<int32_t> order(active.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int32_t>(j);
  if (sort_by_k) order = sched::order_by_k_descending(ks);

  const int sms = multiprocessor_count(a[0].get_device());
  const Tile tile = choose_tile(sms, [&](Tile t) {
    int64_t count = 0;
    for (int32_t i : active) count += sched::ceil_div(shapes[i].m, t.m) * sched::ceil_div(shapes[i].n, t.n);
    return count;
  });
  const sched::GemmTiles tiles{{tile.m, tile.n}, kPanel};

  // Visiting order, sizes and the tile total.
  const int32_t groups = static_cast<int32_t>(active.size());
  std::vector<int64_t> ms(groups), ns(groups);
  for (int32_t j = 0; j < groups; ++j) ms[j] = shapes[active[order[j]]].m, ns[j] = shapes[active[order[j]]].n;
  const sched::GroupSizes sizes{ms.data(), ns.data(), groups};
  const int64_t total = sched::total_tiles(sizes, tiles);
  const int grid = static_cast<int>(std::min<int64_t>(int64_t(sms) * (tile.m == 64 ? 2 : 1), total));
  const bool host_lists = mode != GemmSchedule::Device;
  const int64_t stride = host_lists ? sched::ceil_div(total, grid) : 0;

  // Operands as TMA sees them (a copy where the layout forces one), from raw sizes and strides.
  std::vector<at::Tensor> keep;
  std::vector<TmaOperand> a_ops(groups), b_ops(groups);
  for (int32_t j = 0; j < groups; ++j) {
    const int32_t i = active[order[j]];
    auto a_op = list_operand(a[i], false, keep);
    auto b_op = list_operand(b[i], k_major, keep);
    if (!a_op || !b_op) return gemm_portable(a, b, out_dtype, schedule, sort_by_k);  // K or N not a multiple of 8
    a_ops[j] = *a_op, b_ops[j] = *b_op;
  }
  // One pinned staging buffer and one copy: the problem table and the per-CTA lists. The tensor
  // maps are built on the device from two templates.
  const size_t upload = 128 + groups * sizeof(kernels::ListGroup) + grid * stride * sizeof(sched::PrecomputedEntry);
  at::Tensor host = at::empty({static_cast<int64_t>(upload + 128)}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  uint8_t* base = host.data_ptr<uint8_t>();
  size_t offset = 0;
  auto* list = carve<kernels::ListGroup>(base, offset, groups);
  auto* entries = carve<sched::PrecomputedEntry>(base, offset, grid * stride);
  const size_t maps_offset = (offset + 127) / 128 * 128;
  for (int32_t j = 0; j < groups; ++j) {
    const int32_t i = active[order[j]];
    list[j] = kernels::ListGroup{shapes[i].m, shapes[i].n, shapes[i].k, out[i].data_ptr(), out[i].stride(0),
                                 a_ops[j].base, a_ops[j].outer_stride, b_ops[j].base, b_ops[j].outer_stride};
  }
  if (host_lists) {
    for (int64_t cta = 0; cta < grid; ++cta) {
      sched::PrecomputedEntry* mine = entries + cta * stride;
      const int64_t count = sched::entries_for_cta(total, grid, cta);
      sched::fill_cta_schedule(sizes, tiles, grid, cta, mine);
      for (int64_t j = count; j < stride; ++j) mine[j] = sched::PrecomputedEntry{-1, 0};
    }
  }
  const at::Tensor dev = at::empty({static_cast<int64_t>(maps_offset + 2 * groups * sizeof(CUtensorMap))},
                                   host.options().pinned_memory(false).device(a[0].device()));
  dev.narrow(0, 0, static_cast<int64_t>(offset)).copy_(host.narrow(0, 0, static_cast<int64_t>(offset)), /*non_blocking=*/true);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a[0].get_device()).stream();
  if (capturing(stream)) keep_for_graph(host);
  uint8_t* dbase = dev.data_ptr<uint8_t>();
  auto dev_ptr = [&](const void* p) { return dbase + (static_cast<const uint8_t*>(p) - base); };

  ListMapsArgs maps{};
  maps.a_template = encode_tma_map(a_ops[0], a[0].scalar_type(), kTileK, tile.m);
  maps.b_template = k_major ? encode_tma_map(b_ops[0], a[0].scalar_type(), kTileK, tile.n)
                            : encode_tma_map(b_ops[0], a[0].scalar_type(), 64, kTileK);
  maps.list = reinterpret_cast<const kernels::ListGroup*>(dev_ptr(list));
  maps.a_maps = reinterpret_cast<CUtensorMap*>(dbase + maps_offset);
  maps.b_maps = maps.a_maps + groups;
  maps.groups = groups;
  maps.element_size = static_cast<int32_t>(a[0].element_size());
  maps.b_k_major = k_major;
  build_list_tensor_maps(maps, stream);

  GroupedGemmArgs p{};
  p.form = GroupedForm::List;
  p.groups = groups;
  p.a_maps = maps.a_maps;
  p.b_maps = maps.b_maps;
  p.list = reinterpret_cast<const kernels::ListGroup*>(dev_ptr(list));
  p.precomputed = host_lists ? reinterpret_cast<const sched::PrecomputedEntry*>(dev_ptr(entries)) : nullptr;
  p.precomputed_stride = stride;
  p.out_kind = out_kind(od);
  p.tiles = tiles;
  launch(p, a[0].scalar_type(), tile, k_major, grid, a[0]);
  return out;
}

}  // namespace torch_grouped
