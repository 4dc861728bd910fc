// TVM-style layout strings: an upper-case letter is an axis ("N", "C", ...), digits followed by a
// lower-case letter are a split sub-axis of that size ("4c": the inner 4 of axis C, whose
// upper-case letter then holds the outer part). "NCHW4c" is a 5-D tensor [N, C/4, H, W, 4].
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

namespace torch_grouped {

struct LayoutAxis {
  char axis;       // the primary axis, upper case
  int64_t factor;  // 0 for the primary (outer) part, the split size for a sub-axis
};

struct Layout {
  std::string text;
  std::vector<LayoutAxis> axes;
  // Split size of `axis`, or 1 when it is not split.
  int64_t factor_of(char axis) const;
  // Position of the primary (outer) part of `axis`, and of its sub-axis (-1 when not split).
  int64_t outer_position(char axis) const;
  int64_t inner_position(char axis) const;
};

// `which` names the argument in error messages ("src_layout" or "dst_layout").
Layout parse_layout(const std::string& text, const char* which);

// Everything the implementations need to know about one transform.
struct LayoutTransformPlan {
  Layout src, dst;
  std::vector<char> primaries;       // axes in the order they appear in src
  std::vector<int64_t> extents;      // logical extent of each primary (from x and src)
  std::vector<int64_t> out_sizes;    // result shape
};

LayoutTransformPlan plan_layout_transform(at::IntArrayRef x_sizes, const std::string& src,
                                          const std::string& dst);

// x's memory seen as the transform's atoms: a split axis of stride s becomes an outer and an
// inner atom of strides (s * inner size, s). Made from sizes and strides, not through views: a
// view through the dispatcher costs microseconds, which a transform of a few MB notices.
struct AtomView {
  std::vector<int64_t> sizes, strides;
};

// A device's permuted copy of an atom view of x: view.permute(dims) into a fresh contiguous
// tensor of `out_sizes` (the permuted atoms merged into the result's axes).
using PermuteCopyFn = at::Tensor (*)(const at::Tensor& x, const AtomView& view, at::IntArrayRef dims,
                                     at::IntArrayRef out_sizes);

// A transform that pads one axis, seen without the padding pass: the atom view of the padded
// tensor addressed through x's own strides (it reaches past x where the padding lies), and the
// two atoms that split the padded axis: position (i, j) of atoms (outer, inner) holds data when
// i * sizes[inner] + j < limit, zero otherwise.
struct PaddedView : AtomView {
  int64_t outer, inner, limit;
};

// A device's permute of a padded view (zeros where the padding lies) into a fresh contiguous
// tensor of `out_sizes`, or nothing where its kernels do not apply (then x is padded first and
// permuted with PermuteCopyFn).
using PaddedPermuteFn = std::optional<at::Tensor> (*)(const at::Tensor& x, const PaddedView& view,
                                                      at::IntArrayRef dims, at::IntArrayRef out_sizes);

// layout_transform as (zero padding where a split does not divide) + a view that splits axes into
// "atoms" + one permutation of the atoms + a view that merges them: one pass over the data through
// `permute` (two when a split axis is re-split by a size that neither divides nor is divided by
// the old one), plus a padding pass unless `padded` (may be null; tried where exactly one axis is
// padded) takes the padded transform in one. Shared by the CPU and CUDA paths.
at::Tensor layout_transform_with(const at::Tensor& x, const std::string& src, const std::string& dst,
                                 PermuteCopyFn permute, PaddedPermuteFn padded = nullptr);

}  // namespace torch_grouped
