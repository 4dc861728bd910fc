"""Autocast for the matmul ops, as ``torch.mm`` has it (PyTorch's ``lower_precision_fp`` policy):
inside ``torch.autocast(device_type, dtype)``, the floating-point tensors of that device type
(fp64 excepted) reach ``gemm``, ``grouped_mm``, ``syr2k`` and ``streamk_mm`` cast to the autocast
dtype, and the op runs with autocast off. So an MoE layer whose activations come out of an
autocast ``Linear`` in bf16 while its expert weights stay fp32 calls ``grouped_mm`` as it would
``torch.mm``, and the weights' gradients come back in fp32 through the cast. ``out_dtype``, where
given, is kept. The layout ops move data and are left alone, as ``permute`` is.

``torch.library.register_autocast`` would do the same but refuses keyword arguments, which every
matmul op here has; hence our own kernel on the Autocast keys."""
import torch

_MATMUL_OPS = ("gemm", "grouped_mm", "syr2k", "streamk_mm")
_DEVICE_TYPES = ("cuda", "cpu")

_lib = torch.library.Library("grouped", "IMPL")  # (kept: the registrations live as long as it does)


def _cast(value, device_type, dtype):
    """`value` (a tensor, or a list of them, or anything else) with each eligible tensor cast."""
    if isinstance(value, torch.Tensor):
        eligible = value.is_floating_point() and value.dtype != torch.float64 and value.device.type == device_type
        return value.to(dtype) if eligible else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _register(name, device_type):
    op = getattr(torch.ops.grouped, name).default
    key = "Autocast" + torch._C._dispatch_key_for_device(device_type)
    below_autocast = torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, key))

    def autocast_kernel(_keyset, *args, **kwargs):
        dtype = torch.get_autocast_dtype(device_type)
        with torch._C._ExcludeDispatchKeyGuard(below_autocast):
            return op(*_cast(args, device_type, dtype), **kwargs)

    _lib.impl(name, autocast_kernel, key, with_keyset=True)


for _name in _MATMUL_OPS:
    for _device_type in _DEVICE_TYPES:
        _register(_name, _device_type)
