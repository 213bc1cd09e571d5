"""The GPU path's code run without a GPU, on ``tests/cupy_emulator.py``: CuPy's
``CupyBackend`` and every "gpu" branch of the runtime, over arrays that refuse what CuPy's
refuse (implicit conversion to NumPy, NumPy arrays among a device op's operands). Results
are compared with the CPU's on the same inputs. What this cannot show (speed, float16
arithmetic, CUDA kernels) the ``gpu``-marked tests show on a GPU (``tools/gpu_check.sh``)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import autostatic_runtime as rt
from tests.cupy_emulator import DeviceArray, emulated_cupy
from tests.jit.train_cases import (
    OPTIMIZERS,
    BranchMLP,
    ConvBN,
    assert_same_training,
    batches,
    train,
)
from tests.runtime.catalogue import SAMPLES
from tests.runtime.harness import Arg, example_values, make_inputs, outputs_of

ROOT = Path(__file__).resolve().parents[2]
# ops whose random numbers come from each backend's own generator (CuPy's differ too)
RANDOM = {"uniform_random_dynamic", "gaussian_random_dynamic", "randint_dynamic"}


@pytest.fixture
def gpu():
    with emulated_cupy() as cupy:
        yield cupy


def test_the_emulator_refuses_what_cupy_refuses(gpu):
    x = gpu.asarray(np.arange(4.0))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    with pytest.raises(TypeError, match="NumPy array among the operands"):
        x + np.ones(4)
    with pytest.raises(TypeError, match="NumPy array among the operands"):
        gpu.where(x > 1, x, np.zeros(4))
    total = x.sum()
    assert isinstance(total, DeviceArray) and total.shape == () and float(total) == 6.0
    assert isinstance(x + np.float32(1), DeviceArray)
    np.testing.assert_array_equal(gpu.asnumpy(x * 2), [0, 2, 4, 6])


def _run(sample, values):
    """The sample's outputs and the gradients of a weighted sum of its float outputs."""
    inputs = make_inputs(sample, values)
    outs = outputs_of(sample.fn(*inputs))
    wrt = [
        t
        for t, a in zip(inputs, sample.args)
        if isinstance(a, Arg) and a.kind == "float" and a.grad
    ]
    diff = [o for o in outs if o.dtype.is_floating and not o.stop_gradient]
    grads = []
    if sample.grad and diff and wrt:
        weights = [np.linspace(0.5, 1.5, o.size).reshape(o.shape) for o in diff]
        loss = sum((o * rt.to_tensor(w.astype(str(o.dtype)))).sum() for o, w in zip(diff, weights))
        grads = [g for g in rt.grad(loss, wrt, allow_unused=True) if g is not None]
    return [o.numpy() for o in outs], grads, [str(t.place) for t in outs + grads]


