import pytest
import torch

import torch_grouped  # noqa: F401  registers the ops

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
    not torch.cuda.is_available() or not torch_grouped.has_cuda_kernels(),
    reason="needs a CUDA GPU and a CUDA build")])]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
