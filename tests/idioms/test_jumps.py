"""Idioms: ``return`` inside tensor-dependent ``while``/``for`` loops at any depth, mixed with
``break``/``continue``; ``break`` and ``continue`` in one loop (kind 6)."""

import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, arr, case, rand, run_case


def return_row_in_for_range(x):
    for i in range(rt.shape(x)[0]):
        if rt.sum(x[i]) > 1.0:
            return x[i]
    return rt.zeros_like(x[0])


def return_index_in_while(x):
    i = rt.to_tensor(0)
    while i < rt.shape(x)[0]:
        if x[i] < 0:
            return i
        i += 1
    return i


def return_in_nested_for(x):
    for i in range(rt.shape(x)[0]):
        for j in range(rt.shape(x)[1]):
            if x[i, j] > 0.9:
                return x[i] * 2, j
    return x[0], rt.to_tensor(-1, dtype="int64")


def return_or_break_in_while(x):
    i = 0
    total = rt.zeros([1], "float32")
    while i < rt.shape(x)[0]:
        v = x[i]
        if v > 5:
            return total * -1
        if v < 0:
            break
        total = total + v
        i += 1
    return total


def return_tuple_in_for_over_tensor(x):
    acc = rt.zeros([3], "float32")
    for row in x:
        acc = acc + row
        if rt.max(acc) > 1.5:
            return acc, rt.max(acc)
    return acc, rt.min(acc)


def continue_then_break(x):
    total = rt.zeros([1], "float32")
    for i in range(rt.shape(x)[0]):
        if x[i] < 0:
            continue
        total = total + x[i]
        if total > 2.0:
            break
    return total


def break_on_tensor_counter(x):
    n = rt.to_tensor(0)
    s = rt.zeros([1], "float32")
    while n < 10:
        s = s + rt.sum(x) * 0.1
        n += 1
        if s > 1.0:
            break
    return s, n


def continue_over_tensor_rows(x):
    kept = rt.zeros([3], "float32")
    for row in x:
        if rt.mean(row) < 0:
            continue
        kept = kept + row
    return kept


def break_in_inner_loop_only(x):
    total = rt.zeros([1], "float32")
    for i in range(rt.shape(x)[0]):
        for j in range(rt.shape(x)[1]):
            if x[i, j] < 0:
                break
            total = total + x[i, j]
    return total


def return_in_while_true(x):
    h = x
    steps = 0
    while True:
        h = h * 0.5
        steps += 1
        if rt.max(rt.abs(h)) < 0.1:
            return h, steps
        if steps >= 20:
            return h, -1


def return_in_if_inside_while_else_break(x):
    i = rt.to_tensor(0)
    out = rt.zeros([1], "float32")
    while i < rt.shape(x)[0]:
        if x[i] > 0.5:
            return x[i : i + 1] * 10  # the same rank as `out`: a cond joins both returns
        elif x[i] < -0.5:
            break
        out = out + x[i]
        i += 1
    return out


def returns_of_different_ranks(x):
    i = rt.to_tensor(0)
    out = rt.zeros([1], "float32")
    while i < rt.shape(x)[0]:
        if x[i] > 0.5:
            return x[i] * 10  # rank 0 here, rank 1 below: the value the program takes
        out = out + x[i]
        i += 1
    return out


def for_else_with_tensor_break(x):
    found = -1
    for i in range(rt.shape(x)[0]):
        if x[i] > 0.5:
            found = i
            break
    else:
        found = len(x)
    return found


def continue_and_break_in_while(x):
    i = 0
    s = rt.zeros([1], "float32")
    while i < rt.shape(x)[0]:
        i += 1
        if x[i - 1] < 0:
            continue
        if s + x[i - 1] > 2:
            break
        s = s + x[i - 1]
    return s, i


def return_from_enumerate_loop(x):
    for k, row in enumerate(x):
        if rt.sum(row) < 0:
            return row, k
    return x[-1], -1


def helper_with_loop_return(v, limit):
    for i in range(rt.shape(v)[0]):
        if rt.sum(v[: i + 1]) > limit:
            return v[: i + 1].sum()
    return v.sum()


def return_in_loop_of_helper(x):
    return helper_with_loop_return(x, 1.0) + helper_with_loop_return(-x, 0.5)


def return_three_levels_deep(x):
    if rt.sum(x) > -100:
        for i in range(rt.shape(x)[0]):
            j = 0
            while j < rt.shape(x)[1]:
                if x[i, j] > 0.95:
                    return x[i] * j
                j += 1
    return x[0] * -1


def break_outer_via_flag_continue_inner(x):
    total = rt.zeros([1], "float32")
    stop = False
    for i in range(rt.shape(x)[0]):
        for j in range(rt.shape(x)[1]):
            if x[i, j] < 0:
                continue
            total = total + x[i, j]
            if total > 2:
                stop = True
                break
        if stop:
            break
    return total


def continue_in_while_over_python_counter(x):
    i = 0
    pos = rt.zeros([1], "float32")
    while i < 5:
        i += 1
        if x[i - 1] <= 0:
            continue
        pos = pos + x[i - 1]
    return pos


V1 = arr(0.3, -0.2, 0.9, 1.2, -0.4)
V2 = arr(-0.1, 0.4, 0.2, -0.3, 0.1)
V3 = arr(1.0, 6.0, 2.0)
M1 = rand(3, 3, seed=11, low=-0.2, high=1.0)
M2 = rand(3, 3, seed=12, low=-1.0, high=0.3)

CASES = [
    case(return_row_in_for_range, [(M1,), (M2,)], kind="6", input_spec="batch"),
    case(return_index_in_while, [(V1,), (V2,), (abs(V2),)], kind="6", input_spec="batch"),
    case(return_in_nested_for, [(M1,), (M2,)], kind="6"),
    case(return_or_break_in_while, [(V3,), (V1,), (abs(V2),)], kind="6", input_spec="batch"),
    case(return_tuple_in_for_over_tensor, [(M1,), (M2,)], kind="6", input_spec="batch"),
    case(continue_then_break, [(V1,), (V2,), (V3,)], kind="6", input_spec="batch"),
    case(break_on_tensor_counter, [(M1,), (M2,)], kind="6"),
    case(continue_over_tensor_rows, [(M1,), (M2,)], kind="6", input_spec="batch"),
    case(break_in_inner_loop_only, [(M1,), (M2,)], kind="6"),
    case(return_in_while_true, [(M1,), (M2 * 0.1,)], kind="6"),
    case(return_in_if_inside_while_else_break, [(V1,), (V2,), (arr(0.1, -0.9),)], kind="6",
         input_spec="batch"),
    case(returns_of_different_ranks, [(V1,), (V2,)], kind="6", input_spec="batch"),
    case(for_else_with_tensor_break, [(V1,), (V2,)], kind="6", input_spec="batch", grad=False),
    case(continue_and_break_in_while, [(V1,), (V2,), (V3,)], kind="6", input_spec="batch"),
    case(return_from_enumerate_loop, [(M1,), (M2,)], kind="6", input_spec="batch"),
    case(return_in_loop_of_helper, [(V1,), (V2,)], kind="6", input_spec="batch"),
    case(return_three_levels_deep, [(M1,), (M2,)], kind="6", input_spec="batch"),
    case(break_outer_via_flag_continue_inner, [(M1,), (M2,)], kind="6", input_spec="batch"),
    case(continue_in_while_over_python_counter, [(V1,), (V2,)], kind="6"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)
