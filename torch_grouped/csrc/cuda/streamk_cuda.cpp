// CUDA path of streamk_mm: the plan (sched/streamk_plan.h, `auto` through the calibrated model of
// sched/streamk_model.h) run by the persistent kernel in its Stream-K mode
// (kernels/grouped_gemm_sm90.cuh). What the kernel does not cover (other GPUs, fp64, fp32 where
// cuBLAS is faster (tf32_operands.h), operands TMA cannot address) goes to cuBLAS.
#include "streamk_cuda.h"

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../common/checks.h"
#include "../common/kernel_switch.h"
#include "../common/streamk_model_env.h"
#include "../common/streamk_plan_cache.h"
#include "../cpu/portable.h"
#include "../kernels/grouped_gemm_launch.h"
#include "../sched/calibration_source.h"
#include "../sched/rank2k_calibration.h"
#include "device_info.h"
#include "list_launch.h"
#include "operand_maps.h"
#include "staged_operands.h"
#include "streamk_reduce.h"
#include "tf32_operands.h"

namespace torch_grouped {
namespace {

using kernels::kStreamKTileM;

// A stand-in model: `m` with each MAC-loop iteration `factor` times as dear (a tile or kernel
// without a calibration of its own, priced from one that has one).
sched::StreamKModel iterations_scaled(sched::StreamKModel m, double factor) {
  m.c *= factor;
  return m;
}

// The models of this GPU (streamk_mm's fitted by benchmarks/calibrate_streamk.py, or those of a
// calibrated GPU of its kind: sched/calibration_source.h; syr2k's hand-kept), else the defaults;
// streamk_mm's each replaced by its environment variable (common/streamk_model_env.h; read once
// per device and process: cached_models).
StreamKModels models_for(int device) {
  cudaDeviceProp prop;
  C10_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  // (designated: StreamKModels has members in between, which keep their defaults here)
  StreamKModels fitted{.wide = sched::StreamKModel{}, .narrow = sched::kDefaultNarrowModel, .rows = sched::kDefaultRowsModel};
  fitted.wide_unaligned = fitted.wide, fitted.narrow_unaligned = fitted.narrow;
  const sched::StreamKCalibration* c =
      sched::streamk_calibration_for({prop.name, prop.major, prop.minor, prop.multiProcessorCount});
  if (c != nullptr) {
    fitted.wide = c->wide, fitted.narrow = c->narrow, fitted.rows = c->rows;
    fitted.wide_unaligned = c->wide_unaligned.value_or(c->wide);
    fitted.narrow_unaligned = c->narrow_unaligned.value_or(c->narrow);
  }
  // syr2k without an entry of its own: the wide model, an iteration of its 128 x 128 tiles half as dear.
  fitted.rank2k = iterations_scaled(fitted.wide, 0.5);
  // (syr2k's hand-kept entry serves its own GPU only: on an H200 the H100's picked the plain walk
  // and split-K where the default's split-K and Stream-K ran n = 1024 9-21% faster; session 34)
  if (const sched::StreamKModel* rank2k = sched::rank2k_calibrated_model(prop.name)) fitted.rank2k = *rank2k;
  // (a tile's variable replaces both of its models: a refit tried without a rebuild holds everywhere)
  const auto wide = [](const sched::StreamKModel& m) { return streamk_model_from_env(m); };
  const auto narrow = [](const sched::StreamKModel& m) { return streamk_model_from_env(m, kStreamKNarrowModelVariable); };
  // (designated: a positional list put fitted.rank2k into rows_wide when that member came after
  // rows, and the default model into the unaligned ones: 210 x 1035 x 3118 26 -> 47 µs; session 52)
  StreamKModels models{.wide = wide(fitted.wide),
                       .narrow = narrow(fitted.narrow),
                       .rows = streamk_model_from_env(fitted.rows, kStreamKRowsModelVariable),
                       .rank2k = fitted.rank2k,
                       .wide_unaligned = wide(fitted.wide_unaligned),
                       .narrow_unaligned = narrow(fitted.narrow_unaligned)};
  // The tall tile: calibrated, or given by its variable, or the stand-in (StreamKModels::tall).
  const char* tall_variable = std::getenv(kStreamKTallModelVariable);
  models.tall_weighed = (c != nullptr && c->tall.has_value()) || (tall_variable != nullptr && *tall_variable != '\0');
  models.tall = streamk_model_from_env(c != nullptr && c->tall.has_value() ? *c->tall : iterations_scaled(models.wide, 0.82),
                                       kStreamKTallModelVariable);
  // (stand-ins for the 64 x 64 tile's plans and the row-copy kernel's 128 x 256 tiles:
  // StreamKModels::small, rows_wide)
  models.small = iterations_scaled(models.narrow, 0.5);
  models.rows_wide = iterations_scaled(models.rows, 1.5);
  models.rows_wide_b4 = iterations_scaled(models.rows, 2.0);
  // The DRAM's peak rate, two transfers a memory clock over the bus: whether the pitched copies are
  // cheap (sched::row_copies_pay), and streamk_mm's floor on Stream-K plans that share no operand
  // blocks (sched::unshared_operand_mb), the latter only beside a calibration, whose constants are
  // microseconds (the defaults count MAC iterations). TORCH_GROUPED_STREAMK_DRAM_FLOOR=0 leaves the
  // floor out (A/B runs; read once per process, as the models are).
  int clock_khz = 0, bus_bits = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  const double bytes_per_us = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) * 1e-6;
  models.copies_cheap = bytes_per_us >= 4e6;
  if (c != nullptr && kernel_switch("TORCH_GROUPED_STREAMK_DRAM_FLOOR") != KernelSwitch::Never) {
    if (bytes_per_us > 0) {
      for (sched::StreamKModel* m : {&models.wide, &models.narrow, &models.rows, &models.rows_wide, &models.rows_wide_b4,
                                     &models.wide_unaligned,
                                     &models.narrow_unaligned, &models.tall, &models.small})
        m->dram_us_per_mb = (1 << 20) / bytes_per_us;
    }
  }
  return models;
}

}  // namespace

