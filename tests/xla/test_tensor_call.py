"""The generated tensor call of a to_static XLA program (``static/xla/prepared.tensor_call``):
once a program's inference function is lean, a StaticFunction call on Tensors of the traced
shapes runs it first; whatever it does not take goes the generic way, so results, gradients,
parameter updates and the program cache behave as before."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
from autostatic_runtime import nn  # noqa: E402

from .test_to_static import no_fallback  # noqa: E402


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        if rt.mean(h) > 0.0:
            h = rt.nn.functional.relu(h)
        return rt.nn.functional.dropout(h, p=0.5, training=self.training)


def data(n=2, seed=0):
    return rt.to_tensor(np.random.default_rng(seed).normal(size=(n, 4)).astype("float32"))


def counted(sf):
    """Count the calls of ``sf``'s current tensor call; returns the list of counts."""
    program, call = sf.program_cache.tensor_call
    calls = []

    def wrapper(args):
        calls.append(1)
        return call(args)

    sf.program_cache.tensor_call = (program, wrapper)
    return calls


def warm(fn, *args):
    """Two calls: the second finds the program by its signature and makes its tensor call."""
    for _ in range(2):
        fn(*args)
    sf = fn.forward if isinstance(fn, nn.Layer) else fn
    assert sf.program_cache.tensor_call is not None


def twin_nets():
    """An eager ``Net`` and an XLA to_static one with the same weights, both in eval mode."""
    eager = Net()
    eager.eval()
    static_net = autostatic.to_static(Net(), backend="xla")
    static_net.set_state_dict(eager.state_dict())
    static_net.eval()
    return eager, static_net


def test_the_tensor_call_runs_from_the_third_call_and_gives_fresh_results():
    rt.seed(0)
    eager, static_net = twin_nets()
    x = data()
    with no_fallback(), rt.no_grad():
        warm(static_net, x)
        assert "def tensor_call" in static_net.forward.program_cache.tensor_call[1].__source__
        calls = counted(static_net.forward)
        hits = static_net.forward.program_cache.hits
        first = static_net(x)
        first.numpy()[...] = 7.0  # the caller's own array: the next call is not affected
        second = static_net(x)
    assert calls == [1, 1]
    assert static_net.forward.program_cache.hits == hits + 2
    np.testing.assert_allclose(second.numpy(), eager(x).numpy(), rtol=1e-6)
    assert second.numpy().flags.writeable and second.stop_gradient


def test_parameters_set_or_changed_in_place_between_calls_are_seen():
    eager, static_net = twin_nets()
    x = data()
    with no_fallback(), rt.no_grad():
        warm(static_net, x)
        for step in range(3):
            new = np.full((4, 3), 0.1 * (step + 1), "float32")
            eager.fc.weight.set_value(new)
            static_net.fc.weight.set_value(new)  # a new array: the generic way, a new plan
            np.testing.assert_allclose(static_net(x).numpy(), eager(x).numpy(), rtol=1e-6)
            eager.fc.bias._data[...] += 1.0
            static_net.fc.bias._data[...] += 1.0  # the same array: the tensor call reads it
            np.testing.assert_allclose(static_net(x).numpy(), eager(x).numpy(), rtol=1e-6)


def test_what_the_tensor_call_does_not_take_goes_the_generic_way():
    rt.seed(1)
    eager, static_net = twin_nets()
    x = data()
    with no_fallback():
        with rt.no_grad():
            warm(static_net, x)
        calls = counted(static_net.forward)
        # parameters need gradients and recording is on: the training forward
        out = static_net(x)
        assert not out.stop_gradient
        out.sum().backward()
        assert static_net.fc.weight.grad is not None
        with rt.no_grad():
            # another batch size: its own program
            np.testing.assert_allclose(
                static_net(data(3)).numpy(), eager(data(3)).numpy(), rtol=1e-6
            )
            # a float64 input: another program too
            x64 = rt.to_tensor(x.numpy().astype("float64"))
            assert static_net(x64).dtype == rt.float64
            # training mode: dropout draws, its own program
            static_net.train()
            dropped = static_net(rt.ones([2, 4])).numpy()
            static_net.eval()
            assert (dropped == 0).any()
            # a NumPy array instead of a Tensor
            np.testing.assert_allclose(static_net(x.numpy()).numpy(), eager(x).numpy(), rtol=1e-6)
    # each call above tried the tensor call first and was sent on (or hit it in eval)
    assert len(calls) >= 1
    with rt.no_grad():
        np.testing.assert_allclose(static_net(x).numpy(), eager(x).numpy(), rtol=1e-6)


