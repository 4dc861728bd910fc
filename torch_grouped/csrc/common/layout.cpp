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
