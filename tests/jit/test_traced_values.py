"""Traced values where eager code has Python values: ``to_tensor`` of traced scalars, shapes
holding traced dims (``x.shape[0]`` of an ``InputSpec([None, 3])`` input), slices with
traced bounds. Each case runs eagerly and under ``to_static`` on the same inputs (values,
gradients), and survives ``save``/``load``."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import static

SPEC = [InputSpec([None, 3], "float32", "x")]


def _to_tensor_of_traced(x):
    return rt.to_tensor([rt.max(x), rt.min(x)])


def _nested_mix(x):
    return rt.to_tensor([[rt.max(x), 1.0], [rt.sum(x).reshape([1]), rt.mean(x)]]) * 2


def _assign_list(x):
    return rt.assign([rt.max(x), x.shape[0]]) * 1.0


def _assign_list_float(x):
    return rt.assign([[rt.max(x), 1.0], [rt.sum(x).reshape([1]), rt.mean(x)]]) * 2


def _cast_dtype(x):
    return rt.to_tensor(rt.sum(x, axis=1), dtype="float64")


def _ones_batch(x):
    return rt.ones([x.shape[0], 1]) + x


def _shape_arith(x):
    return rt.zeros([x.shape[0] * 2, x.shape[-1] // 2]) + 1.0


def _int_of_dim(x):
    n = int(x.shape[0])
    return rt.full([n, 3], 0.5) * x


def _full_traced_value(x):
    return rt.full([x.shape[0], 2], rt.max(x))


def _expand_batch(x):
    b = x.shape[0]
    return rt.expand(rt.ones([1, 3]), [b, 3]) * x


def _broadcast_to_shape(x):
    return rt.broadcast_to(rt.mean(x, axis=0, keepdim=True), rt.shape(x)) - x


def _tile_batch(x):
    return rt.tile(x[:1], [x.shape[0], 1]) + x


def _reshape_whole(x):
    return rt.reshape(x * 2, rt.shape(x))


def _arange_batch(x):
    return rt.arange(x.shape[0]).astype("float32").unsqueeze(1) * x


def _half_batch(x):
    return x[: x.shape[0] // 2] * 3


def _slice_api(x):
    return rt.slice(x, [0, 1], [1, 0], [x.shape[0], 2])


def _zeros_like_loop(x):
    s = rt.zeros_like(x[0])
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


CASES = [
    _to_tensor_of_traced, _nested_mix, _assign_list, _cast_dtype, _ones_batch, _shape_arith,
    _int_of_dim, _full_traced_value, _expand_batch, _broadcast_to_shape, _tile_batch,
    _reshape_whole, _arange_batch, _half_batch, _slice_api, _zeros_like_loop,
]  # fmt: skip


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__.strip("_") for f in CASES])
def test_static_matches_eager_for_every_batch(fn):
    sf = autostatic.to_static(fn, input_spec=SPEC)
    for batch in (4, 6):
        x = rt.to_tensor(np.random.default_rng(batch).normal(size=(batch, 3)).astype("float32"))
        want, got = fn(x), sf(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert sf.program_cache.misses == 1  # one program serves every batch size


GRAD_CASES = [
    _assign_list_float, _expand_batch, _broadcast_to_shape, _tile_batch, _reshape_whole,
    _arange_batch, _half_batch, _slice_api, _zeros_like_loop, _full_traced_value,
]  # fmt: skip


def _grad(f, x_np):
    x = rt.to_tensor(x_np, stop_gradient=False)
    out = f(x)
    w = rt.to_tensor(np.linspace(0.5, 1.5, out.size).reshape(out.shape).astype(str(out.dtype)))
    (out * w).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("fn", GRAD_CASES, ids=[f.__name__.strip("_") for f in GRAD_CASES])
def test_static_gradients_match_eager(fn):
    x_np = np.random.default_rng(3).normal(size=(5, 3)).astype("float32")
    want = _grad(_STACKED.get(fn, fn), x_np)  # eager to_tensor/full detach; static ones do not
    got = _grad(autostatic.to_static(fn, input_spec=SPEC), x_np)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


_STACKED = {
    _full_traced_value: lambda x: rt.max(x) * rt.ones([x.shape[0], 2]),
}


def test_to_tensor_of_traced_values_is_a_new_leaf_as_eagerly():
    x_np = np.array([[1.0, 5.0, 2.0], [0.0, 3.0, -4.0]], "float32")
    x = rt.to_tensor(x_np, stop_gradient=False)
    out = autostatic.to_static(_to_tensor_of_traced, input_spec=SPEC)(x)
    np.testing.assert_allclose(out.numpy(), [5.0, -4.0])
    assert out.stop_gradient and _to_tensor_of_traced(x).stop_gradient


def test_assign_of_traced_max_min_gradient_reaches_x():
    x_np = np.array([[1.0, 5.0, 2.0], [0.0, 3.0, -4.0]], "float32")
    x = rt.to_tensor(x_np, stop_gradient=False)
    out = autostatic.to_static(lambda v: rt.assign([rt.max(v), rt.min(v)]), input_spec=SPEC)(x)
    np.testing.assert_allclose(out.numpy(), [5.0, -4.0])
    (out * rt.to_tensor([1.0, 10.0])).sum().backward()
    want = np.zeros_like(x_np)
    want[0, 1], want[1, 2] = 1.0, 10.0
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_to_tensor_dtypes_follow_eager():
    def fn(x):
        n = x.shape[0]
        return (
            rt.to_tensor([n, 2]),
            rt.to_tensor([rt.max(x), 2]),
            rt.to_tensor([n, 2], dtype="float32"),
            rt.to_tensor(rt.shape(x)),
        )

    x = rt.randn([4, 3])
    for got, want in zip(autostatic.to_static(fn, input_spec=SPEC)(x), fn(x)):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_inference_keeps_known_dims_and_marks_runtime_ones():
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            x = static.data("x", [None, 3, 4], "float32")
            n = rt.shape(x)[0]
            assert rt.zeros([n, 3]).shape == [-1, 3]
            assert rt.expand(rt.ones([1, 4]), [n, 3, 4]).shape == [-1, 3, 4]
            assert rt.expand(x, [2, n, 3, 4]).shape == [2, -1, 3, 4]
            assert rt.tile(rt.ones([2, 4]), [n, 1]).shape == [-1, 4]
            assert rt.arange(n).shape == [-1]
            assert x[:, : n - 1].shape == [-1, -1, 4]
            assert rt.slice(x, [1], [1], [3]).shape == [-1, 2, 4]
            assert rt.zeros(rt.shape(x)).shape == [-1, 3, 4]
            assert rt.expand(rt.ones([4]), rt.shape(x)).shape == [-1, 3, 4]
            with pytest.raises(rt.OpError, match=r"use rt.shape\(x\)\[i\]"):
                rt.zeros([x.shape[0], 3])  # Variable.shape holds -1 for an unknown dim
            with pytest.raises(rt.ShapeError, match="1-D with a known length"):
                rt.zeros(rt.reshape(x, [-1]).astype("int64"))
    finally:
        rt.disable_static()


def test_random_creators_take_traced_shapes():
    def fn(x):
        noise = rt.randn(x.shape) * 0 + rt.rand([x.shape[0], 1]) * 0
        ints = rt.randint(0, 3, [x.shape[0], 2])
        other = rt.uniform([x.shape[0]], min=2.0, max=3.0) + rt.normal(0.0, 1.0, [x.shape[0]]) * 0
        return x + noise, ints, other

    sf = autostatic.to_static(fn, input_spec=SPEC)
    x = rt.randn([6, 3])
    out, ints, other = sf(x)
    np.testing.assert_allclose(out.numpy(), x.numpy())
    assert ints.shape == [6, 2] and ints.dtype == rt.int64
    assert 0 <= ints.numpy().min() and ints.numpy().max() < 3
    assert other.shape == [6] and np.all((other.numpy() >= 2) & (other.numpy() < 3))
    types = {op.type for op in sf.concrete_program.main_program.global_block().ops}
    assert {"gaussian_random_dynamic", "uniform_random_dynamic", "randint_dynamic"} <= types


def test_new_ops_round_trip_through_save_and_load(tmp_path):
    def fn(x):
        b = x.shape[0]
        pair = rt.to_tensor([rt.max(x), rt.min(x)])
        return rt.expand(pair.unsqueeze(0), [b, 2]) + rt.tile(x[: b // 2 + 1, :2], [2, 1])[:b]

    sf = autostatic.to_static(fn, input_spec=SPEC)
    x = rt.randn([5, 3])
    autostatic.save(sf, str(tmp_path / "m"))
    loaded = autostatic.load(str(tmp_path / "m"))
    for batch in (5, 7):
        x = rt.randn([batch, 3])
        np.testing.assert_allclose(loaded(x).numpy(), fn(x).numpy(), rtol=1e-6)
    program = sf.concrete_program.main_program
    again = static.Program.parse(program.serialize())
    assert [op.type for op in again.global_block().ops] == [
        op.type for op in program.global_block().ops
    ]
