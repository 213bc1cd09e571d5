"""Idioms: ``rt.to_tensor``/``rt.assign`` of traced values, lists/tuples of traced scalars and
numbers (kind 1), and casts, ``len``, ``int``, ``print``/``assert`` on tensors (generic)."""

import numpy as np
import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, arr, case, rand, run_case

# ---- kind 1: to_tensor / assign ----------------------------------------------------------


def to_tensor_of_traced_input(x):
    h = rt.to_tensor(x, dtype="float32")
    return rt.nn.functional.relu(h) - 0.5


def to_tensor_of_max_and_min(x):
    return rt.to_tensor([rt.max(x), rt.min(x)])


def to_tensor_scalars_and_numbers(x):
    stats = rt.to_tensor([rt.sum(x), 1.0, rt.mean(x), 2.5])
    return stats * 2


def to_tensor_tuple_in_tensor_if(x):
    if rt.mean(x) > 0:
        v = rt.to_tensor((rt.max(x), 0.0))
    else:
        v = rt.to_tensor((0.0, rt.min(x)))
    return v + 1


def assign_of_traced(x):
    y = rt.assign(x)
    return y * 3 + x


def assign_list_of_scalars(x):
    pair = rt.assign([rt.mean(x), rt.sum(x)])
    return pair - 1


def to_tensor_rows_in_while(x):
    acc = rt.to_tensor([0.0, 0.0])
    i = 0
    while i < rt.shape(x)[0]:
        acc = acc + rt.to_tensor([rt.sum(x[i]), rt.max(x[i])])
        i += 1
    return acc


def to_tensor_pairs_in_for_range(x):
    s = rt.zeros([2], "float32")
    for i in range(rt.shape(x)[0]):
        s = s + rt.to_tensor([x[i, 0], x[i, 1]])
    return s


def to_tensor_of_dims(x):
    dims = rt.to_tensor([x.shape[0], x.shape[1]])
    return rt.cast(dims, "float32") * rt.mean(x)


def to_tensor_with_int_dtype(x):
    k = rt.to_tensor(rt.sum(x) * 10, dtype="int64")
    return k + 1


def to_tensor_nested_list(x):
    m = rt.to_tensor([[rt.max(x), 0.0], [0.0, rt.min(x)]])
    return rt.matmul(m, m)


def to_tensor_of_python_count(x):
    n = 0
    for v in x:
        if v > 0:
            n = n + 1
    return rt.to_tensor(n)


def assign_in_tensor_else(x):
    if rt.sum(x) > 0:
        out = x * 2
    else:
        out = rt.assign([rt.max(x), rt.max(x), rt.max(x)])
    return out


def to_tensor_of_python_list_in_loop(x):
    weights = rt.to_tensor([0.5, 0.25, 0.25])
    out = rt.zeros([3], "float32")
    for row in x:
        out = out + row * weights
    return out


# ---- generic: casts, len, int(), print, assert ------------------------------------------


def cast_then_compare(x):
    n = rt.cast(rt.sum(x), "int32")
    if n > 1:
        return rt.cast(n, "float32") * x
    return x


def astype_in_loop(x):
    total = rt.zeros([1], "int64")
    for v in x:
        total = total + v.astype("int64")
    return total


def int_of_dim_as_bound(x):
    n = int(x.shape[0])
    out = x[0]
    for i in range(1, n):
        out = out + x[i]
    return out


def len_of_tensor(x):
    n = len(x)
    return rt.sum(x) / n


def len_in_tensor_while(x):
    i = 0
    acc = rt.zeros([3], "float32")
    while i < len(x):
        acc = acc + x[i]
        i += 1
    return acc


def float_of_tensor_scalar(x):
    m = float(rt.mean(x))
    return x * m


def print_in_tensor_branch(x):
    if rt.mean(x) > 0:
        print("positive mean", rt.mean(x))
        y = x + 1
    else:
        print("negative mean")
        y = x - 1
    return y


def assert_on_tensor(x):
    assert rt.all(rt.isfinite(x)), "inputs must be finite"
    s = rt.sum(rt.abs(x))
    assert s >= 0
    return s


def bool_cast_in_condition(x):
    flag = rt.cast(rt.max(x) > 0.5, "bool")
    if flag:
        return x * 2
    return x


def isinstance_check(x, bias=None):
    if isinstance(bias, rt.Tensor):
        x = x + bias
    if isinstance(x, rt.Tensor) and rt.sum(x) > 0:
        return x
    return -x


X = rand(4, 3, seed=1)
POS = np.abs(rand(4, 3, seed=2)) + 0.1
NEG = -POS
V = arr(1.0, -2.0, 3.0, 0.5)
VNEG = arr(-1.0, -2.0, 3.0, -0.5)

CASES = [
    case(to_tensor_of_traced_input, [(X,)], kind="1"),
    case(to_tensor_of_max_and_min, [(X,)], kind="1"),
    case(to_tensor_scalars_and_numbers, [(X,)], kind="1"),
    case(to_tensor_tuple_in_tensor_if, [(POS,), (NEG,)], kind="1"),
    case(assign_of_traced, [(X,)], kind="1"),
    case(assign_list_of_scalars, [(X,)], kind="1"),
    case(to_tensor_rows_in_while, [(X,), (POS[:2],)], kind="1", input_spec="batch"),
    case(to_tensor_pairs_in_for_range, [(X,), (POS[:3],)], kind="1", input_spec="batch"),
    case(to_tensor_of_dims, [(X,), (POS[:2],)], kind="1", input_spec="batch"),
    case(to_tensor_with_int_dtype, [(X,)], kind="1", grad=False),
    case(to_tensor_nested_list, [(X,)], kind="1"),
    case(to_tensor_of_python_count, [(V,), (VNEG,)], kind="1", grad=False),
    case(assign_in_tensor_else, [(arr(1.0, 2.0, -0.5),), (arr(-1.0, 2.0, -3.5),)], kind="1"),
    case(to_tensor_of_python_list_in_loop, [(X,)], kind="1", input_spec="batch"),
    case(cast_then_compare, [(POS,), (NEG,)], kind="generic"),
    case(astype_in_loop, [(arr(1, 2, 3, dtype="int32"),)], kind="generic", grad=False),
    case(int_of_dim_as_bound, [(X,)], kind="generic"),
    case(len_of_tensor, [(X,), (POS[:2],)], kind="generic", input_spec="batch"),
    case(len_in_tensor_while, [(X,), (POS[:2],)], kind="generic", input_spec="batch"),
    case(float_of_tensor_scalar, [(X,)], kind="generic"),
    case(print_in_tensor_branch, [(POS,), (NEG,)], kind="generic"),
    case(assert_on_tensor, [(X,)], kind="generic"),
    case(bool_cast_in_condition, [(POS,), (NEG,)], kind="generic"),
    case(isinstance_check, [(POS,), (NEG,)], kind="generic"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)
