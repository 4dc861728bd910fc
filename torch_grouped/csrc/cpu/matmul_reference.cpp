// gemm and grouped_mm through ATen matmuls, one per group.
#include "../common/checks.h"
#include "portable.h"

namespace torch_grouped {

at::Tensor matmul_accumulate(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype) {
  std::vector<int64_t> sizes(a.sizes().begin(), a.sizes().end() - 1);
  sizes.push_back(b.size(-1));
  if (a.size(-1) == 0) return at::zeros(sizes, a.options().dtype(out_dtype));
  const bool half_in = a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16;
  // cuBLAS accumulates half products in fp32 already; elsewhere upcast so that the CPU path
  // accumulates in fp32 too.
  if (half_in && a.is_cuda() && out_dtype == a.scalar_type()) return at::matmul(a, b);
  const at::ScalarType acc = accumulate_dtype(a);
  return at::matmul(a.to(acc), b.to(acc)).to(out_dtype);
}

// `schedule` and `sort_by_k` steer the GPU kernel's tile order; one matmul per group has none.
std::vector<at::Tensor> gemm_portable(at::TensorList a, at::TensorList b,
                                      std::optional<at::ScalarType> out_dtype,
                                      const std::string& schedule, bool sort_by_k) {
  (void)sort_by_k;
  check_gemm_schedule(schedule);
  at::ScalarType od;
  check_gemm(a, b, out_dtype, od);
  std::vector<at::Tensor> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) out.push_back(matmul_accumulate(a[i], b[i], od));
  return out;
}

at::Tensor grouped_mm_portable(const at::Tensor& a, const at::Tensor& b,
                               const std::optional<at::Tensor>& offs,
                               std::optional<at::ScalarType> out_dtype) {
  const GroupedMmShape s = check_grouped_mm(a, b, offs, out_dtype);
  if (s.form == GroupedMmForm::A3dB3d) return matmul_accumulate(a, b, s.out_dtype).contiguous();
  const at::Tensor o = offs->to(at::kCPU).contiguous();
  const int32_t* ends = o.data_ptr<int32_t>();
  at::Tensor out = at::zeros(s.out_sizes, a.options().dtype(s.out_dtype));
  switch (s.form) {
    case GroupedMmForm::A2dB3d: check_offsets_values(o, a.size(0), "a.size(0)"); break;
    case GroupedMmForm::A3dB2d: check_offsets_values(o, b.size(1), "b.size(1)"); break;
    default: check_offsets_values(o, a.size(1), "a.size(1)"); break;
  }
  for (int64_t g = 0; g < s.groups; ++g) {
    const int64_t start = g == 0 ? 0 : ends[g - 1], len = ends[g] - start;
    if (len == 0) continue;
    switch (s.form) {
      case GroupedMmForm::A2dB3d:  // rows of a grouped, one weight per group
        out.narrow(0, start, len).copy_(matmul_accumulate(a.narrow(0, start, len), b[g], s.out_dtype));
        break;
      case GroupedMmForm::A3dB2d:  // columns of b grouped
        out.narrow(1, start, len).copy_(matmul_accumulate(a[g], b.narrow(1, start, len), s.out_dtype));
        break;
      default:  // K grouped: one output matrix per group
        out[g].copy_(matmul_accumulate(a.narrow(1, start, len), b.narrow(0, start, len), s.out_dtype));
        break;
    }
  }
  return out;
}

}  // namespace torch_grouped