const StreamKModels& cached_models(int device) {
  static std::mutex mutex;
  static std::map<int, StreamKModels> models;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = models.find(device);
  if (it == models.end()) it = models.emplace(device, models_for(device)).first;
  return it->second;
}

namespace {

// The Stream-K kernel's tiles (sched::TileShape): 128 x 256, 128 x 128, 192 x 128 with three
// consumer warpgroups, or 64 x 64 with one, two CTAs an SM (kernels/grouped_gemm_launch.h).
constexpr sched::TileShape kNarrowTile{kStreamKTileM, 128};
constexpr sched::TileShape kSmallTile{kernels::kStreamKSmallTile, kernels::kStreamKSmallTile};

bool is_tile(const sched::TileShape& t, const sched::TileShape& u) { return t.m == u.m && t.n == u.n; }

// TORCH_GROUPED_STREAMK_TILE=128x128|128x256|192x128|64x64 forces streamk_mm's tile (the benchmarks'
// sweeps of each tile's plans); unset or empty: none.
std::optional<sched::TileShape> forced_streamk_tile() {
  const char* v = std::getenv("TORCH_GROUPED_STREAMK_TILE");
  if (v == nullptr || *v == '\0') return std::nullopt;
  const std::string name(v);
  TORCH_CHECK_VALUE(name == "128x128" || name == "128x256" || name == "192x128" || name == "64x64",
                    "TORCH_GROUPED_STREAMK_TILE must be 128x128, 128x256, 192x128 or 64x64; got '", name, "'");
  if (name == "64x64") return kSmallTile;
  return name == "192x128" ? sched::TileShape{192, 128} : sched::TileShape{kStreamKTileM, name == "128x128" ? 128 : 256};
}

// The operands streamk_mm reads by row copies (kernels/row_copy.cuh; see row_copies below), and
// the width of their pieces (4, 8 or 16 bytes; 0 for an operand TMA reads).
struct RowCopies {
  std::optional<kernels::RowSource> a, b;
  bool on() const { return a.has_value() || b.has_value(); }
  int a_width() const { return a ? int(a->width) : 0; }
  int b_width() const { return b ? int(b->width) : 0; }
};

// The tile for an m x n x k product on `grid` CTAs: 64 x 64 for the small problems
// (sched::small_tile_pays); else 128 x 128 when the output is at most 128 wide (half of every
// 256-wide tile would be padding), else the one whose best plan the model predicts fastest
// (sched::choose_streamk_tile; `in_place`: the models of shapes the TMA kernel reads and writes in
// place, see in_place_shape; with row copies the row-copy kernel's two tiles and their models), the
// same for every decomposition of the shape; or the one TORCH_GROUPED_STREAMK_TILE forces.
// `other_rows` false: the 128-row tiles only (the kernels that read A M-major).
sched::TileShape streamk_tile(int device, int64_t m, int64_t n, int64_t k, int64_t grid, const RowCopies& rows,
                              bool in_place, bool other_rows = true) {
  if (const std::optional<sched::TileShape> forced = forced_streamk_tile()) return *forced;
  if (other_rows && sched::small_tile_pays(m, n, k, grid)) return kSmallTile;
  if (n <= 128) return kNarrowTile;
  if (m == 0 || k == 0) return {kStreamKTileM, 256};  // nothing to run (streamk_mm returns before any plan); no plan to weigh
  const StreamKModels& models = cached_models(device);
  if (rows.on()) {
    const sched::StreamKTileOption options[] = {{{kStreamKTileM, 256}, models.rows_model(256, rows.a_width(), rows.b_width())},
                                                {kNarrowTile, models.rows}};
    return options[choose_streamk_tile_cached(options, 2, m, n, k, kTileK, grid, /*may_separate=*/true)].tile;
  }
  const sched::StreamKTileOption options[] = {{{kStreamKTileM, 256}, models.tile_model(kStreamKTileM, 256, in_place)},
                                              {kNarrowTile, models.tile_model(kStreamKTileM, 128, in_place)},
                                              {{192, 128}, models.tall}};
  // (the tall tile where this GPU's calibration has it, and for shapes read and written in place:
  // fitted on those only)
  const int count = models.tall_weighed && in_place && other_rows ? 3 : 2;
  return options[choose_streamk_tile_cached(options, count, m, n, k, kTileK, grid, /*may_separate=*/true)].tile;
}

// The operands the row-copy kernel reads in place (kernels/row_copy.cuh), when streamk_mm takes it:
// an operand TMA cannot address whose rows are contiguous and 4-byte aligned (an even K or N) is
// copied row by row into the kernel's stages instead of into a pitched buffer first, with 128 x 128
// tiles (or 128 x 256: streamk_tile), when sched::row_copies_pay says so for the shape and the
// pieces (an operand TMA cannot address whose rows are only 2-byte aligned still goes through a
// pitched copy, beside them). TORCH_GROUPED_ROW_COPIES=1 takes them wherever they can read the
// operands, =0 never (the benchmarks' A/B runs); a forced 192 x 128 tile
// (TORCH_GROUPED_STREAMK_TILE; the one tile without a row-copy kernel) copies.
RowCopies row_copies(const at::Tensor& a, const at::Tensor& b, bool k_major, int64_t grid) {
  const char* v = std::getenv("TORCH_GROUPED_ROW_COPIES");
  const std::string setting = v == nullptr ? "" : v;
  TORCH_CHECK_VALUE(setting.empty() || setting == "0" || setting == "1",
                    "TORCH_GROUPED_ROW_COPIES must be 0 or 1; got '", setting, "'");
  const std::optional<sched::TileShape> forced = forced_streamk_tile();
  if (setting == "0" || (forced && forced->m == 192)) return {};
  RowCopies r;
  const bool a_tma = StagedOperands::addressable(a), b_tma = StagedOperands::addressable(b, k_major);
  if (!a_tma) r.a = StagedOperands::row_source(a);
  if (!b_tma) r.b = StagedOperands::row_source(b, k_major);
  // An operand that can be read neither way (rows not contiguous, or only 2-byte aligned: an odd K
  // or N) goes through a pitched copy and TMA beside the other's row copies.
  if (!r.on()) return {};
  const bool pitched_beside = !(a_tma || r.a) || !(b_tma || r.b);
  if (setting.empty() && !sched::row_copies_pay(a.size(0), b.size(1), a.size(1), grid, r.a_width(), r.b_width(), pitched_beside,
                                                 cached_models(a.get_device()).copies_cheap))
    return {};
  return r;
}

// Whether the TMA kernel reads a and b and writes the m x n output where they lie: no pitched copy
// (nor row copies), the output's rows 16-byte aligned. Its costs differ off that path (a copy of
// the operands in front; the shifted staging of unaligned output rows, dearer per tile), so
// `auto` weighs such shapes with their own models (StreamKModels::tile_model). `a_m_major`: A is
// read M-major (reads_a_m_major, which has checked that TMA addresses it so).
bool in_place_shape(const at::Tensor& a, const at::Tensor& b, bool k_major, bool a_m_major) {
  return (a_m_major || StagedOperands::addressable(a)) && StagedOperands::addressable(b, k_major) &&
         (b.size(1) * int64_t(b.element_size())) % 16 == 0;
}

// Whether the kernel reads A M-major where it lies (kernels::streamk_a_m_major_kernel): an A whose
// unit stride is along M (a transposed view, such as streamk_mm's own backward passes for dB =
// Aᵀ·dY) that TMA addresses that way and not K-major, with B N-major and addressable as it lies,
// unless a 192-row tile is forced (128-row tiles only). Elsewhere such an A is staged K-major
// first (StagedOperands: the layout ops' transpose from 1 MB, 17.7 µs for 4096² bf16 on an H200,
// else the pitched copy). TORCH_GROUPED_STREAMK_A_M_MAJOR=0 always stages it (the benchmarks'
// A/B runs, tests); unset or 1 reads it in place wherever it can.
bool reads_a_m_major(const at::Tensor& a, const at::Tensor& b, bool b_k_major) {
  if (!on_our_kernel(kernel_switch("TORCH_GROUPED_STREAMK_A_M_MAJOR"), true)) return false;
  const std::optional<sched::TileShape> forced = forced_streamk_tile();
  return !b_k_major && !(forced && forced->m != kStreamKTileM) && !StagedOperands::addressable(a) &&
         StagedOperands::addressable(a, /*transposed=*/true) && StagedOperands::addressable(b);
}

// Whether the plan runs in 2 x 1 clusters where a clustered kernel exists (no row copies, no
// TF32): the plan's tiles are then 256-row pairs and its walkers the resident clusters (at most
// half the grid), each CTA computing its 128-row half, B multicast to both.
// sched::streamk_clusters_pay decides; TORCH_GROUPED_STREAMK_CLUSTER=1 or 0 forces them on or off
// (the benchmarks' A/B runs, tests).
bool streamk_clusters(bool in_place, int64_t tile_n, int64_t m, int64_t n) {
  return on_our_kernel(kernel_switch("TORCH_GROUPED_STREAMK_CLUSTER"), sched::streamk_clusters_pay(in_place, tile_n, m, n));
}

// One CTA per SM (`per_sm`: two for the 64 x 64 tile's kernel): a larger grid would only queue
// CTAs behind the first wave (capped).
int64_t persistent_grid(int device, int64_t grid, int per_sm = 1) {
  const int64_t resident = per_sm * int64_t{multiprocessor_count(device)};
  return grid > 0 ? std::min(grid, resident) : resident;
}

// The operands as the kernel reads them (their maps or row sources set in `p`), and what the tile,
// the plan and the choice of kernel need to know of them.
struct KernelOperands {
  bool addressable = true;  // false: beyond TMA's extents (cuBLAS instead)
  bool b_k_major = false;
  bool a_m_major = false;  // reads_a_m_major
  RowCopies rows;
  bool in_place = true;  // in_place_shape: the tile models of shapes read and written in place
  sched::TileShape tile = kNarrowTile;
  int64_t k = 0;         // the K the kernel runs
  int k_passes = 1;      // the passes over the operands in it (3xTF32: 3)
  int tile_k = kTileK;   // its K step
  // B as TMA reads it (none: by row copies): its map is encoded once the cluster is chosen (a
  // clustered CTA loads half of a K-major B tile: boxes of tile_n / 2 rows).
  std::optional<TmaOperand> b;
};

// bf16 / fp16, what streamk_mm decides of the operands before copying any: B's layout, whether A
// is read M-major, the row copies, whether the TMA kernel reads and writes in place, and the tile
// (the private ops that report the call's tile and walk decide through this too).
KernelOperands half_operand_shape(const at::Tensor& a, const at::Tensor& b, int device, int64_t grid) {
  const int64_t m = a.size(0), n = b.size(1), k = a.size(1);
  KernelOperands o;
  o.k = k;
  o.b_k_major = b_is_k_major(k, n, b.stride(0), b.stride(1));
  o.a_m_major = reads_a_m_major(a, b, o.b_k_major);
  if (!o.a_m_major) o.rows = row_copies(a, b, o.b_k_major, grid);  // (else both operands lie as TMA reads them)
  o.in_place = in_place_shape(a, b, o.b_k_major, o.a_m_major);
  o.tile = streamk_tile(device, m, n, k, grid, o.rows, o.in_place, /*other_rows=*/!o.a_m_major);
  return o;
}

// bf16 / fp16: copied only where TMA cannot address an operand, or read in place by row copies.
KernelOperands half_operands(const at::Tensor& a, const at::Tensor& b, int device, int64_t grid, cudaStream_t stream,
                             std::vector<at::Tensor>& keep, kernels::GroupedGemmArgs& p) {
  KernelOperands o = half_operand_shape(a, b, device, grid);
  p.a_rows = o.rows.a.value_or(kernels::RowSource{});  // (base nullptr: through TMA)
  p.b_rows = o.rows.b.value_or(kernels::RowSource{});
  StagedOperands operands;
  const int ia = o.rows.a ? -1 : operands.add(a, /*transposed=*/o.a_m_major);
  const int ib = o.rows.b ? -1 : operands.add(b, /*transposed=*/o.b_k_major);
  operands.copy(a.device(), stream, keep);
  o.addressable = (ia < 0 || operands[ia]) && (ib < 0 || operands[ib]);
  if (!o.addressable) return o;
  if (ia >= 0)
    p.a_map = o.a_m_major ? mn_major_map(*operands[ia], a.scalar_type()) : a_map(*operands[ia], o.tile.m, a.scalar_type());
  if (ib >= 0) o.b = operands[ib];
  return o;
}

// fp32 through TF32 WGMMA, which reads both operands K-major: A's rows and B's columns staged as
// rows by Tf32Operands (split into TF32 hi and lo parts unless torch allows TF32 matmuls; then
// copied only where TMA cannot address them, as B's columns always are unless B is K-major).
// 128 x 128 tiles, K steps of 32 (a TF32 step moves the bytes of a 16-bit one and costs about as
// much: half the MACs at half the rate, so the narrow tile's model holds).
KernelOperands tf32_operands(const at::Tensor& a, const at::Tensor& b, cudaStream_t stream,
                             std::vector<at::Tensor>& keep, kernels::GroupedGemmArgs& p) {
  Tf32Operands staged(tf32_mode());
  const int ia = staged.add(a), ib = staged.add(b.t());
  staged.copy(a.device(), stream, keep);
  KernelOperands o;
  o.b_k_major = true;
  o.k = staged.kernel_k(a.size(1));
  o.k_passes = staged.passes();
  o.tile_k = tile_k(at::kFloat);
  o.addressable = staged[ia].has_value() && staged[ib].has_value();
  if (!o.addressable) return o;
  p.a_map = a_map(*staged[ia], kStreamKTileM, at::kFloat);
  o.b = staged[ib];
  p.tf32_split = staged.split();
  return o;
}

// How a call's plan walks its tiles: in 2 x 1 clusters (streamk_clusters, where a clustered
// kernel exists and the operands are read neither by row copies nor A M-major: 128-row tiles) its
// tiles are 256-row pairs and its walkers the resident clusters within the grid; else the kernel's
// tiles, one walker per CTA (the 64 x 64 tile's kernel: two an SM, within the `grid` asked for).
struct StreamKWalk {
  int cluster = 1;      // CTAs per walker
  int64_t walkers = 1;  // the plan's grid
  int tile_m = kStreamKTileM;  // a CTA's tile rows
  int64_t plan_tile_m() const { return int64_t{tile_m} * cluster; }
};

StreamKWalk streamk_walk(kernels::InputKind input, const KernelOperands& o, int64_t m, int64_t n, int64_t g, int device,
                         int64_t grid) {
  const bool wanted = streamk_clusters(o.in_place, o.tile.n, m, n);  // (first: a bad setting is an error on every call)
  if (is_tile(o.tile, kSmallTile)) return {1, persistent_grid(device, grid, 2), o.tile.m};
  if (!(wanted && g >= 2 && !o.rows.on() && !o.a_m_major && o.tile.m == kStreamKTileM &&
        kernels::streamk_cluster_kernel_exists(input, o.tile.n)))
    return {1, g, o.tile.m};
  return {2, std::min<int64_t>(g, kernels::streamk_cluster_resident(input, o.b_k_major, o.tile.n, device)) / 2, o.tile.m};
}

}  // namespace

