"""An op that fails while a traced program runs raises the exception type the same call raises
eagerly (a ``ShapeError`` for stacking an empty list, Python's ``IndexError`` for popping one),
with the line of the user's code that built the op in its message; never a wrapper type."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime.errors import AutostaticError


def eager_and_static_errors(fn, *args, input_spec=None, backend=None) -> tuple:
    """(eager exception, static exception) of ``fn(*args)``; both must raise."""
    with pytest.raises(Exception) as eager:
        fn(*args)
    options = {} if backend is None else {"backend": backend}
    with pytest.raises(Exception) as static:
        autostatic.to_static(fn, input_spec=input_spec, **options)(*args)
    return eager.value, static.value


def assert_same_error(fn, *args, **kw) -> BaseException:
    """Eager and static raise exceptions of one type; the static one names a line of ``fn``."""
    eager, static = eager_and_static_errors(fn, *args, **kw)
    assert type(static) is type(eager), (
        f"eager {type(eager).__name__}: {eager}\nstatic {type(static).__name__}: {static}"
    )
    lines, first = inspect.getsourcelines(fn)
    name = os.path.basename(__file__)
    assert any(f"{name}:{n}" in str(static) for n in range(first, first + len(lines))), static
    return static


# ---- lists appended to in tensor loops ---------------------------------------------------


def squares_upto(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return rt.stack(out)


def rows_of_counts(rows, cols):
    table = []
    for _ in range(rows):
        row = []
        for j in range(cols):
            row.append(j)
        table.append(rt.stack(row))
    return rt.stack(table)


def drain(n):
    stack = [10, 20, 30]
    total = 0
    for _ in range(n):
        total += stack.pop()
    return total


def halve_until_small(x):
    seen = []
    while x > 1.0:
        x = x / 2.0
        seen.append(x)
    return seen.pop(), seen.pop()


def third_item(n):
    items = []
    k = 0
    while k < n:
        items.append(k)
        k += 1
    return items[2]


@pytest.mark.parametrize(
    "fn, args",
    [
        (squares_upto, (0,)),
        (rows_of_counts, (0, 3)),
        (rows_of_counts, (2, 0)),
        (drain, (4,)),
        (halve_until_small, (1.5,)),
        (third_item, (2,)),
    ],
    ids=[
        "stack_empty",
        "stack_outer_empty",
        "stack_inner_empty",
        "pop_past_end",
        "pop_twice_after_one_append",
        "index_past_end",
    ],  # fmt: skip
)
def test_a_list_of_a_tensor_loop_fails_as_the_python_list_does(fn, args):
    tensors = [rt.to_tensor(a) for a in args]
    err = assert_same_error(fn, *tensors)
    assert not isinstance(err, rt.errors.ExecutionError)


def test_the_lists_error_types_are_shape_and_index_errors():
    assert isinstance(assert_same_error(squares_upto, rt.to_tensor(0)), rt.ShapeError)
    popped = assert_same_error(drain, rt.to_tensor(4))
    assert type(popped) is IndexError and "pop" in str(popped)


# ---- tensor ops whose failure shows only at run time -------------------------------------


def row_after_count(x, n):
    i = 0
    while i < n:
        i += 1
    return x[i]


def pick(x, index):
    return rt.gather(x, index)


def as_rows_of_four(x):
    return rt.reshape(x, [-1, 4])


def test_an_index_past_the_end_at_run_time_is_eagers_index_error():
    x = rt.to_tensor(np.ones([3, 2], "float32"))
    err = assert_same_error(row_after_count, x, rt.to_tensor(5))
    assert isinstance(err, IndexError) and "out of range for dim 0 of size 3" in str(err)


def test_a_gather_out_of_range_is_eagers_op_index_error():
    x = rt.to_tensor(np.ones([3, 2], "float32"))
    err = assert_same_error(pick, x, rt.to_tensor([0, 7]))
    assert isinstance(err, IndexError) and isinstance(err, AutostaticError)


def test_a_shape_known_only_at_run_time_fails_as_eager_reshape():
    x = rt.to_tensor(np.ones([3, 2], "float32"))
    err = assert_same_error(as_rows_of_four, x, input_spec=[InputSpec([None, 2])])
    assert isinstance(err, rt.ShapeError) and err.op.startswith("reshape")


def test_a_failure_inside_a_tensor_branch_names_the_branch_line():
    def first_positive(x, k):
        if rt.sum(x) > 0:
            y = x[k]
        else:
            y = x[0]
        return y

    x = rt.to_tensor(np.ones([3], "float32"))
    err = assert_same_error(first_positive, x, rt.to_tensor(9))
    line = first_positive.__code__.co_firstlineno + 2
    assert f"{os.path.basename(__file__)}:{line}" in str(err)


# ---- errors while a program is built -----------------------------------------------------


def stack_of_a_fresh_array(x):
    rows = rt.create_array("float32")
    return rt.stack(rows) + x


def test_stacking_an_array_nothing_was_appended_to_is_eagers_shape_error():
    err = assert_same_error(stack_of_a_fresh_array, rt.to_tensor(1.0))
    assert isinstance(err, rt.ShapeError) and "stack" in str(err)


def look_up_while_counting(n, table):
    i = 0
    while i < n:
        i = i + table["step"]
    return i


def test_a_loop_body_that_raises_while_traced_raises_when_an_iteration_runs():
    """Eager raises only when the loop runs an iteration: the program does too (the error
    surfaced while the program was built before, also for loops that run no iteration)."""
    sf = autostatic.to_static(look_up_while_counting)
    assert int(sf(rt.to_tensor(0), {})) == 0 == look_up_while_counting(rt.to_tensor(0), {})
    with pytest.raises(KeyError) as eager:
        look_up_while_counting(rt.to_tensor(2), {})
    with pytest.raises(KeyError) as static:
        sf(rt.to_tensor(2), {})
    assert type(static.value) is type(eager.value) and static.value.args == eager.value.args


def add_rows(x, y):
    return x + y


def padded_then_added(x, n):
    grown = x
    i = 0
    while i < n:
        grown = rt.concat([grown, x])
        i += 1
    return grown + x


def test_shapes_that_disagree_only_at_run_time_give_eagers_shape_error():
    """The kernel's own failure (NumPy's "operands could not be broadcast") is explained as
    eager mode explains it, from the op's inference on the values it got."""
    spec = [InputSpec([None]), InputSpec([None])]
    err = assert_same_error(add_rows, rt.ones([3]), rt.ones([4]), input_spec=spec)
    assert "shapes [3] and [4] cannot be broadcast" in str(err)
    err = assert_same_error(padded_then_added, rt.ones([2]), rt.to_tensor(1))
    assert "shapes [4] and [2] cannot be broadcast" in str(err)
