"""Whole training steps compiled by XLA on the GPU (JAX's CUDA build): the eager step's
losses and state, with the parameters kept on the GPU between steps. Skipped without a GPU
(``tools/gpu_check.sh`` runs them on a GPU machine)."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

from tests.jit.train_cases import (  # noqa: E402
    OPTIMIZERS,
    BranchMLP,
    ConvBN,
    assert_same_training,
    train,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(jax.default_backend() != "gpu", reason="JAX has no GPU here"),
]


@pytest.mark.parametrize("make_net", [BranchMLP, ConvBN], ids=["mlp", "conv_bn"])
def test_a_whole_step_on_the_gpu_trains_as_eagerly(make_net):
    make = OPTIMIZERS["Momentum"]
    eager = train(False, make_net, make, steps=3)
    compiled = train(True, make_net, make, steps=3, backend="xla")
    assert_same_training(eager, compiled)
    weight = compiled[1].parameters()[0]._data
    assert {d.platform for d in weight.devices()} == {"gpu"}  # kept there between steps
