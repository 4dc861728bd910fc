import pytest
import torch

import torch_grouped  # noqa: F401  registers the ops

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
    not torch.cuda.is_available() or not torch_grouped.has_cuda_kernels(),
    reason="needs a CUDA GPU and a CUDA build")])]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def pytest_make_parametrize_id(config, val, argname):
    """torch dtypes by name in test ids (test_x[bfloat16-...], not [dtype0-...]), so that `-k`
    expressions (tools/gpu_check.sh's sanitizer sets) can select them."""
    if isinstance(val, torch.dtype):
        return str(val).removeprefix("torch.")
    return None
