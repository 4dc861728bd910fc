// Autocast for the matmul ops, as torch.mm has it (PyTorch's lower_precision_fp policy): inside
// torch.autocast(device_type, dtype), the floating-point tensors of that device type (fp64
// excepted) reach gemm, grouped_mm, syr2k and streamk_mm cast to the autocast dtype, and the op
// runs with autocast off. at::autocast::cached_cast does the casting, so fp32 parameters are cast
// once per autocast region, as for torch.mm. The layout ops move data and have no autocast kernel
// (the Autocast keys fall through), as permute has none.
//
// In C++ rather than through torch.library.register_autocast, which refuses keyword arguments
// (every matmul op here has them) and, as a Python kernel, cost ~15 us a grouped_mm call and ~450
// us a gemm call of 256 tensors (H100 host, session 43).
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include "op_signatures.h"

namespace torch_grouped {
namespace {

// The op `Name` (a "grouped::…" schema) called on its arguments cast as autocast on `Device`
// casts them, below the Autocast key. Signature: the ops' kernels' (op_signatures.h).
template <c10::DeviceType Device, const char* Name, class Signature>
struct LowerPrecision;

template <c10::DeviceType Device, const char* Name, class Ret, class... Args>
struct LowerPrecision<Device, Name, Ret(Args...)> {
  static Ret call(Args... args) {
    const auto& op = op_handle<Name, Ret(Args...)>();
    c10::impl::ExcludeDispatchKeyGuard no_autocast(at::autocast::get_autocast_dispatch_key_from_device_type(Device));
    const at::ScalarType to = at::autocast::get_autocast_dtype(Device);
    return op.call(at::autocast::cached_cast(to, args, Device)...);
  }
};

template <c10::DeviceType Device>
void register_autocast(torch::Library& m) {
  m.impl("gemm", &LowerPrecision<Device, kGemm, GemmSignature>::call);
  m.impl("grouped_mm", &LowerPrecision<Device, kGroupedMm, GroupedMmSignature>::call);
  m.impl("syr2k", &LowerPrecision<Device, kSyr2k, Syr2kSignature>::call);
  m.impl("streamk_mm", &LowerPrecision<Device, kStreamKMm, StreamKMmSignature>::call);
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, AutocastCUDA, m) { register_autocast<c10::DeviceType::CUDA>(m); }
TORCH_LIBRARY_IMPL(grouped, AutocastCPU, m) { register_autocast<c10::DeviceType::CPU>(m); }

}  // namespace torch_grouped
