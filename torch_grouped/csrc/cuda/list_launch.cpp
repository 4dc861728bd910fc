#include "list_launch.h"

#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <utility>

#include "device_info.h"
#include "list_maps.h"
#include "operand_maps.h"
#include "pinned_upload.h"

namespace torch_grouped {
void ensure_context(int device) { C10_CUDA_CHECK(cudaSetDevice(device)); }

bool kernel_dtype(at::ScalarType t) { return t == at::kBFloat16 || t == at::kHalf; }

bool kernel_device(const at::Tensor& t) { return compute_capability_major(t.get_device()) == 9; }

kernels::InputKind input_kind(at::ScalarType t) {
  if (t == at::kFloat) return kernels::InputKind::TF32;
  return t == at::kBFloat16 ? kernels::InputKind::BFloat16 : kernels::InputKind::Half;
}

at::ScalarType out_dtype(kernels::OutKind k) {
  using kernels::OutKind;
  if (k == OutKind::Double) return at::kDouble;
  return k == OutKind::Float ? at::kFloat : (k == OutKind::BFloat16 ? at::kBFloat16 : at::kHalf);
}

kernels::OutKind out_kind(at::ScalarType t) {
  using kernels::OutKind;
  if (t == at::kDouble) return OutKind::Double;
  return t == at::kFloat ? OutKind::Float : (t == at::kBFloat16 ? OutKind::BFloat16 : OutKind::Half);
}

namespace {

// Calls `f` with the smallest inline upload of `Sizes` that holds `bytes`; false if none does. The
// uploads are not on the stack (up to 28 KB) and not allocated per call: the launch copies its
// parameters when it is made, so the thread's buffer is free again once `f` returns.
template <size_t Size, size_t... Larger, class F>
bool with_inline_upload(size_t bytes, F&& f, InlineUploadSizes<Size, Larger...>) {
  if (bytes <= Size) {
    static thread_local InlineUpload<Size> upload;
    f(upload);
    return true;
  }
  if constexpr (sizeof...(Larger) > 0) return with_inline_upload(bytes, f, InlineUploadSizes<Larger...>{});
  return false;
}

}  // namespace

int64_t resident_walkers(const kernels::GroupedGemmKernel& kernel, int device) {
  return kernel.resident(device) / kernel.cluster_m;
}

int64_t persistent_walkers(const kernels::GroupedGemmKernel& kernel, int device, int64_t total) {
  return std::max<int64_t>(1, std::min<int64_t>(resident_walkers(kernel, device), total));
}

template <class Tiles>
void launch_list(const std::vector<ListProblem>& problems, Tiles tiles, const ListLaunch& how,
                 kernels::GroupedGemmArgs p, const at::Device& device) {
  const int32_t groups = static_cast<int32_t>(problems.size());
  std::vector<int64_t> ms(groups), ns(groups);
  for (int32_t j = 0; j < groups; ++j) ms[j] = problems[j].group.m, ns[j] = problems[j].group.n;
  const sched::GroupSizes sizes{ms.data(), ns.data(), groups};
  const int64_t total = sched::total_tiles(sizes, tiles);
  // The persistent grid: every resident CTA, or one per tile if fewer. Its walkers (the CTAs, or
  // with clusters the clusters) are dealt the tiles of `tiles` (with clusters, pair tiles).
  const int64_t walkers = persistent_walkers(how.kernel, device.index(), total);
  const int grid = static_cast<int>(walkers * how.kernel.cluster_m);
  const int64_t stride = how.host_lists ? sched::ceil_div(total, walkers) : 0;

  // The problem table at offset 0 and the per-CTA lists after it, then (on the device only) the
  // tensor maps, 128-byte aligned.
  const size_t entries_at = (groups * sizeof(kernels::ListGroup) + 127) / 128 * 128;
  const size_t used = entries_at + walkers * stride * sizeof(sched::PrecomputedEntry);
  const size_t maps_offset = (used + 127) / 128 * 128;
  auto fill = [&](uint8_t* base) {
    auto* list = reinterpret_cast<kernels::ListGroup*>(base);
    for (int32_t j = 0; j < groups; ++j) list[j] = problems[j].group;
    if (how.host_lists)
      sched::fill_all_cta_schedules(sizes, tiles, walkers, stride, reinterpret_cast<sched::PrecomputedEntry*>(base + entries_at));
  };
  const int64_t maps_per_group = how.kernel.tma_store ? 3 : 2;  // A, B and (TMA stores) the output
  const at::Tensor dev = at::detail::empty_cuda(
      {static_cast<int64_t>(maps_offset + maps_per_group * groups * sizeof(CUtensorMap))}, at::kByte, device, std::nullopt);
  uint8_t* dbase = dev.data_ptr<uint8_t>();
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device.index());
  const cudaStream_t stream = current.stream();

