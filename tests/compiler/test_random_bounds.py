"""Random creators whose bounds or parameters the program computes (``rt.randint(0, n)`` with
a traced ``n``, ``x.shape[0]`` of an unknown batch, a loop counter): eager's values and
dtypes where the range holds one value, eager's distribution and error otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from tests.idioms.harness import check


def arange_of_a_one_value_range(n):
    k = rt.randint(n, n + 1, [])
    return rt.arange(k), k


def row_picked_below_the_batch(x):
    i = rt.randint(0, x.shape[0], [2])
    return rt.gather(x, i * 0), i.dtype == rt.int64


def range_of_random_length_in_tensor_loop(n):
    t = rt.to_tensor([1])
    i = 0
    while i < n:
        t = rt.arange(rt.randint(2, 3, [], dtype="int32"))
        i += 1
    return t


def uniform_between_traced_bounds(x):
    u = rt.uniform([8], min=x, max=x + 0.5)
    return rt.logical_and(u >= x, u < x + 0.5).all()


def normal_with_traced_mean(x):
    return rt.normal(x, x * 0.0, [3])


def test_traced_bounds_give_eagers_values_where_the_range_holds_one():
    check(arange_of_a_one_value_range, [(np.int64(3),), (np.int64(0),)], grad=False)
    x = np.arange(10, dtype="float32").reshape(5, 2)
    check(row_picked_below_the_batch, [(x,), (x[:3],)], grad=False, input_spec="batch")
    check(range_of_random_length_in_tensor_loop, [(np.int64(2),), (np.int64(0),)], grad=False)
    check(uniform_between_traced_bounds, [(np.float32(2.0),)], grad=False)
    check(normal_with_traced_mean, [(np.float32(1.5),)], grad=False)


def test_values_cover_the_traced_range_with_the_requested_dtype():
    draw = autostatic.to_static(lambda n: rt.randint(1, n, [600], dtype="int32"))
    values = draw(rt.to_tensor(4)).numpy()
    assert values.dtype == np.int32
    assert set(np.unique(values)) == {1, 2, 3}
    assert np.bincount(values)[1:].min() > 120  # about 200 each


def test_an_empty_traced_range_raises_eagers_error_when_the_program_runs():
    def draw(low):
        return rt.randint(low, 5, [2])

    sf = autostatic.to_static(draw, input_spec=[InputSpec([], "int64")])
    assert sf(rt.to_tensor(4)).numpy().tolist() == [4, 4]
    with pytest.raises(rt.OpError, match="randint: high .*greater than low") as eager:
        draw(rt.to_tensor(5))
    with pytest.raises(rt.OpError, match="randint: high must be greater than low") as static:
        sf(rt.to_tensor(5))
    assert type(static.value) is type(eager.value)