def test_every_op_and_its_gradient_on_the_gpu_give_the_cpus_results(gpu):
    failed = []
    for sample in SAMPLES:
        values = example_values(sample, 1)
        rt.set_device("cpu")
        want, want_grads, _ = _run(sample, values)
        rt.set_device("gpu")
        try:
            got, got_grads, places = _run(sample, values)
            assert all(p.startswith("gpu") for p in places), places
            if sample.op not in RANDOM:
                pairs = list(zip(want, got)) + [
                    (w.numpy(), g.numpy()) for w, g in zip(want_grads, got_grads)
                ]
                assert len(got_grads) == len(want_grads)
                for w, g in pairs:
                    assert w.dtype == g.dtype and w.shape == g.shape
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        except Exception as exc:  # noqa: BLE001 - every failing sample is listed
            failed.append(f"{sample.id}: {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            rt.set_device("cpu")
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("make_net", [BranchMLP], ids=["mlp"])  # (ConvBN: 6 s more, same path)
def test_a_whole_step_compiled_by_xla_on_gpu_tensors_trains_as_on_the_cpu(gpu, make_net):
    """``rt.set_device("gpu")`` with ``backend="xla"``: the step's CuPy inputs go to JAX
    (a NumPy fallback with a warning before), and the model used eagerly between steps
    mixes its CuPy inputs with the JAX arrays the step left in its parameters."""
    shape = (4, 3, 8, 8) if make_net is ConvBN else (8, 6)
    data_cpu = [(x.numpy(), y.numpy()) for x, y in batches(3, shape=shape)]

    def poke(i, net, opt):
        if i == 1:
            net(rt.to_tensor(data_cpu[0][0]))  # an eager forward between compiled steps

    data = [(rt.to_tensor(x), rt.to_tensor(y)) for x, y in data_cpu]
    reference = train(False, make_net, OPTIMIZERS["Momentum"], steps=3, data=data, after=poke)
    rt.set_device("gpu")
    data = [(rt.to_tensor(x), rt.to_tensor(y)) for x, y in data_cpu]
    assert data[0][0].place.startswith("gpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to the default executor
        compiled = train(
            True, make_net, OPTIMIZERS["Momentum"], steps=3, backend="xla", data=data, after=poke
        )
    assert_same_training(reference, compiled)


def test_the_gpu_marked_tests_pass_on_the_emulator():
    """``AUTOSTATIC_EMULATED_GPU=1``: the ``gpu``-marked tests run (the XLA ones need JAX on
    a GPU and stay skipped)."""
    files = [
        "tests/runtime/test_backends.py",
        "tests/jit/test_gpu.py",
        "tests/jit/test_amp.py",
        "tests/xla/test_gpu.py",
    ]
    env = {**os.environ, "AUTOSTATIC_EMULATED_GPU": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", "-p",
         "no:xdist", *files],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "7 passed" in done.stdout, done.stdout[-1000:]


def _static_training(build_device: str, place) -> list:
    """Losses of five Adam steps of a static program built with ``build_device`` current
    and run by ``Executor(place)``, fed NumPy arrays and, once, a tensor of the GPU."""
    from autostatic_runtime import static

    rt.set_device(build_device)
    rt.seed(5)
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [None, 4], "float32")
            label = static.data("label", [None, 1], "float32")
            out = rt.nn.Linear(8, 1)(rt.nn.functional.relu(rt.nn.Linear(4, 8)(x)))
            loss = rt.nn.functional.mse_loss(out, label)
            rt.optimizer.Adam(0.05).minimize(loss)
    finally:
        rt.disable_static()
    rt.set_device("cpu")
    exe = static.Executor(place)
    exe.run(startup)
    rng = np.random.default_rng(0)
    losses = []
    for i in range(5):
        xb = rng.normal(size=(8, 4)).astype("float32")
        feed_x = rt.to_tensor(xb, place="gpu") if i == 2 else xb
        losses.append(float(exe.run(main, {"x": feed_x, "label": xb[:, :1]}, [loss])[0]))
    return losses


def test_static_programs_move_between_the_devices_they_are_built_and_run_on(gpu):
    """A program built with the GPU current and run by a CPU executor (its parameters'
    initial values were made on the GPU), and the other way round, train as on the CPU."""
    want = _static_training("cpu", rt.CPUPlace())
    np.testing.assert_allclose(_static_training("gpu", rt.CPUPlace()), want, rtol=1e-5)
    np.testing.assert_allclose(_static_training("cpu", rt.CUDAPlace(0)), want, rtol=1e-5)


def test_to_tensor_takes_another_devices_array(gpu):
    on_gpu = gpu.asarray(np.arange(3.0, dtype="float32"))
    t = rt.to_tensor(on_gpu, place="cpu")
    assert t.place == "cpu"
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2])


def test_decorate_save_dtype_casts_the_state_dict_only(gpu, tmp_path):
    """``amp.decorate(level="O2", save_dtype="float32")`` (a GPU: float16 is AMP's there):
    the parameters compute in float16, ``state_dict()`` and ``rt.save`` give float32, and
    loading such a state still sets the float16 parameters."""
    rt.set_device("gpu")
    net = rt.nn.Sequential(rt.nn.Linear(3, 4), rt.nn.BatchNorm1D(4))
    opt = rt.optimizer.Adam(parameters=net.parameters())
    net, opt = rt.amp.decorate(net, opt, level="O2", save_dtype="float32")
    assert str(net[0].weight.dtype) == "float16"
    state = net.state_dict()
    assert {str(v.dtype) for v in state.values()} == {"float32"}
    assert state["0.weight"].name == net[0].weight.name
    assert str(net.state_dict(use_hook=False)["0.weight"].dtype) == "float16"
    rt.save(state, str(tmp_path / "net.pdparams"))
    loaded = rt.load(str(tmp_path / "net.pdparams"))
    assert str(loaded["0.weight"].dtype) == "float32"
    loaded["0.weight"] = loaded["0.weight"] * 0 + 0.5
    net.set_state_dict(loaded)
    assert str(net[0].weight.dtype) == "float16"
    np.testing.assert_array_equal(net[0].weight.numpy(), np.full([3, 4], 0.5, "float16"))
