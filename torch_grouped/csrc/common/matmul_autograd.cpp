// The autograd kernels of the matmul ops streamk_mm, grouped_mm and gemm, in C++: for y = op(A, B),
// dA = op(dY, Bᵀ) and dB = op(Aᵀ, dY), with the last two axes transposed (for grouped_mm the
// transposes turn each of its four forms into another, with the same offsets; gemm does it per
// group). syr2k's and the layout ops' are C++ too (syr2k_autograd.cpp, layout_autograd.cpp); all
// are in C++ rather than Python because they run in training loops on calls whose kernels take
// tens of microseconds, where torch.library's Python autograd layer showed: a forward and backward of streamk_mm 4096 x
// 1024 x 4096 ran 164 µs of kernels in 358 µs (0.53x torch.mm's 189; H200, session 45); on a CPU
// with tiny tensors a forward and backward took 221 µs of host time (streamk_mm; 69-88 in C++,
// torch.mm's 31-54), 192 µs (grouped_mm; 92 in C++) and 345 µs (gemm, 4 groups).
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>

#include "autograd_apply.h"
#include "op_signatures.h"

namespace torch_grouped {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// dA and dB of y = op(A, B) (A and B the first two saved tensors) where they are needed, in the
// first two of `inputs` slots (the forward's arguments; the others get no gradient).
template <class Op>
variable_list matmul_grads(AutogradContext* ctx, const at::Tensor& grad, size_t inputs, Op&& op) {
  const variable_list saved = ctx->get_saved_variables();
  const at::Tensor &a = saved[0], &b = saved[1];
  variable_list grads(inputs);
  if (!grad.defined()) return grads;
  if (ctx->needs_input_grad(0)) grads[0] = op(grad, b.transpose(-2, -1));
  if (ctx->needs_input_grad(1)) grads[1] = op(a.transpose(-2, -1), grad);
  return grads;
}

class StreamKMatmul : public torch::autograd::Function<StreamKMatmul> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::string& decomposition, int64_t splits, int64_t grid) {
    ctx->save_for_backward({a, b});
    at::AutoDispatchBelowADInplaceOrView below;
    return op_handle<kStreamKMm, StreamKMmSignature>().call(a, b, decomposition, splits, grid);
  }

  // (each gradient with `auto`'s plan for its own shape)
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return matmul_grads(ctx, grads[0], 5, [](const at::Tensor& x, const at::Tensor& y) {
      return op_handle<kStreamKMm, StreamKMmSignature>().call(x, y, "auto", 0, 0);
    });
  }
};

class GroupedMatmul : public torch::autograd::Function<GroupedMatmul> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::optional<at::Tensor>& offs, std::optional<at::ScalarType> out_dtype) {
    ctx->save_for_backward({a, b, offs.value_or(at::Tensor())});
    at::AutoDispatchBelowADInplaceOrView below;
    return op_handle<kGroupedMm, GroupedMmSignature>().call(a, b, offs, out_dtype);
  }

  // (the gradients in the inputs' dtype: an fp32 out_dtype's gradient is cast back first)
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const std::optional<at::Tensor> offs = saved[2].defined() ? std::optional<at::Tensor>(saved[2]) : std::nullopt;
    const at::Tensor grad = grads[0].defined() ? grads[0].to(saved[0].scalar_type()) : grads[0];
    return matmul_grads(ctx, grad, 4, [&](const at::Tensor& x, const at::Tensor& y) {
      return op_handle<kGroupedMm, GroupedMmSignature>().call(x, y, offs, std::nullopt);
    });
  }
};

// gemm's lists: dA_i = dC_i · B_iᵀ, dB_i = A_iᵀ · dC_i, each list in one grouped call; an output
// that took no part in the loss has no gradient and counts as zeros (in the inputs' dtype, as every
// gradient: an fp32 out_dtype's is cast back).
class GemmLists : public torch::autograd::Function<GemmLists> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList a, at::TensorList b,
                               std::optional<at::ScalarType> out_dtype, const std::string& schedule, bool sort_by_k) {
    variable_list both(a.begin(), a.end());
    both.insert(both.end(), b.begin(), b.end());
    ctx->save_for_backward(both);
    at::AutoDispatchBelowADInplaceOrView below;
    return op_handle<kGemm, GemmSignature>().call(a, b, out_dtype, schedule, sort_by_k);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const size_t groups = saved.size() / 2;
    variable_list g(groups), a_t(groups), b_t(groups);
    for (size_t i = 0; i < groups; ++i) {
      const at::Tensor &a = saved[i], &b = saved[groups + i];
      g[i] = grads[i].defined() ? grads[i].to(a.scalar_type()) : at::zeros({a.size(0), b.size(1)}, a.options());
      a_t[i] = a.t(), b_t[i] = b.t();
    }
    const auto& gemm = op_handle<kGemm, GemmSignature>();
    variable_list result(2 * groups + 3);  // (out_dtype, schedule and sort_by_k: none)
    bool need_a = false, need_b = false;
    for (size_t i = 0; i < groups; ++i) need_a |= ctx->needs_input_grad(i), need_b |= ctx->needs_input_grad(groups + i);
    if (need_a) {
      const variable_list da = gemm.call(g, b_t, std::nullopt, "auto", true);
      std::copy(da.begin(), da.end(), result.begin());
    }
    if (need_b) {
      const variable_list db = gemm.call(a_t, g, std::nullopt, "auto", true);
      std::copy(db.begin(), db.end(), result.begin() + groups);
    }
    return result;
  }
};

at::Tensor streamk_mm_autograd(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                               int64_t splits, int64_t grid) {
  return apply_where_grad_flows<StreamKMatmul, kStreamKMm, StreamKMmSignature>(compute_requires_grad(a, b), a, b,
                                                                           decomposition, splits, grid);
}

at::Tensor grouped_mm_autograd(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                               std::optional<at::ScalarType> out_dtype) {
  return apply_where_grad_flows<GroupedMatmul, kGroupedMm, GroupedMmSignature>(compute_requires_grad(a, b), a, b, offs,
                                                                           out_dtype);
}

std::vector<at::Tensor> gemm_autograd(at::TensorList a, at::TensorList b, std::optional<at::ScalarType> out_dtype,
                                      const std::string& schedule, bool sort_by_k) {
  return apply_where_grad_flows<GemmLists, kGemm, GemmSignature>(compute_requires_grad(a, b), a, b, out_dtype, schedule,
                                                               sort_by_k);
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, Autograd, m) {
  m.impl("gemm", &gemm_autograd);
  m.impl("streamk_mm", &streamk_mm_autograd);
  m.impl("grouped_mm", &grouped_mm_autograd);
}

}  // namespace torch_grouped
