// permute_copy and layout_transform through ATen views and one copy (ATen's strided copy).
#include "../common/checks.h"
#include "../common/layout.h"
#include "portable.h"

namespace torch_grouped {

at::Tensor permute_copy_portable(const at::Tensor& x, at::IntArrayRef dims) {
  const std::vector<int64_t> perm = check_permutation(x, dims);
  const at::Tensor view = x.permute(perm);
  return at::empty(view.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous)).copy_(view);
}

namespace {

at::Tensor permute_atoms_portable(const at::Tensor& x, const AtomView& view, at::IntArrayRef dims,
                                  at::IntArrayRef out_sizes) {
  return permute_copy_portable(x.as_strided(view.sizes, view.strides), dims).view(out_sizes);
}

}  // namespace

at::Tensor layout_transform_portable(const at::Tensor& x, const std::string& src,
                                     const std::string& dst) {
  return layout_transform_with(x, src, dst, &permute_atoms_portable);
}

}  // namespace torch_grouped
