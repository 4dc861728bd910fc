#include "layout.h"

#include <cctype>

namespace torch_grouped {
namespace {
constexpr const char* kOp = "layout_transform";
}

int64_t Layout::factor_of(char axis) const {
  for (const auto& a : axes)
    if (a.axis == axis && a.factor > 0) return a.factor;
  return 1;
}

int64_t Layout::outer_position(char axis) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].axis == axis && axes[i].factor == 0) return static_cast<int64_t>(i);
  return -1;
}

int64_t Layout::inner_position(char axis) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].axis == axis && axes[i].factor > 0) return static_cast<int64_t>(i);
  return -1;
}

Layout parse_layout(const std::string& text, const char* which) {
  Layout layout{text, {}};
  TORCH_CHECK_VALUE(!text.empty(), kOp, ": ", which, " is empty; expected a layout such as 'NCHW'");
  size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (std::isupper(static_cast<unsigned char>(ch))) {
      TORCH_CHECK_VALUE(layout.outer_position(ch) < 0, kOp, ": ", which, " '", text,
                        "' names axis ", ch, " twice");
      layout.axes.push_back({ch, 0});
      ++i;
      continue;
    }
    TORCH_CHECK_VALUE(std::isdigit(static_cast<unsigned char>(ch)), kOp, ": ", which, " '", text,
                      "' has '", ch, "' at position ", i,
                      "; expected an upper-case axis or a split such as '4c'");
    int64_t factor = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      factor = factor * 10 + (text[i] - '0');
      TORCH_CHECK_VALUE(factor < (int64_t{1} << 40), kOp, ": ", which, " '", text,
                        "' has a split size that is too large");
      ++i;
    }
    TORCH_CHECK_VALUE(i < text.size() && std::islower(static_cast<unsigned char>(text[i])), kOp,
                      ": ", which, " '", text, "' has a split size without its lower-case axis");
    TORCH_CHECK_VALUE(factor > 0, kOp, ": ", which, " '", text, "' splits an axis by 0");
    const char axis = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    TORCH_CHECK_VALUE(layout.inner_position(axis) < 0, kOp, ": ", which, " '", text,
                      "' splits axis ", axis, " twice; one split per axis is supported");
    layout.axes.push_back({axis, factor});
    ++i;
  }
  for (const auto& a : layout.axes)
    TORCH_CHECK_VALUE(layout.outer_position(a.axis) >= 0, kOp, ": ", which, " '", text,
                      "' has the sub-axis ", static_cast<char>(std::tolower(a.axis)),
                      " but not its axis ", a.axis);
  return layout;
}

LayoutTransformPlan plan_layout_transform(at::IntArrayRef x_sizes, const std::string& src,
                                          const std::string& dst) {
  LayoutTransformPlan p{parse_layout(src, "src_layout"), parse_layout(dst, "dst_layout"), {}, {}, {}};
  TORCH_CHECK_VALUE(x_sizes.size() == p.src.axes.size(), kOp, ": x has ", x_sizes.size(),
                    " dimensions but src_layout '", src, "' has ", p.src.axes.size(), " axes");
  for (size_t i = 0; i < p.src.axes.size(); ++i) {
    const LayoutAxis& a = p.src.axes[i];
    if (a.factor > 0) {
      TORCH_CHECK(x_sizes[i] == a.factor, kOp, ": x.size(", i, ") = ", x_sizes[i],
                  " but src_layout '", src, "' splits ", a.axis, " by ", a.factor);
      continue;
    }
    p.primaries.push_back(a.axis);
    p.extents.push_back(x_sizes[i] * p.src.factor_of(a.axis));
  }
  for (const auto& a : p.dst.axes)
    TORCH_CHECK_VALUE(p.src.outer_position(a.axis) >= 0, kOp, ": dst_layout '", dst,
                      "' has axis ", a.axis, " which src_layout '", src, "' lacks");
  for (char axis : p.primaries)
    TORCH_CHECK_VALUE(p.dst.outer_position(axis) >= 0, kOp, ": dst_layout '", dst,
                      "' lacks axis ", axis, " of src_layout '", src, "'");
  for (const auto& a : p.dst.axes) {
    int64_t extent = 0;
    for (size_t j = 0; j < p.primaries.size(); ++j)
      if (p.primaries[j] == a.axis) extent = p.extents[j];
    const int64_t f = p.dst.factor_of(a.axis);
    p.out_sizes.push_back(a.factor > 0 ? a.factor : (extent + f - 1) / f);
  }
  return p;
}

}  // namespace torch_grouped

