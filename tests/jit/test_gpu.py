"""Eager training and static programs on the GPU (``rt.set_device("gpu")``: CuPy kernels)
give what they give on NumPy: eager steps, forward-only ``to_static`` with an eager
backward, and whole steps compiled for the default executor. Skipped without CuPy and a
CUDA device (``tools/gpu_check.sh`` runs them on a GPU machine)."""

from __future__ import annotations

import pytest

import autostatic_runtime as rt
from tests.jit.train_cases import (
    OPTIMIZERS,
    BranchMLP,
    ConvBN,
    assert_same_training,
    train,
)

pytestmark = pytest.mark.gpu


@pytest.fixture
def on_gpu():
    device = rt.get_device()
    rt.set_device("gpu")
    yield
    rt.set_device(device)


def on(device: str, *args, **kw):
    saved = rt.get_device()
    rt.set_device(device)
    try:
        return train(*args, **kw)
    finally:
        rt.set_device(saved)


@pytest.mark.parametrize("make_net", [BranchMLP, ConvBN], ids=["mlp", "conv_bn"])
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_eager_and_compiled_steps_on_cupy_match_numpy(make_net, opt):
    make = OPTIMIZERS[opt]
    reference = on("cpu", False, make_net, make, steps=3)
    eager = on("gpu", False, make_net, make, steps=3)
    assert eager[1].parameters()[0].place.startswith("gpu")
    assert_same_training(reference, eager)
    assert_same_training(reference, on("gpu", True, make_net, make, steps=3))


def test_a_static_forward_with_an_eager_backward_on_cupy(on_gpu):
    import autostatic
    import autostatic_runtime.nn.functional as F

    rt.seed(3)
    net = autostatic.to_static(BranchMLP())
    x = rt.randn([8, 6])
    y = rt.to_tensor([0, 1, 2, 0, 1, 2, 0, 1])
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    grad = net.fc1.weight.grad
    assert grad is not None and grad.place.startswith("gpu")
    eager = F.cross_entropy(net.forward.dygraph_function(x), y)
    assert abs(float(loss) - float(eager)) < 1e-5
