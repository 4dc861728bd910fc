// permute_copy and layout_transform through ATen views and one copy.
#include "../common/checks.h"
#include "../common/layout.h"
#include "portable.h"

namespace torch_grouped {

at::Tensor permute_copy_portable(const at::Tensor& x, at::IntArrayRef dims) {
  const std::vector<int64_t> perm = check_permutation(x, dims);
  const at::Tensor view = x.permute(perm);
  return at::empty(view.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous)).copy_(view);
}

at::Tensor layout_transform_portable(const at::Tensor& x, const std::string& src,
                                     const std::string& dst) {
  const LayoutTransformPlan p = plan_layout_transform(x.sizes(), src, dst);
  // 1. The logical tensor: each axis's outer and inner parts side by side, merged.
  std::vector<int64_t> perm;
  for (char axis : p.primaries) {
    perm.push_back(p.src.outer_position(axis));
    if (p.src.inner_position(axis) >= 0) perm.push_back(p.src.inner_position(axis));
  }
  at::Tensor logical = x.permute(perm).reshape(p.extents);
  // 2. Zero-pad every axis that dst splits by a size that does not divide it.
  std::vector<int64_t> pad;  // constant_pad_nd takes (before, after) pairs from the last axis
  std::vector<int64_t> split_sizes;
  for (int64_t j = static_cast<int64_t>(p.primaries.size()) - 1; j >= 0; --j) {
    const int64_t f = p.dst.factor_of(p.primaries[j]);
    pad.push_back(0);
    pad.push_back((f - p.extents[j] % f) % f);
  }
  if (std::any_of(pad.begin(), pad.end(), [](int64_t v) { return v != 0; }))
    logical = at::constant_pad_nd(logical, pad, 0);
  // 3. Split, then order the parts as dst wants them.
  std::vector<int64_t> outer_at(p.primaries.size()), inner_at(p.primaries.size(), -1);
  for (size_t j = 0; j < p.primaries.size(); ++j) {
    const int64_t f = p.dst.factor_of(p.primaries[j]);
    outer_at[j] = static_cast<int64_t>(split_sizes.size());
    split_sizes.push_back(logical.size(j) / f);
    if (p.dst.inner_position(p.primaries[j]) >= 0) {
      inner_at[j] = static_cast<int64_t>(split_sizes.size());
      split_sizes.push_back(f);
    }
  }
  const at::Tensor split = logical.reshape(split_sizes);
  std::vector<int64_t> dst_perm;
  for (const LayoutAxis& axis : p.dst.axes) {
    const size_t j = std::find(p.primaries.begin(), p.primaries.end(), axis.axis) - p.primaries.begin();
    dst_perm.push_back(axis.factor > 0 ? inner_at[j] : outer_at[j]);
  }
  const at::Tensor view = split.permute(dst_perm);
  return at::empty(p.out_sizes, x.options().memory_format(at::MemoryFormat::Contiguous)).copy_(view);
}

}  // namespace torch_grouped