namespace torch_grouped {

at::Tensor layout_transform_with(const at::Tensor& x, const std::string& src, const std::string& dst,
                                 PermuteCopyFn permute, PaddedPermuteFn padded_permute) {
  const LayoutTransformPlan p = plan_layout_transform(x.sizes(), src, dst);
  // Incompatible re-split (e.g. 4c → 6c): go through the unsplit layout.
  for (char axis : p.primaries) {
    const int64_t fs = p.src.factor_of(axis), fd = p.dst.factor_of(axis);
    if (fs > 1 && fd > 1 && fs % fd != 0 && fd % fs != 0) {
      const std::string plain(p.primaries.begin(), p.primaries.end());
      return layout_transform_with(layout_transform_with(x, src, plain, permute, padded_permute), plain, dst, permute,
                                   padded_permute);
    }
  }
  // Atoms: every axis of src and dst is one atom or two adjacent ones.
  std::vector<int64_t> atom_sizes;
  std::vector<std::vector<int64_t>> src_atoms(p.src.axes.size()), dst_atoms(p.dst.axes.size());
  std::vector<int64_t> padded(x.sizes().begin(), x.sizes().end());
  auto atom = [&](int64_t size) {
    atom_sizes.push_back(size);
    return static_cast<int64_t>(atom_sizes.size()) - 1;
  };
  for (size_t j = 0; j < p.primaries.size(); ++j) {
    const char axis = p.primaries[j];
    const int64_t e = p.extents[j], fs = p.src.factor_of(axis), fd = p.dst.factor_of(axis);
    const int64_t so = p.src.outer_position(axis), si = p.src.inner_position(axis);
    const int64_t dout = p.dst.outer_position(axis), din = p.dst.inner_position(axis);
    if (fs == fd) {                       // same split (or none): atoms as they are
      src_atoms[so] = dst_atoms[dout] = {atom(e / fs)};
      if (fs > 1) src_atoms[si] = dst_atoms[din] = {atom(fs)};
    } else if (fs == 1) {                 // split an unsplit axis, padding it to a multiple of fd
      const int64_t o = atom((e + fd - 1) / fd), i = atom(fd);
      padded[so] = atom_sizes[o] * fd;
      src_atoms[so] = {o, i};
      dst_atoms[dout] = {o};
      dst_atoms[din] = {i};
    } else if (fd == 1) {                 // merge a split axis
      const int64_t o = atom(e / fs), i = atom(fs);
      src_atoms[so] = {o};
      src_atoms[si] = {i};
      dst_atoms[dout] = {o, i};
    } else if (fd % fs == 0) {            // coarser split: the outer part splits, padded
      const int64_t r = fd / fs, outer = e / fs;
      const int64_t o = atom((outer + r - 1) / r), m = atom(r), i = atom(fs);
      padded[so] = atom_sizes[o] * r;
      src_atoms[so] = {o, m};
      src_atoms[si] = {i};
      dst_atoms[dout] = {o};
      dst_atoms[din] = {m, i};
    } else {                              // finer split: the inner part splits
      const int64_t r = fs / fd;
      const int64_t o = atom(e / fs), m = atom(r), i = atom(fd);
      src_atoms[so] = {o};
      src_atoms[si] = {m, i};
      dst_atoms[dout] = {o, m};
      dst_atoms[din] = {i};
    }
  }
  std::vector<int64_t> src_view_sizes, dims;
  std::vector<int64_t> position(atom_sizes.size());
  for (const auto& ids : src_atoms)
    for (int64_t id : ids) position[id] = static_cast<int64_t>(src_view_sizes.size()), src_view_sizes.push_back(atom_sizes[id]);
  for (const auto& ids : dst_atoms)
    for (int64_t id : ids) dims.push_back(position[id]);
  std::vector<int64_t> padded_axes;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (padded[d] != x.size(d)) padded_axes.push_back(d);
  // The atoms of t (x, or x padded) through t's strides: a split axis's outer atom steps over its
  // inner atom's extent.
  auto atom_view = [&](const at::Tensor& t) {
    AtomView view{src_view_sizes, {}};
    for (int64_t a = 0; a < t.dim(); ++a) {
      if (src_atoms[a].size() == 2) view.strides.push_back(t.stride(a) * atom_sizes[src_atoms[a][1]]);
      view.strides.push_back(t.stride(a));
    }
    return view;
  };
  if (padded_axes.size() == 1 && padded_permute != nullptr) {
    const int64_t d = padded_axes[0];
    const PaddedView view{atom_view(x), position[src_atoms[d][0]], position[src_atoms[d][1]], x.size(d)};
    if (auto out = padded_permute(x, view, dims, p.out_sizes)) return *out;
  }
  at::Tensor source = x;
  if (!padded_axes.empty()) {
    std::vector<int64_t> pad;  // (before, after) pairs from the last axis, as constant_pad_nd takes them
    for (int64_t d = x.dim() - 1; d >= 0; --d) pad.insert(pad.end(), {0, padded[d] - x.size(d)});
    source = at::constant_pad_nd(x, pad, 0);
  }
  return permute(source, atom_view(source), dims, p.out_sizes);
}

}  // namespace torch_grouped