// The fixup's tile counters for a launch on `stream`. The kernel leaves every counter it touches
// at zero again, so each stream keeps one zeroed buffer for all its launches; a larger need adds
// a larger buffer and keeps the old ones (a CUDA graph may hold their addresses). Buffers are
// small: one int per tile and per workspace slot (StreamKPlan::fixup_counters), times the
// consumer warpgroups. A capture that finds no buffer takes a fresh zeroed one from the graph's
// pool: an eagerly cached one would only be zeroed when the graph replays. (Streams on one
// device never share counters: their launches may run concurrently.)
int32_t* tile_counters(const at::Device& device, cudaStream_t stream, int64_t count, std::vector<at::Tensor>& keep) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, std::vector<at::Tensor>> buffers;
  const auto options = at::TensorOptions().dtype(at::kInt).device(device);
  cudaStreamCaptureStatus capture;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  const std::lock_guard<std::mutex> lock(mutex);
  auto& held = buffers[{device.index(), stream}];
  if (!held.empty() && held.back().numel() >= count) return held.back().data_ptr<int32_t>();
  if (capture != cudaStreamCaptureStatusNone) {
    keep.push_back(at::zeros({count}, options));
    return keep.back().data_ptr<int32_t>();
  }
  held.push_back(at::zeros({std::max<int64_t>(count, 4096)}, options));
  return held.back().data_ptr<int32_t>();
}

