// streamk_mm's autograd kernel, in C++: dA = streamk_mm(dY, Bᵀ), dB = streamk_mm(Aᵀ, dY), each with
// `auto`'s plan. The other ops register theirs from Python (torch_grouped/_autograd.py); this one
// is here because a matmul is called in training loops on shapes whose kernels take tens of
// microseconds, where torch.library's Python autograd layer showed: a forward and backward of
// 4096 x 1024 x 4096 ran 164 µs of kernels in 358 µs (0.53x torch.mm's 189; H200, session 45), and
// on a CPU with 8 x 8 tensors the same step took 221 µs of host time against torch.mm's 54.
#include <torch/autograd.h>
#include <torch/library.h>

#include <string>

namespace torch_grouped {
namespace {

at::Tensor call_streamk_mm(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition, int64_t splits,
                           int64_t grid) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("grouped::streamk_mm", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::string&, int64_t, int64_t)>();
  return op.call(a, b, decomposition, splits, grid);
}

class StreamKMatmul : public torch::autograd::Function<StreamKMatmul> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::string& decomposition, int64_t splits, int64_t grid) {
    ctx->save_for_backward({a, b});
    at::AutoDispatchBelowADInplaceOrView below;
    return call_streamk_mm(a, b, decomposition, splits, grid);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1], &grad = grads[0];
    at::Tensor da, db;
    if (grad.defined() && ctx->needs_input_grad(0)) da = call_streamk_mm(grad, b.t(), "auto", 0, 0);
    if (grad.defined() && ctx->needs_input_grad(1)) db = call_streamk_mm(a.t(), grad, "auto", 0, 0);
    return {da, db, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor streamk_mm_autograd(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                               int64_t splits, int64_t grid) {
  return StreamKMatmul::apply(a, b, decomposition, splits, grid);
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, Autograd, m) { m.impl("streamk_mm", &streamk_mm_autograd); }

}  // namespace torch_grouped