  // The tensor maps: two templates encoded here, patched per group on the device.
  ListMapsArgs maps{};
  maps.a_template =
      how.a_m_major ? mn_major_map(problems[0].a, how.dtype) : a_map(problems[0].a, how.kernel.a_box_m(), how.dtype);
  maps.b_template = b_map(problems[0].b, how.b_k_major, how.kernel.b_box_n(), how.dtype);
  maps.a_maps = reinterpret_cast<CUtensorMap*>(dbase + maps_offset);
  maps.b_maps = maps.a_maps + groups;
  if (how.kernel.tma_store) {
    const kernels::ListGroup& first = problems[0].group;
    const at::ScalarType out = out_dtype(p.out_kind);
    const int64_t sizes[3] = {1, first.m, first.n}, strides[3] = {first.m * first.ldc, first.ldc, 1};
    const std::optional<TmaOperand> c = tma_operand(first.c, out, sizes, strides);
    TORCH_INTERNAL_ASSERT(c.has_value(), "list launch: the TMA-store kernel got an output TMA cannot address");
    maps.c_template = output_box_map(*c, out);
    maps.c_maps = maps.b_maps + groups;
    maps.out_element_size = static_cast<int32_t>(at::elementSize(out));
  }
  maps.groups = groups;
  maps.element_size = static_cast<int32_t>(at::elementSize(how.dtype));
  maps.b_k_major = how.b_k_major;
  maps.a_m_major = how.a_m_major;
  auto inline_upload = [&](auto& upload) {
    fill(upload.data);
    upload.bytes = static_cast<uint32_t>((used + 15) / 16 * 16);
    upload_and_build_list_tensor_maps(maps, upload, dbase, stream);
  };
  if (!with_inline_upload(used, inline_upload, ListUploadSizes{})) {
    at::DataPtr host = pinned_block(used);
    fill(static_cast<uint8_t*>(host.get()));
    upload_pinned(std::move(host), dbase, used, current);
    maps.list = reinterpret_cast<const kernels::ListGroup*>(dbase);
    build_list_tensor_maps(maps, stream);
  }

  p.form = kernels::GroupedForm::List;
  p.groups = groups;
  p.a_maps = maps.a_maps;
  p.b_maps = maps.b_maps;
  p.c_maps = maps.c_maps;
  p.list = reinterpret_cast<const kernels::ListGroup*>(dbase);
  p.precomputed = how.host_lists ? reinterpret_cast<const sched::PrecomputedEntry*>(dbase + entries_at) : nullptr;
  p.precomputed_stride = stride;
  how.kernel.launch(p, grid, stream);
}

template void launch_list<sched::GemmTiles>(const std::vector<ListProblem>&, sched::GemmTiles, const ListLaunch&,
                                            kernels::GroupedGemmArgs, const at::Device&);
template void launch_list<sched::SymmetricTiles>(const std::vector<ListProblem>&, sched::SymmetricTiles,
                                                 const ListLaunch&, kernels::GroupedGemmArgs, const at::Device&);

}  // namespace torch_grouped