at::Tensor streamk_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                           int64_t splits, int64_t grid) {
  bool is_auto = false;
  const sched::Decomposition d = check_streamk(a, b, decomposition, splits, grid, is_auto);
  const c10::cuda::CUDAGuard guard(a.device());
  const bool tf32 = a.scalar_type() == at::kFloat && fp32_streamk_on_kernel(a.size(0), b.size(1));
  if (!(kernel_dtype(a.scalar_type()) || tf32) || !kernel_device(a)) return matmul_accumulate(a, b, a.scalar_type());
  ensure_context(a.get_device());
  at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
  if (out.numel() == 0) return out;
  if (a.size(1) == 0) return out.zero_();
  streamk_mm_into(a, b, out, d, is_auto, splits, grid, tf32);
  return out;
}

void streamk_mm_into(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, sched::Decomposition d,
                     bool is_auto, int64_t splits, int64_t grid, bool tf32) {
  const int64_t m = a.size(0), n = b.size(1), k = a.size(1);
  TORCH_INTERNAL_ASSERT(out.size(0) == m && out.size(1) == n && out.stride(1) == 1 && m > 0 && n > 0 && k > 0);
  kernels::GroupedGemmArgs p{};
  std::vector<at::Tensor> keep;
  const int device = a.get_device();
  const int64_t g = persistent_grid(device, grid);
  const StreamKModels& models = cached_models(device);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device).stream();
  const KernelOperands o = tf32 ? tf32_operands(a, b, stream, keep, p) : half_operands(a, b, device, g, stream, keep, p);
  if (!o.addressable) {  // beyond TMA's extents
    out.copy_(matmul_accumulate(a, b, out.scalar_type()));
    return;
  }
  const int tile_n = o.tile.n;
  // 3xTF32's K loop is three passes over the operands: `auto` chooses as for one pass (see
  // sched::replan_for_k), then that plan runs the whole loop.
  const int64_t passes = o.k_passes, pass_k = o.k / passes;
  // In clusters the plan deals 256-row pair tiles to the clusters (streamk_clusters), as many as
  // run at once within the grid; a grid of one CTA runs without.
  const kernels::InputKind input = input_kind(a.scalar_type());
  const StreamKWalk walk = streamk_walk(input, o, m, n, g, device, grid);
  const int cluster = walk.cluster;
  const int64_t walkers = walk.walkers, plan_tile_m = walk.plan_tile_m();
  if (o.b) p.b_map = b_map(*o.b, o.b_k_major, tile_n / cluster, tf32 ? at::kFloat : a.scalar_type());
  // (the row-copy kernel's iterations cost more than the TMA kernels': its own models)
  const sched::StreamKModel& model = o.rows.on() && o.tile.m == kStreamKTileM
                                         ? models.rows_model(tile_n, o.rows.a_width(), o.rows.b_width())
                                         : models.tile_model(o.tile.m, tile_n, o.in_place);
  p.streamk = resolve_streamk_plan_cached(model, d, is_auto, splits, m, n, pass_k, plan_tile_m, tile_n, o.tile_k, walkers,
                                          /*may_separate=*/true);
  if (passes > 1)
    p.streamk = sched::replan_for_k(p.streamk, m, n, o.k, plan_tile_m, tile_n, o.tile_k, walkers,
                                    /*may_separate=*/true);
  p.form = kernels::GroupedForm::Batched;
  p.m = m, p.n = n, p.k = o.k;
  p.groups = 1;
  p.c = out.data_ptr();
  p.ldc = out.stride(0);
  p.c_batch_stride = m * out.stride(0);
  p.out_kind = out_kind(out.scalar_type());
  // The epilogue through TMA stores where the output's rows are 16-byte aligned (128 x 256 tiles):
  // the stores drain during the next tile (16384² x 256: 370 -> 314 µs, H100, session 8).
  // (no clustered variant with TMA stores, nor one that reads A M-major or by row copies)
  std::optional<CUtensorMap> c_map = tile_n == 256 && o.tile.m == kStreamKTileM && cluster == 1 && !o.a_m_major && !o.rows.on()
                                         ? output_map(out, /*by_default=*/true)
                                         : std::nullopt;
  if (c_map) p.c_map = *c_map;

  // A counter per consumer warpgroup of a tile (64 rows each); in clusters a slot holds a pair
  // tile, and a tile's counters serve both CTAs' warpgroups.
  const int64_t slots = p.streamk.workspace_slots();
  at::Tensor workspace;
  if (slots > 0) {
    workspace = at::empty({slots, plan_tile_m * tile_n}, a.options().dtype(at::kFloat));
    p.workspace = workspace.data_ptr<float>();
    if (!p.streamk.separate_fixup)
      p.counters = tile_counters(a.device(), stream, p.streamk.fixup_counters() * (o.tile.m / 64) * cluster, keep);
  }
  const kernels::GroupedGemmLauncher launch =
      o.a_m_major ? kernels::streamk_a_m_major_kernel(input, tile_n)
                  : kernels::streamk_kernel(input, o.b_k_major, o.tile.m, tile_n, c_map.has_value(), o.rows.on(), cluster);
  launch(p, static_cast<int>(p.streamk.grid * cluster), stream);
  if (p.streamk.separate_fixup)
    launch_streamk_reduce(p.streamk, p.workspace, static_cast<int>(plan_tile_m), tile_n,
                          {out.data_ptr(), m, n, out.stride(0), p.out_kind}, stream);
}

