// syr2k's autograd kernel, in C++ for the reason matmul_autograd.cpp gives. The output keeps the
// `uplo` triangle of T = alpha·(A Bᵀ + B Aᵀ) + beta·c and mirrors it, so with G the output's
// gradient, dT = the `uplo` triangle of G + Gᵀ (G's own diagonal on it): dA = alpha·(G + Gᵀ)·B and
// dB = alpha·(G + Gᵀ)·A (both lists in one gemm call where both are needed), dc = beta·dT. An output
// that took no part in the loss has no gradient and counts as zeros; every gradient is in the inputs'
// dtype. G + Gᵀ comes from grouped::_symmetric_sum (on the GPU a tiled kernel: ATen's reads Gᵀ a row
// apart per thread), except under create_graph, where ATen's add keeps it differentiable.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>

#include "autograd_apply.h"
#include "op_signatures.h"

namespace torch_grouped {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// dT: the `uplo` triangle of H = G + Gᵀ with G's own diagonal on it.
at::Tensor fold_triangle(const at::Tensor& h, const at::Tensor& g, const std::string& uplo) {
  const at::Tensor folded = h - at::diag_embed(at::diagonal(g, 0, -2, -1));
  return uplo == "L" ? folded.tril() : folded.triu();
}

class Syr2kLists : public torch::autograd::Function<Syr2kLists> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList a, at::TensorList b, at::TensorList c,
                               const std::string& uplo, double alpha, double beta) {
    variable_list both(a.begin(), a.end());
    both.insert(both.end(), b.begin(), b.end());
    ctx->save_for_backward(both);
    ctx->saved_data["c_groups"] = int64_t(c.size());
    ctx->saved_data["uplo"] = uplo;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["beta"] = beta;
    at::AutoDispatchBelowADInplaceOrView below;
    return op_handle<kSyr2k, Syr2kSignature>().call(a, b, c, uplo, alpha, beta);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const size_t groups = saved.size() / 2, c_groups = size_t(ctx->saved_data["c_groups"].toInt());
    const std::string uplo = ctx->saved_data["uplo"].toStringRef();
    const double alpha = ctx->saved_data["alpha"].toDouble(), beta = ctx->saved_data["beta"].toDouble();
    bool need_a = false, need_b = false, need_c = false;
    for (size_t i = 0; i < groups; ++i) need_a |= ctx->needs_input_grad(i), need_b |= ctx->needs_input_grad(groups + i);
    for (size_t i = 0; i < c_groups; ++i) need_c |= ctx->needs_input_grad(2 * groups + i);
    variable_list g(groups), h;  // (H only where a gradient is needed: a full pass over each G)
    for (size_t i = 0; i < groups; ++i) {
      const at::Tensor& a = saved[i];
      g[i] = grads[i].defined() ? grads[i].to(a.scalar_type()) : at::zeros({a.size(0), a.size(0)}, a.options());
    }
    if (need_a || need_b || need_c) {  // (dc from the same H: one G + Gᵀ for every gradient)
      if (at::GradMode::is_enabled()) {  // create_graph: a differentiable H
        for (const at::Tensor& gi : g) h.push_back(gi + gi.mT());
      } else {
        h = op_handle<kSymmetricSum, SymmetricSumSignature>().call(g);
      }
    }
    variable_list result(2 * groups + c_groups + 3);  // (uplo, alpha and beta: none)
    // (the products as they come where alpha is 1, the default: no pass to scale them)
    const auto scaled = [alpha](const at::Tensor& t) { return alpha == 1.0 ? t : t * alpha; };
    // dA_i = alpha·H_i·B_i and dB_i = alpha·H_i·A_i: the needed ones in one grouped call.
    variable_list lhs, rhs;
    if (need_a) lhs.insert(lhs.end(), h.begin(), h.end()), rhs.insert(rhs.end(), saved.begin() + groups, saved.end());
    if (need_b) lhs.insert(lhs.end(), h.begin(), h.end()), rhs.insert(rhs.end(), saved.begin(), saved.begin() + groups);
    if (!lhs.empty()) {
      const variable_list products = op_handle<kGemm, GemmSignature>().call(lhs, rhs, std::nullopt, "auto", true);
      size_t next = 0;
      if (need_a)
        for (size_t i = 0; i < groups; ++i) result[i] = scaled(products[next++]);
      if (need_b)
        for (size_t i = 0; i < groups; ++i) result[groups + i] = scaled(products[next++]);
    }
    if (need_c)
      for (size_t i = 0; i < c_groups; ++i) result[2 * groups + i] = fold_triangle(h[i], g[i], uplo) * beta;
    return result;
  }
};

std::vector<at::Tensor> syr2k_autograd(at::TensorList a, at::TensorList b, at::TensorList c, const std::string& uplo,
                                       double alpha, double beta) {
  return apply_where_grad_flows<Syr2kLists, kSyr2k, Syr2kSignature>(compute_requires_grad(a, b, c), a, b, c, uplo,
                                                                  alpha, beta);
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, Autograd, m) { m.impl("syr2k", &syr2k_autograd); }

}  // namespace torch_grouped
