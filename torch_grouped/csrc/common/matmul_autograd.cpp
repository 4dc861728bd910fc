// The autograd kernels of streamk_mm and grouped_mm, in C++: for y = op(A, B), dA = op(dY, Bᵀ) and
// dB = op(Aᵀ, dY), with the last two axes transposed (for grouped_mm the transposes turn each of
// its four forms into another, with the same offsets). The other ops register theirs from Python
// (torch_grouped/_autograd.py); these two are here because they run in training loops on calls
// whose kernels take tens of microseconds, where torch.library's Python autograd layer showed: a
// forward and backward of streamk_mm 4096 x 1024 x 4096 ran 164 µs of kernels in 358 µs (0.53x
// torch.mm's 189; H200, session 45); on a CPU with tiny tensors a forward and backward took 221 µs
// of host time (streamk_mm, against 69 in C++ and torch.mm's 31-54) and 192 µs (grouped_mm).
#include <torch/autograd.h>
#include <torch/library.h>

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

at::Tensor streamk_mm_autograd(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                               int64_t splits, int64_t grid) {
  return StreamKMatmul::apply(a, b, decomposition, splits, grid);
}

at::Tensor grouped_mm_autograd(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                               std::optional<at::ScalarType> out_dtype) {
  return GroupedMatmul::apply(a, b, offs, out_dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, Autograd, m) {
  m.impl("streamk_mm", &streamk_mm_autograd);
  m.impl("grouped_mm", &grouped_mm_autograd);
}

}  // namespace torch_grouped
