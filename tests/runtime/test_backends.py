"""Devices and backends: selection, the entry-point registry, mixed devices, GPU (marked)."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import backends
from autostatic_runtime.backends.numpy_backend import NumpyBackend


def test_default_device_is_cpu_on_numpy():
    assert rt.get_device() == "cpu"
    t = rt.ones([2])
    assert isinstance(t._data, np.ndarray)
    assert t.place == "cpu"


def test_set_device_returns_the_canonical_name():
    assert rt.set_device("CPU") == "cpu"
    assert rt.set_device("array_api_strict") == "array_api_strict"
    t = rt.ones([2])
    assert t.place == "array_api_strict"
    assert type(t._data).__module__.startswith("array_api_strict")
    np.testing.assert_array_equal((t + 1).numpy(), [2, 2])


def test_unknown_device_is_a_clear_error():
    with pytest.raises(rt.DeviceError, match="no backend 'tpu'"):
        rt.set_device("tpu")


@pytest.mark.skipif(rt.is_compiled_with_cuda(), reason="a GPU is present")
def test_gpu_without_cupy_says_how_to_get_it():
    with pytest.raises(rt.DeviceError, match=r"autostatic\[gpu\]"):
        rt.set_device("gpu")
    assert rt.get_device() == "cpu"


def test_ops_run_on_the_device_of_their_inputs():
    rt.set_device("array_api_strict")
    a = rt.ones([2])
    rt.set_device("cpu")
    b = a * 3
    assert b.place == "array_api_strict"


def test_mixing_devices_names_both():
    rt.set_device("array_api_strict")
    a = rt.ones([2])
    rt.set_device("cpu")
    b = rt.ones([2])
    with pytest.raises(rt.DeviceError, match="different devices.*cpu.*array_api_strict"):
        b + a


def test_to_tensor_moves_between_devices():
    a = rt.to_tensor([1.0, 2.0])
    moved = rt.to_tensor(a, place="array_api_strict")
    assert moved.place == "array_api_strict"
    np.testing.assert_array_equal(moved.numpy(), [1.0, 2.0])


class FakeBackend(NumpyBackend):
    """A third-party backend: NumPy under another name."""

    name = "fake_accel"
    device_type = "fake_accel"
    created = 0

    def __init__(self):
        FakeBackend.created += 1
        super().__init__()


def test_third_party_backend_through_entry_points(monkeypatch):
    ep = EntryPoint(
        name="fake_accel", value=f"{__name__}:FakeBackend", group="autostatic_runtime.backends"
    )
    monkeypatch.setattr(backends, "entry_points", lambda group: [ep])
    monkeypatch.setattr(backends, "_discovered", False)
    monkeypatch.setattr(backends, "_classes", dict(backends._classes))
    monkeypatch.setattr(backends, "_instances", dict(backends._instances))
    monkeypatch.setattr(backends, "_by_array_type", dict(backends._by_array_type))
    assert "fake_accel" in rt.list_backends()
    assert rt.set_device("fake_accel") == "fake_accel"
    assert FakeBackend.created == 1
    np.testing.assert_array_equal((rt.ones([2]) * 2).numpy(), [2, 2])


def test_backend_namespace_has_standard_functions_and_extras():
    xp = backends.get_backend("numpy").xp
    for name in ("matmul", "reshape", "take", "index_add", "erf", "einsum", "random_normal"):
        assert callable(getattr(xp, name)), name


def test_generic_extras_agree_with_numpy_overrides():
    strict = backends.get_backend("array_api_strict")
    fast = backends.get_backend("numpy")
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([0, 2, 0])
    vals = np.ones((3, 4)) * np.arange(3)[:, None]
    want = fast.index_add(x, 0, idx, vals)
    got = strict.to_numpy(
        strict.index_add(strict.asarray(x), 0, strict.asarray(idx), strict.asarray(vals))
    )
    np.testing.assert_allclose(got, want)
    v = np.linspace(-3, 3, 13)
    from math import erf

    np.testing.assert_allclose(
        strict.to_numpy(strict.erf(strict.asarray(v))), [erf(a) for a in v], atol=2e-7
    )


@pytest.mark.gpu
def test_gpu_matches_cpu_on_a_small_computation():
    x = np.random.default_rng(0).normal(size=(8, 16)).astype(np.float32)
    cpu = rt.to_tensor(x, stop_gradient=False)
    rt.set_device("gpu")
    gpu = rt.to_tensor(x, stop_gradient=False)
    assert gpu.place.startswith("gpu")
    for t in (cpu, gpu):
        (rt.tanh(t) * t).sum().backward()
    np.testing.assert_allclose(gpu.grad.numpy(), cpu.grad.numpy(), rtol=1e-5)