def test_disabling_to_static_and_clearing_the_cache_bypass_it():
    sf = autostatic.to_static(lambda x: rt.tanh(x) * 2.0, backend="xla")
    x = data()
    with no_fallback():
        warm(sf, x)
        calls = counted(sf)
        autostatic.enable_to_static(False)
        try:
            np.testing.assert_allclose(sf(x).numpy(), np.tanh(x.numpy()) * 2.0, rtol=1e-6)
        finally:
            autostatic.enable_to_static(True)
        assert calls == []
        misses = sf.program_cache.misses
        sf.program_cache.clear()
        assert sf.program_cache.tensor_call is None
        sf(x)
        assert sf.program_cache.misses == misses + 1  # traced again


def test_an_evicted_program_takes_its_tensor_call_with_it():
    sf = autostatic.to_static(lambda x: x * 3.0, backend="xla", max_programs=1)
    with no_fallback():
        warm(sf, data(2))
        sf(data(5))  # a second program: the first is dropped
        assert sf.program_cache.tensor_call is None
        np.testing.assert_allclose(sf(data(2)).numpy(), data(2).numpy() * 3.0, rtol=1e-6)


def test_structured_results_come_back_in_their_structure():
    def f(x):
        return {"a": x + 1.0, "b": (x * 2.0, 5)}

    sf = autostatic.to_static(f, backend="xla")
    x = data()
    with no_fallback():
        warm(sf, x)
        calls = counted(sf)
        got = sf(x)
    assert calls == [1]
    assert set(got) == {"a", "b"} and got["b"][1] == 5
    np.testing.assert_allclose(got["a"].numpy(), x.numpy() + 1.0, rtol=1e-6)
    np.testing.assert_allclose(got["b"][0].numpy(), x.numpy() * 2.0, rtol=1e-6)


def test_threads_calling_at_once_each_get_their_own_results():
    """The tensor call takes no lock: calls from several threads at once still compute each
    its own input, and the caller's JAX 64-bit setting is restored in every thread."""
    import threading

    import jax

    sf = autostatic.to_static(lambda x: rt.tanh(x) * 2.0 + 1.0, backend="xla")
    inputs = [data(2, seed) for seed in range(4)]
    with no_fallback():
        warm(sf, inputs[0])
        want = {id(x): sf(x).numpy() for x in inputs}  # one at a time
        for x in inputs:
            np.testing.assert_allclose(want[id(x)], np.tanh(x.numpy()) * 2.0 + 1.0, rtol=1e-5)
        errors = []

        def work(x):
            try:
                for _ in range(50):
                    np.testing.assert_array_equal(sf(x).numpy(), want[id(x)])
                    assert not jax.config.jax_enable_x64
            except Exception as exc:  # noqa: BLE001  (reported below)
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_a_program_for_several_shapes_keeps_a_tensor_call_per_shape():
    sf = autostatic.to_static(
        lambda x: x * 3.0, input_spec=[autostatic.InputSpec([None, 4])], backend="xla"
    )
    a, b = data(2), data(5)
    with no_fallback():
        warm(sf, a)
        warm(sf, b)
        (program,) = sf.program_cache.concrete_programs()
        assert len(program._tensor_calls) == 2
        seen = []
        for sig, call in list(program._tensor_calls.items()):
            program._tensor_calls[sig] = lambda args, call=call, sig=sig: (
                seen.append(sig[1][0]) or call(args)
            )
        for x in (a, a, b, b, a, a):
            np.testing.assert_allclose(sf(x).numpy(), x.numpy() * 3.0, rtol=1e-6)
    assert sorted(set(seen)) == [(2, 4), (5, 4)]


def test_random_programs_draw_a_new_key_at_every_tensor_call():
    sf = autostatic.to_static(
        lambda x: rt.nn.functional.dropout(x, 0.5, training=True), backend="xla"
    )
    x = rt.ones([64])

    def draws():
        rt.seed(5)
        return [sf(x).numpy() for _ in range(4)]

    with no_fallback():
        first = draws()  # the first two calls take the generic way
        assert sf.program_cache.tensor_call is not None
        calls = counted(sf)
        again = draws()  # every call a tensor call now
    assert calls == [1] * 4
    assert not any(np.array_equal(first[0], d) for d in first[1:])
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_dropped_program_is_freed_at_once():
    """A program's tensor calls hold no reference back to it: dropped from the cache, it
    is freed by reference counting, without waiting for the cycle collector."""
    import gc
    import weakref

    sf = autostatic.to_static(lambda x: {"a": x * 2.0, "b": 1}, backend="xla", max_programs=1)
    with no_fallback():
        warm(sf, data(2))
        (program,) = sf.program_cache.concrete_programs()
        assert program._tensor_calls
        ref = weakref.ref(program)
        del program
        gc.disable()
        try:
            sf(data(5))  # the first program is dropped
            assert ref() is None
        finally:
            gc.enable()