std::vector<int64_t> streamk_tile_cuda(const at::Tensor& a, const at::Tensor& b, int64_t grid) {
  bool is_auto = false;
  check_streamk(a, b, "auto", 0, grid, is_auto);
  const int device = a.get_device();
  const int64_t g = persistent_grid(device, grid);
  if (a.scalar_type() == at::kFloat && fp32_streamk_on_kernel(a.size(0), b.size(1))) return {kStreamKTileM, 128, tile_k(at::kFloat)};
  if (!kernel_dtype(a.scalar_type())) {  // cuBLAS runs: the answer of a 16-bit call read in place
    const sched::TileShape tile = streamk_tile(device, a.size(0), b.size(1), a.size(1), g, RowCopies{}, true);
    return {tile.m, tile.n, kTileK};
  }
  const sched::TileShape tile = half_operand_shape(a, b, device, g).tile;
  return {tile.m, tile.n, kTileK};
}

std::vector<int64_t> streamk_walk_cuda(const at::Tensor& a, const at::Tensor& b, int64_t grid) {
  bool is_auto = false;
  check_streamk(a, b, "auto", 0, grid, is_auto);
  const int device = a.get_device();
  const int64_t g = persistent_grid(device, grid);
  const int64_t m = a.size(0), n = b.size(1);
  TORCH_CHECK_VALUE(kernel_dtype(a.scalar_type()) && kernel_device(a),
                    "_streamk_walk: our kernel's walk is reported for bf16 and fp16 on Hopper only; got ",
                    a.scalar_type(), " on ", a.device());
  const StreamKWalk walk = streamk_walk(input_kind(a.scalar_type()), half_operand_shape(a, b, device, g), m, n, g, device, grid);
  return {walk.plan_tile_m(), walk.walkers};
}

}  // namespace torch_grouped
