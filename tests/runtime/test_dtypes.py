"""Dtype names, canonical objects and Paddle's promotion rules."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import dtypes


def test_dtype_compares_with_names_numpy_and_types():
    assert rt.float32 == "float32"
    assert rt.float32 == np.float32
    assert rt.float32 == np.dtype("float32")
    assert rt.float32 != rt.float64
    assert rt.bool == "bool" and rt.bool == np.bool_
    assert repr(rt.int64) == "autostatic_runtime.int64"
    assert hash(rt.float32) == hash("float32")


def test_convert_dtype_rejects_unknown_names_with_the_choices():
    with pytest.raises(TypeError, match="unknown dtype 'float7'.*float32"):
        dtypes.convert_dtype("float7")
    assert dtypes.convert_dtype(float) is rt.float32
    assert dtypes.convert_dtype(int) is rt.int64
    assert dtypes.convert_dtype(bool) is rt.bool


@pytest.mark.parametrize(
    "a, b, want",
    [
        ("int32", "int64", "int64"),
        ("float32", "float64", "float64"),
        ("int64", "float32", "float32"),
        ("bool", "int32", "int32"),
        ("float16", "int64", "float16"),
        ("bool", "float64", "float64"),
    ],
)
def test_promotion_follows_paddle(a, b, want):
    assert dtypes.promote(dtypes.convert_dtype(a), dtypes.convert_dtype(b)) == want
    x = rt.ones([2], dtype=a)
    y = rt.ones([2], dtype=b)
    assert (x + y).dtype == want
    assert (y * x).dtype == want


def test_python_scalars_take_the_tensor_dtype():
    i = rt.to_tensor([1, 2], dtype="int32")
    assert (i + 1).dtype == rt.int32
    assert (i + 0.5).dtype == rt.float32
    f = rt.to_tensor([1.0], dtype="float64")
    assert (f * 2).dtype == rt.float64
    assert (rt.to_tensor([True]) + 1).dtype == rt.int64
    np.testing.assert_allclose((i + 0.5).numpy(), [1.5, 2.5])


@pytest.mark.parametrize(
    "strong, weak, want",
    [
        ("int32", "int64", "int32"),  # y_int32 + i: i is a Python int eagerly
        ("int16", "int64", "int16"),
        ("float16", "float32", "float16"),
        ("int32", "float32", "float32"),  # a Python float meeting ints: the default float
        ("bool", "int64", "int64"),
        ("float64", "int64", "float64"),
    ],
)
def test_a_weak_symbolic_value_promotes_like_the_python_number_it_stands_for(strong, weak, want):
    from autostatic_runtime import static

    assert dtypes.weak_result(dtypes.convert_dtype(strong), dtypes.convert_dtype(weak)) == want
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            x = static.data("x", [2], strong)
            i = rt.full([], 1, weak)
            i._weak = True
            assert (x + i).dtype == want and (i * x).dtype == want
            assert not (x + i)._weak  # a tensor's result is a tensor
            assert (i + 1)._weak and (-i)._weak and (i - i)._weak  # numbers' results are numbers
            assert (i + rt.full([], 1, weak)).dtype == weak  # two tensors: the usual rules
    finally:
        rt.disable_static()


def test_true_division_of_ints_gives_float32():
    out = rt.to_tensor([3, 4]) / rt.to_tensor([2, 2])
    assert out.dtype == rt.float32
    np.testing.assert_allclose(out.numpy(), [1.5, 2.0])
    assert (rt.to_tensor([7]) // 2).dtype == rt.int64


def test_default_dtype_can_change_to_float64():
    rt.set_default_dtype("float64")
    assert rt.to_tensor([1.0]).dtype == rt.float64
    assert rt.zeros([2]).dtype == rt.float64
    with pytest.raises(TypeError, match="float"):
        rt.set_default_dtype("int32")
