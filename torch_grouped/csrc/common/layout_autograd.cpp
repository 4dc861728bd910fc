// The autograd kernels of the layout ops, in C++ for the reason matmul_autograd.cpp gives (the
// host time of torch.library's Python autograd layer on calls whose kernels take microseconds):
// permute_copy's gradient is the inverse permutation of the output's; layout_transform's is the
// inverse transform, cropped to x's shape where the forward zero-padded a split that did not divide.
#include <torch/autograd.h>
#include <torch/library.h>

#include <vector>

#include "autograd_apply.h"
#include "op_signatures.h"

namespace torch_grouped {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class PermuteCopy : public torch::autograd::Function<PermuteCopy> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, at::IntArrayRef dims) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView below;
      out = op_handle<kPermuteCopy, PermuteCopySignature>().call(x, dims);
    }
    // (after the op, which has checked that dims is a permutation of x's axes)
    const int64_t rank = x.dim();
    std::vector<int64_t> inverse(rank);
    for (int64_t i = 0; i < rank; ++i) inverse[((dims[i] % rank) + rank) % rank] = i;
    ctx->saved_data["inverse"] = inverse;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor()};
    const std::vector<int64_t> inverse = ctx->saved_data["inverse"].toIntVector();
    return {op_handle<kPermuteCopy, PermuteCopySignature>().call(grads[0], inverse), at::Tensor()};
  }
};

class LayoutTransform : public torch::autograd::Function<LayoutTransform> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const std::string& src, const std::string& dst) {
    ctx->saved_data["src"] = src;
    ctx->saved_data["dst"] = dst;
    ctx->saved_data["shape"] = x.sizes().vec();
    at::AutoDispatchBelowADInplaceOrView below;
    return op_handle<kLayoutTransform, LayoutTransformSignature>().call(x, src, dst);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const std::string src = ctx->saved_data["src"].toStringRef(), dst = ctx->saved_data["dst"].toStringRef();
    const std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    at::Tensor back = op_handle<kLayoutTransform, LayoutTransformSignature>().call(grads[0], dst, src);
    for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
      if (back.size(dim) != shape[dim]) back = back.narrow(dim, 0, shape[dim]);
    return {back, at::Tensor(), at::Tensor()};
  }
};

at::Tensor permute_copy_autograd(const at::Tensor& x, at::IntArrayRef dims) {
  return apply_where_grad_flows<PermuteCopy, kPermuteCopy, PermuteCopySignature>(compute_requires_grad(x), x, dims);
}

at::Tensor layout_transform_autograd(const at::Tensor& x, const std::string& src, const std::string& dst) {
  return apply_where_grad_flows<LayoutTransform, kLayoutTransform, LayoutTransformSignature>(
      compute_requires_grad(x), x, src, dst);
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, Autograd, m) {
  m.impl("permute_copy", &permute_copy_autograd);
  m.impl("layout_transform", &layout_transform_autograd);
}

}  // namespace torch_grouped
