// syr2k: c[i] = alpha·(a[i] b[i]ᵀ + b[i] a[i]ᵀ) + beta·c[i], returned full and exactly symmetric.
#include "../common/checks.h"
#include "../sched/grouped_visitor.h"
#include "../sched/rank2k_visitor.h"
#include "portable.h"

namespace torch_grouped {

at::Tensor fold_triangle(const at::Tensor& t, sched::Uplo uplo) {
  return uplo == sched::Uplo::Lower ? at::tril(t) + at::tril(t, -1).t() : at::triu(t) + at::triu(t, 1).t();
}

at::Tensor symmetric_sum_aten(const at::Tensor& g) {
  TORCH_CHECK(g.dim() == 2 && g.size(0) == g.size(1), "_symmetric_sum: each g must be a square matrix, got sizes ",
              g.sizes());
  at::Tensor h = at::empty({g.size(0), g.size(0)}, g.options());
  return at::add_out(h, g, g.mT());
}

std::vector<at::Tensor> symmetric_sum_portable(at::TensorList g) {
  std::vector<at::Tensor> h;
  h.reserve(g.size());
  for (const at::Tensor& x : g) h.push_back(symmetric_sum_aten(x));
  return h;
}

std::vector<at::Tensor> syr2k_composite(at::TensorList a, at::TensorList b, at::TensorList c,
                                        const std::string& uplo_name, double alpha, double beta) {
  const sched::Uplo uplo = check_syr2k(a, b, c, uplo_name);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const at::ScalarType acc = accumulate_dtype(a[i]);
    // a bᵀ + b aᵀ = [a b] [b a]ᵀ: one matmul over 2K in the input dtype (cuBLAS accumulates half
    // inputs in fp32), one rounding; the epilogue in fp32.
    const at::Tensor x = at::cat({a[i], b[i]}, 1), y = at::cat({b[i], a[i]}, 1);
    const bool native = a[i].is_cuda() || a[i].scalar_type() == acc;
    at::Tensor t = native ? at::mm(x, y.t()).to(acc) : at::mm(x.to(acc), y.t().to(acc));
    t.mul_(alpha);
    if (beta != 0.0 && !c.empty()) t.add_(c[i].to(acc), beta);
    out.push_back(fold_triangle(t, uplo).to(a[i].scalar_type()).contiguous());
  }
  return out;
}

std::vector<at::Tensor> syr2k_tiled(at::TensorList a, at::TensorList b, at::TensorList c,
                                    const std::string& uplo_name, double alpha, double beta) {
  const sched::Uplo uplo = check_syr2k(a, b, c, uplo_name);
  // A non-square tile, so that the CPU path exercises the scheduler's macro tiles and padding.
  const sched::TileShape tile{64, 32};
  const int32_t groups = static_cast<int32_t>(a.size());
  std::vector<int64_t> n(groups);
  std::vector<at::Tensor> out, a_acc, b_acc;
  for (int32_t g = 0; g < groups; ++g) {
    n[g] = a[g].size(0);
    out.push_back(at::empty({n[g], n[g]}, a[g].options()));
    a_acc.push_back(a[g].to(accumulate_dtype(a[g])));
    b_acc.push_back(b[g].to(accumulate_dtype(b[g])));
  }
  sched::GroupedVisitor<sched::Rank2KTiles> visitor({n.data(), n.data(), groups},
                                                    sched::Rank2KTiles{tile, uplo});
  sched::TileCoord t;
  // One CTA walking every slot in order: the same tiles a grid of any size would visit.
  for (int64_t index = 0; visitor.find(index, t); ++index) {
    if (!t.valid) continue;  // a padding slot of the macro-tile grid
    const int64_t g = t.group, size = n[g];
    const int64_t r0 = int64_t{t.tile_m} * tile.m, c0 = int64_t{t.tile_n} * tile.n;
    const int64_t rows = std::min<int64_t>(tile.m, size - r0), cols = std::min<int64_t>(tile.n, size - c0);
    if (rows <= 0 || cols <= 0) continue;
    const at::Tensor ar = a_acc[g].narrow(0, r0, rows), ac = a_acc[g].narrow(0, c0, cols);
    const at::Tensor br = b_acc[g].narrow(0, r0, rows), bc = b_acc[g].narrow(0, c0, cols);
    at::Tensor acc = at::addmm(at::mm(ar, bc.t()), br, ac.t()).mul_(alpha);
    if (beta != 0.0 && !c.empty()) acc.add_(c[g].narrow(0, r0, rows).narrow(1, c0, cols).to(acc.scalar_type()), beta);
    const at::Tensor val = acc.to(out[g].scalar_type());
    at::Tensor dst = out[g].narrow(0, r0, rows).narrow(1, c0, cols);
    at::Tensor mirror = out[g].narrow(0, c0, cols).narrow(1, r0, rows);
    const bool inside = uplo == sched::Uplo::Lower ? r0 >= c0 + cols - 1 : r0 + rows - 1 <= c0;
    if (inside) {
      dst.copy_(val);
      mirror.copy_(val.t());
      continue;
    }
    // A tile across the diagonal: write its triangle part, and mirror that part only.
    const auto idx = at::TensorOptions().dtype(at::kLong);
    const at::Tensor ri = at::arange(r0, r0 + rows, idx).unsqueeze(1);
    const at::Tensor ci = at::arange(c0, c0 + cols, idx).unsqueeze(0);
    const at::Tensor keep = (uplo == sched::Uplo::Lower ? ri >= ci : ri <= ci).to(dst.device());
    dst.copy_(at::where(keep, val, dst));
    mirror.copy_(at::where(keep.t(), val.t(), mirror));
  }
  return out;
}

}  // namespace torch_grouped
