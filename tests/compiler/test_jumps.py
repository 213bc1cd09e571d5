"""Early return, break and continue under tensor conditions: lowered to flags, then ops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import StaticBuildError
from tests.compiler.test_symbolic_path import eager, op_types, run, trace


def early(x):
    if rt.mean(x) > 0:
        return x * 2
    return -x


def early_nested(x):
    if rt.sum(x) > 0:
        if rt.max(x) > 3:
            return x + 100
        y = x + 1
    else:
        return x - 1
    y = y * 3
    return y


def returns_in_elif_chain(x):
    s = rt.sum(x)
    if s > 10:
        return s * 0
    elif s > 0:
        return s + 1
    else:
        return s - 1


def search_with_break(x):
    i = rt.full([], 0, "int64")
    n = rt.shape(x)[0]
    while i < n:
        if x[i] > 2:
            break
        i = i + 1
    return i


def sum_positive_with_continue(x):
    i = rt.full([], 0, "int64")
    total = rt.zeros([], "float32")
    while i < rt.shape(x)[0]:
        v = x[i]
        i = i + 1
        if v < 0:
            continue
        total = total + v
    return total


def while_else_after_break(x):
    i = rt.full([], 0, "int64")
    found = rt.full([], -1, "int64")
    while i < 4:
        if x[i] > 0:
            found = i
            break
        i = i + 1
    else:
        found = found - 10
    return found


def return_inside_python_loop(x):
    for k in range(3):
        if rt.sum(x) > k:
            return x + k
    return x * 0


CASES = [early, early_nested, returns_in_elif_chain, search_with_break,
         sum_positive_with_continue, while_else_after_break, return_inside_python_loop]  # fmt: skip
vectors = hnp.arrays(np.float32, 4, elements=st.floats(-5, 5, width=32))


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
@settings(max_examples=25, deadline=None)
@given(x=vectors)
def test_static_result_equals_eager(fn, x):
    main, outs = trace(fn, x)
    assert {"cond"} <= op_types(main) or "while" in op_types(main)
    got = run(main, outs, x)
    for g, w in zip(got, eager(fn, x)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_break_in_tensor_loop_builds_a_while_op_with_a_flag():
    main, _ = trace(search_with_break, np.zeros(3, "float32"))
    (loop,) = [op for op in main.global_block().ops if op.type == "while"]
    assert "cond" in op_types(main)
    code = autostatic.to_code(search_with_break)
    # the flag set by the Python path; the rest of the body is the if's else (no guard)
    assert "(True, i) if __pred_3 else (__break_0, i + 1)" in code


def test_branches_returning_a_tensor_and_none_are_a_clear_error():
    def maybe(x):
        if rt.mean(x) > 0:
            return x
        print("no value")  # falls off the end: returns None

    with pytest.raises(StaticBuildError, match="return a tensor on every path"):
        trace(maybe, np.ones(2, np.float32))


def test_lowered_functions_still_run_eagerly():
    x = rt.to_tensor([1.0, -2.0, 3.0, 5.0])
    for fn in CASES:
        got = autostatic.convert(fn)(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(fn(x)))


def test_return_inside_a_tensor_loop():
    def find(x):
        i = rt.full([], 0, "int64")
        while i < 4:
            if x[i] > 0:
                return i
            i = i + 1
        return i * 0 - 1

    for values in ([-1.0, 2.0, 3.0, 0.0], [-1.0, -2.0, -3.0, 0.0], [5.0, 1.0, 1.0, 1.0]):
        arr = np.array(values, np.float32)
        main, outs = trace(find, arr)
        assert int(run(main, outs, arr)[0]) == int(eager(find, arr)[0])
    got = autostatic.convert(find)(rt.to_tensor([-1.0, 2.0, 3.0, 0.0]))
    assert int(got) == 1  # eager: as written


def test_hundreds_of_sequential_early_returns_convert(tmp_path, monkeypatch):
    source = "def pick(x):\n" + "".join(
        f"    if x == {i}:\n        return {i}\n" for i in range(300)
    ) + "    return -1\n"
    (tmp_path / "many_returns.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import many_returns

    from autostatic import conversion

    converted = conversion.convert_code(many_returns.pick)  # no RecursionError
    lines = [line for line in converted.source.splitlines() if line.strip()]
    assert len(lines) < 12 * source.count("\n")  # linear in the number of returns
    fn = autostatic.convert(many_returns.pick)
    assert [fn(5), fn(299), fn(1000)] == [5, 299, -1]


def first_over(x, limit):
    found = rt.full([], -1, "int64")
    i = rt.full([], 0, "int64")
    while i < x.shape[0]:
        if x[i] > limit:
            found = i
            break
        i = i + 1
    if found < 0:
        return -100  # a constant return under a tensor condition
    return found * 1


def test_branches_that_only_set_constants_need_no_function():
    """``return -100`` under a tensor ``if`` lowers to a branch that only sets constants: a
    ``passthrough`` with the value, not a generated function; the program takes it."""
    code = autostatic.to_code(first_over)
    assert "values=((0, -100),))" in code  # a passthrough with the value
    main, outs = trace(lambda v: first_over(v, 4.0), np.zeros([4], np.float32))
    assert {"while", "cond"} <= op_types(main)
    for x, want in (([1.0, 5.0, 7.0, 2.0], 1), ([1.0, 2.0, 3.0, 0.0], -100)):
        assert int(run(main, outs, np.array(x, np.float32))[0]) == want


def first_index_over(x, limit):
    for i in range(x.shape[0]):
        if x[i] > limit:
            return i  # a returned variable: the branch copies an input
    return -1


def swap_or_keep(x, y):
    if x.sum() > y.sum():
        x, y = y, x  # a tuple assignment computes: a function, not a passthrough
    if x.mean() > 0:
        z = y  # copies only
    else:
        z = x
        w = z  # noqa: F841 (read after its own assignment in the branch: not the input z)
    return z


def test_branches_that_only_copy_inputs_need_no_function():
    """``return i`` under a tensor ``if`` lowers to ``__retval = i; __do_return = True``: a
    ``passthrough`` that gives the return value the input ``i``; the programs take it."""
    code = autostatic.to_code(first_index_over)
    assert "_jst.passthrough((0, 2), values=((0, True),))" in code  # __retval = i (input 2)
    main, outs = trace(lambda v: first_index_over(v, 4.0), np.zeros([4], np.float32))
    assert "cond" in op_types(main)
    for x, want in (([1.0, 5.0, 7.0, 2.0], 1), ([1.0, 2.0, 3.0, 0.0], -1)):
        assert int(run(main, outs, np.array(x, np.float32))[0]) == want
    code = autostatic.to_code(swap_or_keep)
    assert code.count("_jst.passthrough(") == 2  # `z = y`, and the else of the swap
    main, outs = trace(swap_or_keep, np.zeros([3], np.float32), np.zeros([3], np.float32))
    for x, y in (([1.0, 2.0, 3.0], [0.0, -1.0, -5.0]), ([-1.0, -2.0, 0.0], [1.0, 1.0, 1.0])):
        x, y = np.array(x, np.float32), np.array(y, np.float32)
        want = swap_or_keep(rt.to_tensor(x), rt.to_tensor(y))
        np.testing.assert_array_equal(run(main, outs, x, y)[0], np.asarray(want))


def test_passthrough_gives_inputs_missing_markers_and_constants():
    from autostatic_runtime.convert_ops import PLACEHOLDER, UNDEFINED, passthrough

    assert passthrough((1, 0, -1))("a", "b") == ("b", "a", UNDEFINED)
    branch = passthrough((0, -2, -1), values=((2, "done"),))
    assert branch("a") == ("a", PLACEHOLDER, "done")


def first_negative(x):
    i = rt.full([], 0, "int64")
    while i < x.shape[0]:
        for j in range(2):  # an inner loop that returns: the outer one leaves too
            if x[i] * (j + 1) < -5:
                return i * 10 + j
        if x[i] < 0:
            return i
        i = i + 1
    return i * 0 - 1


def test_a_loop_left_only_by_returns_breaks_on_the_return_flag():
    code = autostatic.to_code(first_negative)
    assert "__break" not in code  # no flag of its own: `not __do_return and <test>`
    main, outs = trace(first_negative, np.zeros([4], np.float32))
    assert "while" in op_types(main)
    for x in ([1.0, 2.0, -1.0, -9.0], [1.0, -6.0, 3.0, 0.0], [1.0, 2.0, 3.0, 4.0]):
        x = np.array(x, np.float32)
        want = first_negative(rt.to_tensor(x))
        assert int(run(main, outs, x)[0]) == int(np.asarray(want))


def where_it_broke(x, limit):
    for i in range(4):  # a Python loop: a tensor `break` cannot stop it
        if x[i] > limit:
            break
    return i  # the item where it broke, not the last one


def sum_until_over(x, limit):
    total = x[0] * 0
    for i in [0, 1, 2, 3]:
        if i == 2:
            continue
        if total > limit:
            break
        total = total + x[i]
    else:
        total = total - 100
    return total * 10 + i


def nested_search(x, limit):
    total = x[0] * 0
    for i in range(3):
        for j in range(2):
            if x[i + j] > limit:
                break
            total = total + j
        else:
            total = total + 100
        if total > 150:
            break
    return total * 10 + i + j


@pytest.mark.parametrize("fn", [where_it_broke, sum_until_over, nested_search])
def test_a_python_loop_after_a_tensor_break(fn):
    """After a tensor ``break``, the rest of a Python ``for`` runs each body under the flag
    (``convert_for_loop`` over the iterator's other items): the target keeps the item where
    it broke and nothing after the break counts, as eagerly."""
    code = autostatic.to_code(fn)
    assert ":= iter(" in code and "is not False:" in code
    main, outs = trace(lambda v: fn(v, 2.0), np.zeros([4], np.float32))
    assert "cond" in op_types(main)
    rows = [[0.0, 1.0, 3.0, 1.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [5.0, 1.0, 9.0, 9.0]]
    for x in rows + [[-1.0, 2.5, 1.0, 0.0], [1.0, 1.0, 1.0, 3.0]]:
        x = np.array(x, np.float32)
        want = np.asarray(fn(rt.to_tensor(x), 2.0))
        np.testing.assert_allclose(run(main, outs, x)[0], want)


def test_the_rest_of_a_python_loop_after_a_break_on_a_python_value_is_not_run(monkeypatch):
    import autostatic_runtime.convert_ops as convert_ops

    calls = []

    def items():
        for k in range(5):
            calls.append(k)
            yield k

    def first_over(limit):
        for k in items():
            if k > limit:
                break
        return k

    converted = autostatic.convert(first_over)
    assert "python_items(" in autostatic.to_code(first_over)  # the user's loop, then hand_over
    monkeypatch.setattr(convert_ops, "tracing", True)  # the converted body runs
    assert converted(1) == 2
    assert calls == [0, 1, 2]  # the items after the break were never fetched


def first_weight_over(x, limit, weights=(1.0, 2.0, 3.0, 4.0)):
    total = x[0] * 0
    for v in weights:  # a Python loop left by a tensor `return`
        if total + v * x[1] > limit:
            return total
        total = total + v * x[1]
    return total - 1


def rows_until_negative(x):
    total = x[0] * 0
    for row in x:  # a tensor iterable: the loop is one convert_for_loop
        if row.sum() < 0:
            break
        total = total + row
    return total


@pytest.mark.parametrize("fn", [first_weight_over, rows_until_negative])
def test_a_loop_left_by_a_flag_hands_its_items_over_after_the_users_loop(fn):
    """The user's loop steps ``python_items`` (nothing when the iterable is symbolic) and
    leaves when the flag is set; ``hand_over`` then gives ``convert_for_loop`` the symbolic
    iterable, or the other items after a tensor ``break``/``return``."""
    code = autostatic.to_code(fn)
    assert "_jst.python_items(" in code and "_jst.hand_over(" in code
    assert "is_symbolic_iterable" not in code
    x0 = np.zeros([4, 2], np.float32) if fn is rows_until_negative else np.zeros([2], np.float32)
    args = (lambda v: fn(v, 5.0)) if fn is first_weight_over else fn
    main, outs = trace(args, x0)
    assert {"cond"} <= op_types(main) or {"while"} <= op_types(main)
    rng = np.random.default_rng(0)
    for _ in range(8):
        x = rng.normal(size=x0.shape).astype(np.float32) * 2
        t = rt.to_tensor(x)
        want = np.asarray(fn(t, 5.0) if fn is first_weight_over else fn(t))
        np.testing.assert_allclose(run(main, outs, x)[0], want, rtol=1e-6)


def test_hand_over_gives_the_symbolic_iterable_or_the_rest_after_a_tensor_flag():
    from autostatic_runtime.convert_loops import hand_over, python_items

    items = python_items([1, 2, 3])
    assert next(items) == 1
    assert hand_over(items, False) is None and hand_over(items, True) is None
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            sym = static.data("x", [3], "float32")
            assert list(python_items(sym)) == []  # no Python items: the loop runs no body
            assert hand_over(python_items(sym), False) is sym
            assert hand_over(items, sym > 0) is items  # a tensor flag: the other items
    finally:
        rt.disable_static()


def first_product_over(xs, ys, limit):
    for a in xs:  # a nest left by a `return`: the inner hand_over ends the outer items
        for b in ys:
            if a * b > limit:
                return a - b
    return limit * 0


@pytest.mark.parametrize("xs_kind", ["list", "tensor"])
@pytest.mark.parametrize("ys_kind", ["list", "tensor"])
def test_a_nest_left_by_a_return_stops_each_level_by_its_inner_hand_over(xs_kind, ys_kind):
    """Each level of a nest whose body ends with an inner loop left by the same flag steps
    ``python_items(xs, True)``: no leave of its own, the inner ``hand_over`` stops it once the
    flag is set or the inner loop was handed over, and its own ``hand_over`` steps the rest."""
    code = autostatic.to_code(first_product_over)
    assert "_jst.python_items(xs, True)" in code and "_jst.python_items(ys))" in code
    assert code.count("is not False") == 1  # only the innermost loop leaves by a break
    rng = np.random.default_rng(1)
    for _ in range(6):
        xv = (rng.normal(size=3) * 2).astype(np.float32)
        yv = (rng.normal(size=2) * 2).astype(np.float32)
        limit = np.float32(rng.normal())
        xs = rt.to_tensor(xv) if xs_kind == "tensor" else [float(v) for v in xv]
        ys = rt.to_tensor(yv) if ys_kind == "tensor" else [float(v) for v in yv]

        def fn(lim, xs=xs, ys=ys):
            return first_product_over(xs, ys, lim)

        main, outs = trace(fn, np.zeros([], np.float32))
        want = np.asarray(first_product_over(xv, yv, limit), np.float32)
        np.testing.assert_allclose(run(main, outs, limit)[0], want, rtol=1e-6)


def test_a_nest_left_by_a_python_return_fetches_no_item_after_it(monkeypatch):
    import autostatic_runtime.convert_ops as convert_ops

    pulled = []

    def items(tag, n):
        for k in range(n):
            pulled.append((tag, k))
            yield k

    def find(limit):
        for a in items("a", 4):
            for b in items("b", 3):
                for c in items("c", 3):
                    if a + b + c > limit:
                        return a, b, c
        return None

    converted = autostatic.convert(find)
    monkeypatch.setattr(convert_ops, "tracing", True)  # the converted body runs
    for limit in (-1, 0, 3, 5, 6, 9):
        pulled.clear()
        got = converted(limit)
        want_pulled = list(pulled)
        monkeypatch.setattr(convert_ops, "tracing", False)
        pulled.clear()
        assert got == find(limit) and want_pulled == pulled
        monkeypatch.setattr(convert_ops, "tracing", True)


def test_hand_over_stops_the_outer_items_once_the_flag_is_set_or_the_loop_handed_over():
    from autostatic_runtime.convert_loops import hand_over, python_items

    outer = python_items(iter([1, 2, 3]), True)
    steps = iter(outer)
    assert next(steps) == 1
    assert hand_over(python_items([5]), False, outer) is None and not outer.stopped
    assert hand_over(python_items([5]), True, outer) is None and outer.stopped
    assert list(steps) == []  # stopped: no further item is taken
    assert hand_over(outer, True) is None  # a Python return: nothing is left to step
    outer = python_items([1, 2, 3], True)
    steps = iter(outer)
    next(steps)
    rest = python_items([7, 8])
    assert hand_over(rest, False, outer) is None
    outer.stopped = True  # as after an inner loop handed over that left the flag False
    assert list(hand_over(outer, False)) == [2, 3]  # the rest goes to convert_for_loop


def skip_negatives(x):
    total = x[0] * 0
    count = 0
    for k in range(4):
        v = x[k]
        if v < 0:  # `if not v < 0: <the rest>`: no flag
            continue
        if v > 5:
            total = total - v
            continue
        else:
            count += 1
        total = total + v * count
    return total


def skip_negatives_in_a_tensor_loop(x):
    i = rt.full([], 0, "int64")
    s = x[0] * 0
    while i < 4:  # a while op: the continues are conds inside its body
        i = i + 1
        if x[i - 1] < 0:
            continue
        if x[i - 1] > 2:
            s = s - 1
            continue
        s = s + x[i - 1]
    return s


@pytest.mark.parametrize("fn", [skip_negatives, skip_negatives_in_a_tensor_loop])
def test_a_continue_ending_an_if_at_the_top_of_a_loop_body_needs_no_flag(fn):
    """``if c: A; continue`` then the rest of the body is ``if c: A else: <the rest>``: the
    same statements run, the symbolic form is one cond per ``if``, no continue flag."""
    code = autostatic.to_code(fn)
    assert "__continue" not in code
    main, outs = trace(fn, np.zeros([4], np.float32))
    assert "cond" in op_types(main)
    rng = np.random.default_rng(3)
    for _ in range(8):
        x = (rng.normal(size=4) * 4).astype(np.float32)
        want = np.asarray(fn(rt.to_tensor(x)))
        np.testing.assert_allclose(run(main, outs, x)[0], want, rtol=1e-6)


def test_a_continue_rewritten_as_else_evaluates_each_test_once_in_order(monkeypatch):
    import autostatic_runtime.convert_ops as convert_ops

    seen = []

    def check(tag, value):
        seen.append(tag)
        return value

    def walk(items):
        out = []
        for v in items:
            if check(("neg", v), v < 0):
                continue
            out.append(v)
            if check(("big", v), v > 2):  # the last statement: nothing after it
                continue
        return out

    converted = autostatic.convert(walk)
    monkeypatch.setattr(convert_ops, "tracing", True)  # the converted body runs
    got = converted([1, -1, 3, 0])
    monkeypatch.setattr(convert_ops, "tracing", False)
    got_seen, seen[:] = list(seen), []
    assert got == walk([1, -1, 3, 0]) and got_seen == seen


# ---- a jump in a finally block ----------------------------------------------------------


def continue_in_finally_on_a_tensor(x):
    s = x * 0
    for v in x:
        try:
            s = s + v
        finally:
            if v > 2:  # a tensor: the continue is a flag of the while op
                continue  # noqa: B012
        s = s + 100
    return s


def continue_in_finally_while_raising(x):
    for v in x:
        try:
            raise KeyError("in flight")
        finally:
            if v > 2:
                continue  # noqa: B012
    return x


def test_a_jump_in_finally_on_a_tensor_builds_its_flag_into_the_loop():
    x = np.array([1.0, 3.0, 5.0, 0.5], np.float32)
    main, outs = trace(continue_in_finally_on_a_tensor, x)
    assert "while" in op_types(main)
    np.testing.assert_allclose(run(main, outs, x)[0], eager(continue_in_finally_on_a_tensor, x)[0])


def test_a_tensor_jump_in_finally_with_an_exception_in_flight_is_a_clear_error():
    x = np.array([1.0, 3.0], np.float32)
    with pytest.raises(StaticBuildError, match="break/continue depends on a tensor") as info:
        trace(continue_in_finally_while_raising, x)
    assert "test_jumps.py" in str(info.value)


def test_a_python_jump_in_finally_discards_the_exception_in_the_tracing_body(monkeypatch):
    from autostatic_runtime import convert_ops

    converted = autostatic.convert(continue_in_finally_while_raising)
    monkeypatch.setattr(convert_ops, "tracing", True)
    assert converted([3, 4]) == [3, 4]  # each KeyError discarded by the continue
    with pytest.raises(KeyError, match="in flight"):
        converted([3, 1])
