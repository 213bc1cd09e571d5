"""Every op sample gives the same result (and gradient) in a static program as eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import static
from tests.runtime.catalogue import SAMPLES
from tests.runtime.harness import Arg, example_values, make_inputs, outputs_of

RANDOM = {"uniform_random", "gaussian_random", "randint", "randperm", "dropout"}
STATIC_SAMPLES = [s for s in SAMPLES if s.op not in RANDOM and s.static]


def build(sample, values, batch_free: bool = False):
    """A program computing ``sample.fn`` on data vars; returns (program, feeds, fetches)."""
    main = static.Program()
    feeds, args = {}, []
    rt.enable_static()
    try:
        with static.program_guard(main):
            vi = iter(values)
            for i, a in enumerate(sample.args):
                if isinstance(a, Arg):
                    v = next(vi)
                    shape = list(v.shape)
                    if batch_free and shape:
                        shape[0] = None
                    var = static.data(f"arg{i}", shape, str(v.dtype))
                    var.stop_gradient = not (a.kind == "float" and a.grad)
                    feeds[var.name] = v
                    args.append(var)
                else:
                    args.append(a)
            outs = outputs_of(sample.fn(*args))
    finally:
        rt.disable_static()
    return main, feeds, outs, args


def uses_unknown_dims(sample) -> bool:
    return any(isinstance(a, Arg) and len(a.shape) > 0 for a in sample.args)


@pytest.mark.parametrize("sample", STATIC_SAMPLES, ids=[s.id for s in STATIC_SAMPLES])
def test_static_program_matches_eager(sample):
    values = example_values(sample, 3)
    expected = [o.numpy() for o in outputs_of(sample.fn(*make_inputs(sample, values)))]
    main, feeds, outs, _ = build(sample, values)
    got = static.Executor().run(main, feed=feeds, fetch_list=outs)
    assert len(got) == len(expected)
    for g, e, var in zip(got, expected, outs):
        assert g.dtype == e.dtype, f"{sample.id}: static dtype {g.dtype}, eager {e.dtype}"
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        assert len(var.shape) == g.ndim
        assert all(d in (-1, s) for d, s in zip(var.shape, g.shape)), (var.shape, g.shape)


GRAD_SAMPLES = [
    s
    for s in STATIC_SAMPLES
    if s.grad and any(isinstance(a, Arg) and a.kind == "float" and a.grad for a in s.args)
]


@pytest.mark.parametrize("sample", GRAD_SAMPLES, ids=[s.id for s in GRAD_SAMPLES])
def test_static_gradients_match_eager(sample):
    values = [v.astype(np.float64) if v.dtype.kind == "f" else v for v in example_values(sample, 4)]
    inputs = make_inputs(sample, values)
    outs = [o for o in outputs_of(sample.fn(*inputs)) if o.dtype.is_floating]
    rng = np.random.default_rng(1)
    weights = [rng.uniform(0.5, 1.5, o.shape) for o in outs]
    loss = sum((o * rt.to_tensor(w)).sum() for o, w in zip(outs, weights))
    wrt = [
        t
        for t, a in zip(inputs, sample.args)
        if isinstance(a, Arg) and a.kind == "float" and a.grad
    ]
    eager = rt.grad(loss, wrt, allow_unused=True)

    main, feeds, souts, args = build(sample, values)
    rt.enable_static()
    try:
        with static.program_guard(main):
            sfloat = [o for o in souts if o.dtype.is_floating]
            sloss = sum((o * rt.to_tensor(w)).sum() for o, w in zip(sfloat, weights))
            swrt = [
                v
                for v, a in zip(args, sample.args)
                if isinstance(a, Arg) and a.kind == "float" and a.grad
            ]
            sgrads = static.gradients(sloss, swrt)
    finally:
        rt.disable_static()
    fetch = [g for g in sgrads if g is not None]
    got = iter(static.Executor().run(main, feed=feeds, fetch_list=fetch))
    for e, s in zip(eager, sgrads):
        if s is None:
            assert e is None or not np.any(e.numpy()), f"{sample.id}: static gradient missing"
            continue
        np.testing.assert_allclose(next(got), e.numpy(), rtol=1e-6, atol=1e-8)


SHAPED = [
    s for s in STATIC_SAMPLES if uses_unknown_dims(s) and not getattr(s, "fixed_batch", False)
]


@pytest.mark.parametrize("sample", SHAPED, ids=[s.id for s in SHAPED])
def test_unknown_leading_dim_keeps_inference_sound(sample):
    """With the first dim of every input unknown (-1), building still works or fails with
    a clear error; when it builds, running it gives the eager result."""
    values = example_values(sample, 5)
    expected = [o.numpy() for o in outputs_of(sample.fn(*make_inputs(sample, values)))]
    try:
        main, feeds, outs, _ = build(sample, values, batch_free=True)
    except rt.OpError:
        pytest.skip("op needs a known leading dim (reported clearly)")
    got = static.Executor().run(main, feed=feeds, fetch_list=outs)
    for g, e, var in zip(got, expected, outs):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        assert len(var.shape) == g.ndim
        assert all(d in (-1, s) for d, s in zip(var.shape, g.shape)), (
            sample.id,
            var.shape,
            g.shape,
        )
