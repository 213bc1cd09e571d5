"""Converted functions traced with symbolic inputs build cond/while ops and give eager results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autostatic
import autostatic_runtime as paddle
import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import ShapeError, StaticBuildError


def trace(fn, *arrays):
    """Run converted ``fn`` on data Variables for ``arrays``; return (program, outputs)."""
    converted = autostatic.convert(fn)
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = [static.data(f"a{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
            out = converted(*args)
    finally:
        rt.disable_static()
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return main, outs


def run(main, outs, *arrays):
    feed = {f"a{i}": a for i, a in enumerate(arrays)}
    return static.Executor().run(main, feed, outs)


def op_types(program) -> set[str]:
    return {op.type for b in program.blocks for op in b.ops}


def eager(fn, *arrays):
    out = fn(*[rt.to_tensor(a) for a in arrays])
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [np.asarray(o) for o in outs]


# ---- the seeds' examples ---------------------------------------------------------------


def dyfunc_with_ifElse(x_v):
    if x_v.numpy()[0] > 5:
        x_v = x_v - 1
    else:
        x_v = x_v + 1
    return x_v


def dyfunc_with_nested_ifElse(x_v):
    batch_size = 10
    if x_v.numpy()[0] > 1:
        x_v = x_v + 1
        if x_v.numpy()[0] > 3:
            x_v = x_v * 2
    if batch_size > 5:  # a Python condition stays Python
        x_v = x_v - 1
    return x_v


def not_depend_tensor_if(x, label=None):
    out = x + 1
    if label is not None:
        out = paddle.nn.functional.cross_entropy(out, label)
    return out


def depend_tensor_if(x):
    if paddle.mean(x) > 5.0:
        out = x - 1
    else:
        out = x + 1
    return out


def not_depend_tensor_while(x):
    a = 1
    while a < 10:
        x = x + 1
        a += 1
    return x


def depend_tensor_while(x):
    i = paddle.full([], 0, "int64")
    n = paddle.shape(x)[0]
    while i < n:
        x = x + 1
        i += 1
    return x


@pytest.mark.parametrize("value", [0.0, 2.0, 4.0, 7.0])
def test_seed_if_else_examples(value):
    x = np.full(3, value, np.float32)
    for fn in (dyfunc_with_ifElse, dyfunc_with_nested_ifElse, depend_tensor_if):
        main, outs = trace(fn, x)
        assert "cond" in op_types(main)
        np.testing.assert_allclose(run(main, outs, x)[0], eager(fn, x)[0])


def test_python_conditions_stay_python():
    x = np.ones(3, np.float32)
    for fn in (not_depend_tensor_if, not_depend_tensor_while):
        main, outs = trace(fn, x)
        assert not op_types(main) & {"cond", "while"}
        np.testing.assert_allclose(run(main, outs, x)[0], eager(fn, x)[0])


def test_tensor_while_becomes_a_while_op():
    x = np.zeros((4, 2), np.float32)
    main, outs = trace(depend_tensor_while, x)
    assert "while" in op_types(main)
    np.testing.assert_allclose(run(main, outs, x)[0], eager(depend_tensor_while, x)[0])


# ---- more shapes of control flow -------------------------------------------------------


def elif_chain(x):
    m = rt.mean(x)
    if m > 1:
        y = x * 3
    elif m > 0:
        y = x * 2
    elif m > -1:
        y = x
    else:
        y = -x
    return y


def logic_in_conditions(x):
    m = rt.mean(x)
    if m > 0 and rt.max(x) < 1.5 or not m > -0.5:
        y = x + 10
    else:
        y = x - 10
    z = y if m > 0.2 else -y
    return z


def python_scalar_promoted_in_loop(x):
    total = 0.0
    i = 0
    while rt.sum(x) > total:
        total = total + 1.5
        i += 1
    return total, i


def loop_then_if(x):
    s = x
    while rt.mean(s) < 5:
        s = rt.abs(s) * 2 + 1
    if rt.max(s) > 20:
        s = s / 2
    return s


CASES = [elif_chain, logic_in_conditions, python_scalar_promoted_in_loop, loop_then_if]


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float32, (3,), elements=st.floats(-3, 3, width=32)))
def test_static_program_agrees_with_eager(fn, x):
    main, outs = trace(fn, x)
    got = run(main, outs, x)
    want = eager(fn, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_converted_function_still_runs_eagerly():
    x = rt.to_tensor([1.0, 2.0])
    for fn in CASES:
        got = autostatic.convert(fn)(x)
        want = fn(x)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w))


def test_variable_defined_in_one_branch_is_a_clear_error():
    def one_branch(x):
        if rt.mean(x) > 0:
            y = x + 1
        return y

    with pytest.raises(StaticBuildError, match="'y' is set in only one branch"):
        trace(one_branch, np.ones(2, np.float32))
    assert autostatic.convert(one_branch)(rt.to_tensor([1.0])).numpy()[0] == 2.0


def test_loop_var_widened_by_the_body_follows_eager():
    def widen(x):
        n = rt.full([], 0, "int64")
        while n < 3:
            n = n + 0.5  # a float32 tensor from the first iteration on
        return n

    x = np.ones(1, np.float32)
    (got,), (want,) = run(*trace(widen, x), x), eager(widen, x)
    assert got.dtype == want.dtype == np.float32 and got == want == 3.0


def test_loop_must_initialize_variables_it_defines():
    def defined_in_loop(x):
        i = rt.full([], 0, "int64")
        while i < 3:
            last = x * 2
            i = i + 1
        return last

    x = np.ones(1, np.float32)
    main, outs = trace(defined_in_loop, x)
    np.testing.assert_allclose(run(main, outs, x)[0], eager(defined_in_loop, x)[0])


def test_a_variable_first_set_in_a_loop_that_ran_zero_times_is_a_run_time_error():
    def defined_in_loop(x, n):
        i = rt.full([], 0, "int64")
        while i < n:
            last = x * 2
            i = i + 1
        return last

    x, n = np.ones(2, np.float32), np.array(2, np.int64)
    main, outs = trace(defined_in_loop, x, n)
    np.testing.assert_allclose(run(main, outs, x, n)[0], [2.0, 2.0])
    with pytest.raises(Exception, match="'last' is first set inside this tensor-dependent loop"):
        run(main, outs, x, np.array(0, np.int64))


def _numbers(x):
    for i in range(3):
        if rt.sum(x) > i:  # a tensor condition inside a generator
            yield x * i


def test_yield_under_a_tensor_condition_says_generators_cannot_become_programs():
    def collect(x):
        return rt.stack(list(_numbers(x)))

    with pytest.raises(StaticBuildError, match="generators cannot become programs") as info:
        autostatic.to_static(collect)(rt.to_tensor(np.ones(2, np.float32)))
    assert info.value.location[:2] == (__file__, _numbers.__code__.co_firstlineno + 2)


def test_a_branch_that_raises_raises_when_the_program_takes_it():
    def checked(x):
        if rt.sum(x) > 0:
            y = x * 2
        else:
            raise ValueError("negative input")
        return y

    sf = autostatic.to_static(checked)
    np.testing.assert_allclose(sf(rt.to_tensor(np.ones(2, np.float32))).numpy(), [2.0, 2.0])
    with pytest.raises(ValueError) as info:  # the user's exception, as eagerly
        sf(rt.to_tensor(-np.ones(2, np.float32)))
    assert type(info.value) is ValueError and str(info.value) == "negative input"
    raised_at = checked.__code__.co_firstlineno + 4  # the `raise`, not the `if`
    (note,) = info.value.__notes__
    assert f"raised at {__file__}:{raised_at} when this branch was traced" in note
    assert f"the program took that branch at {__file__}:{raised_at - 3}" in note


class BadRecord(Exception):
    def __init__(self, key, reason):
        super().__init__(f"{key}: {reason}")


def lookups_in_tensor_branches(x, table):
    if rt.sum(x) > 0:
        y = x * table["scale"]  # a KeyError while traced: raised when the program takes it
    else:
        y = x
    if rt.sum(x) < -10:
        raise BadRecord("x", "too small")  # the user's own class, its arguments
    return y


def test_a_users_exception_from_a_traced_branch_keeps_its_type_and_message():
    sf = autostatic.to_static(lookups_in_tensor_branches)
    table = {"shift": 1.0}
    np.testing.assert_allclose(sf(rt.to_tensor([-1.0, -2.0]), table).numpy(), [-1.0, -2.0])
    with pytest.raises(KeyError) as info:
        sf(rt.to_tensor([1.0, 2.0]), table)
    assert type(info.value) is KeyError and info.value.args == ("scale",)
    with pytest.raises(BadRecord, match="x: too small"):
        sf(rt.to_tensor([-11.0, -2.0]), table)


def cells_read_by_tensor_branches_and_loops(x):
    scale = 3.0
    bias = x * 0.0

    def shift(v):  # a closure: scale and bias are cells of this function
        return v * scale + bias

    if x.mean() > 0:
        y = shift(x) + scale
    else:
        y = x - scale
    i = 0
    while i < x.shape[0] + rt.full([], 0, "int64"):  # a symbolic test: a while op
        y = shift(y) - bias
        i = i + 1
    for row in x:  # a for over the tensor's rows
        y = y + row * scale
    return y


def test_cells_the_branches_and_loops_only_read_are_read_from_the_closure():
    code = autostatic.to_code(cells_read_by_tensor_branches_and_loops)
    assert "scale__in" not in code and "bias__in" not in code  # not passed, not rebound
    for value in (np.array([1.0, 2.0], "float32"), np.array([-1.0, -2.0], "float32")):
        main, outs = trace(cells_read_by_tensor_branches_and_loops, value)
        assert {"cond", "while"} <= op_types(main)
        want = eager(cells_read_by_tensor_branches_and_loops, value)
        np.testing.assert_allclose(run(main, outs, value)[0], want[0], rtol=1e-6)


def test_a_cell_a_branch_reads_while_unbound_raises_name_error_as_python_does():
    def f(flag):
        if flag:
            label = "set"

        def show():
            return label

        if flag > 0:
            out = show()
        else:
            out = label
        return out

    converted = autostatic.convert(f)
    assert converted(1) == "set"
    with pytest.raises(NameError):
        converted(0)


def picks_in_a_loop(x, n):
    chosen = rt.zeros([1], "float32")  # bound before the loop, set by both branches below
    total = rt.zeros([1], "float32")
    k = rt.full([1], 0, "int64")
    while k < n:
        if x.sum() > k.astype("float32"):
            chosen = x * 2.0
        else:
            chosen = x - 1.0
        total = total + chosen
        k = k + 1
    return total


def test_a_variable_both_branches_set_inside_a_tensor_loop():
    """The if's symbolic form passes ``chosen`` on; the loop's body function takes it (it
    has only its parameters bound), so tracing does not read it unbound."""
    x, n = np.array([1.5], np.float32), np.array([3], np.int64)
    main, outs = trace(picks_in_a_loop, x, n)
    assert {"while", "cond"} <= op_types(main)
    for xv in (1.5, 0.5):
        x = np.array([xv], np.float32)
        want = np.asarray(picks_in_a_loop(rt.to_tensor(x), rt.to_tensor(n)))
        np.testing.assert_allclose(run(main, outs, x, n)[0], want)


def set_on_some_paths(x, n):
    if n > 0:  # a Python test: y is bound on one path only
        y = x * 2
    if x.sum() > 0:
        y = x + 1
    for i in range(n):  # i too: bound before the tensor loop below only when n > 0
        x = x + i
    k = x.sum() * 0
    while k < 2:
        k = k + 1
        i = k
    return y, i


def test_a_maybe_unbound_input_is_read_from_locals():
    """Inputs a path may leave unbound are read as ``locals().get(name, UNDEFINED)``: bound
    ones keep their values, an unbound one read after a tensor ``if`` is a clear error."""
    code = autostatic.to_code(set_on_some_paths)
    assert "except NameError" not in code
    assert "_jst.builtins.locals().get('y', _jst.UNDEFINED)" in code
    assert "_jst.builtins.locals().get('i', _jst.UNDEFINED)" in code
    converted = autostatic.convert(set_on_some_paths)
    for xv in (1.5, -1.5):
        x = np.array([xv], np.float32)
        main = static.Program()
        rt.enable_static()
        try:
            with static.program_guard(main):
                outs = list(converted(static.data("x", [1], "float32"), 2))
        finally:
            rt.disable_static()
        want = [np.asarray(o) for o in set_on_some_paths(rt.to_tensor(x), 2)]
        got = static.Executor().run(main, {"x": x}, outs)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            with pytest.raises(StaticBuildError, match="'y' is set in only one branch"):
                converted(static.data("x", [1], "float32"), 0)
    finally:
        rt.disable_static()


class Counter:
    def __init__(self):
        self.total = rt.to_tensor([0.0])

    def add_positive(self, x):
        if x.sum() > 0:
            self.total = self.total + x
        return self.total * 2


def test_a_branch_that_leaves_attributes_alone_passes_them_through():
    """The other branch of an ``if`` that sets ``self.total`` is a ``passthrough`` that gives
    the attribute's current value, not a function."""
    code = autostatic.to_code(Counter.add_positive)
    assert "_jst.passthrough((), attributes=((self, 'total'),))" in code
    for xv in (1.5, -1.5):
        x = np.array([xv], np.float32)
        counter = Counter()
        main = static.Program()
        rt.enable_static()
        try:
            with static.program_guard(main):
                out = autostatic.convert(Counter.add_positive)(
                    counter, static.data("x", [1], "float32")
                )
        finally:
            rt.disable_static()
        want = np.asarray(Counter().add_positive(rt.to_tensor(x)))
        np.testing.assert_allclose(static.Executor().run(main, {"x": x}, [out])[0], want)


def count_and_scale(x):
    i = x.sum() * 0
    s = x * 1
    while i < 3:
        if s.sum() > 4:
            s *= 0.5
        else:
            s += 1
        i += 1
    return s


def test_a_branch_of_augmented_assignments_is_a_lambda():
    """``s += 1`` in a branch function is ``_jst.operator.iadd(s, 1)`` (what the statement
    computes, in place where the value allows it), so the branch is a one-line lambda."""
    code = autostatic.to_code(count_and_scale)
    assert "lambda s: (_jst.operator.imul(s, 0.5),)" in code
    assert "lambda s: (_jst.operator.iadd(s, 1),)" in code
    for xv in ([0.5, 1.0], [3.0, 4.0]):
        x = np.array(xv, np.float32)
        main, outs = trace(count_and_scale, x)
        assert {"while", "cond"} <= op_types(main)
        want = eager(count_and_scale, x)[0]
        np.testing.assert_allclose(run(main, outs, x)[0], want)


def _mode_and_sign(x, mode="scale"):
    if mode in ("scale", "shift") and mode is not None:  # always a Python bool
        y = x * 2 if mode == "scale" else x + 1
    elif mode == "none":
        y = x
    else:
        raise ValueError(mode)
    for _ in range(3):
        if mode not in ("shift",):
            y = y * 0.5
        elif rt.mean(y) > 0:  # a tensor test inside it still converts
            y = y - 1.0
    return y


def test_an_if_on_in_is_or_a_string_comparison_stays_the_users_statement():
    """``in``/``is`` give Python bools whatever the operands, and so does ``==`` with a
    string: such an ``if`` keeps the user's statement, with no branch functions, and the
    tensor ``if`` inside it is still a cond."""
    code = autostatic.to_code(_mode_and_sign)
    assert "if mode in ('scale', 'shift') and mode is not None:" in code
    assert "if mode not in ('shift',):" in code
    assert code.count("convert_ifelse") == 1  # only the tensor test
    x = np.array([0.5, -2.0, 3.0], np.float32)
    for mode in ("scale", "shift", "none"):
        main, outs = trace(lambda a, m=mode: _mode_and_sign(a, m), x)
        want = _mode_and_sign(rt.to_tensor(x), mode).numpy()
        np.testing.assert_allclose(run(main, outs, x)[0], want)
        assert ("cond" in op_types(main)) == (mode == "shift")


def _kind_of(x, scale=None):
    if isinstance(scale, (int, float)) and not callable(scale):
        x = x * scale
    if rt.mean(x) > 0:
        x = x - 1.0
    return x


def _kind_of_shadowed(x):
    isinstance = lambda value, kind: rt.mean(value) > 0  # noqa: E731 - a tensor test
    if isinstance(x, float):
        x = x * 2.0
    return x


def test_an_if_on_isinstance_stays_python_unless_the_function_binds_the_name():
    assert autostatic.to_code(_kind_of).count("convert_ifelse") == 1  # the tensor test only
    x = np.array([0.5, 2.0], np.float32)
    main, outs = trace(lambda a: _kind_of(a, 3.0), x)
    np.testing.assert_allclose(run(main, outs, x)[0], _kind_of(rt.to_tensor(x), 3.0).numpy())
    assert "convert_ifelse" in autostatic.to_code(_kind_of_shadowed)
    for v in (x, -x):
        main, outs = trace(_kind_of_shadowed, v)
        assert "cond" in op_types(main)
        want = _kind_of_shadowed(rt.to_tensor(v)).numpy()
        np.testing.assert_allclose(run(main, outs, v)[0], want)


def _member(x):
    if 1.0 in x:
        return x
    return x * 2


def test_value_in_a_symbolic_tensor_is_a_clear_error_at_the_users_line():
    x = np.ones(3, np.float32)
    with pytest.raises(Exception, match=r"value in tensor.*rt\.any\(x == value\)") as info:
        trace(_member, x)
    assert "test_symbolic_path.py" in str(info.value)
    assert "was not converted" not in str(info.value)


def _deletes_a_cell(xs, k):
    c = 1
    for b in xs:
        if b > k:
            continue
        del c

    def bump():
        nonlocal c
        c = c + 1
        return c

    return bump()


def test_a_branch_function_that_deletes_a_closures_cell_declares_it():
    """``del c`` in a branch function is the user function's ``c`` (a closure's cell), not
    a local of the branch function (which would raise UnboundLocalError)."""
    code = autostatic.to_code(_deletes_a_cell)
    branch = code[: code.index("del c") + len("del c")]
    assert branch.rstrip().endswith("nonlocal c\n        del c")


def test_a_saved_program_raises_the_builtin_exception_without_its_tracing_process(tmp_path):
    from autostatic import InputSpec
    from autostatic_runtime import errors

    def lookup(x):
        if rt.sum(x) > 0:
            raise IndexError("row 7 of 3")
        return x * 2

    sf = autostatic.to_static(lookup, input_spec=[InputSpec([2], "float32")])
    autostatic.save(sf, str(tmp_path / "m"))
    errors._RAISED.clear()  # as in a process that did not trace it
    loaded = autostatic.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded(rt.to_tensor([-1.0, 0.0])).numpy(), [-2.0, 0.0])
    with pytest.raises(IndexError, match="row 7 of 3"):
        loaded(rt.to_tensor([1.0, 0.0]))


def test_an_ambiguous_test_in_a_traced_branch_raises_eagers_error_only_when_reached():
    def rows(x):
        if rt.sum(x) > 100:  # taken only by the second input
            if x.numpy()[0] > 0:  # a whole row: eager raises ValueError here
                x = x + 1
        return x * 2

    sf = autostatic.to_static(rows)
    small = np.ones([3, 2], np.float32)
    np.testing.assert_allclose(sf(rt.to_tensor(small)).numpy(), small * 2)
    with pytest.raises(ValueError, match="truth value of an array"):  # NumPy's, eagerly
        rows(rt.to_tensor(small * 50))
    with pytest.raises(ValueError, match="truth value of a tensor with 2 elements is ambig") as e:
        sf(rt.to_tensor(small * 50))
    assert f"{__file__}:{rows.__code__.co_firstlineno + 2}" in e.value.__notes__[0]

    def always(x):
        if x.numpy()[0] > 0:  # reached by every run: an error while building, as before
            x = x + 1
        return x

    with pytest.raises(StaticBuildError, match="must hold one element"):
        trace(always, small)


def test_a_name_deleted_in_a_tensor_branch_is_unbound_after_it_when_that_branch_runs():
    def drop(x):
        v = x * 2
        if rt.sum(x) > 0:
            del v
        return v  # eagerly: UnboundLocalError after the true branch

    sf = autostatic.to_static(drop)
    np.testing.assert_allclose(sf(rt.to_tensor([-1.0, 0.5])).numpy(), [-2.0, 1.0])
    with pytest.raises(UnboundLocalError, match="'v'"):
        sf(rt.to_tensor([1.0, 0.5]))


def test_what_a_tensor_loop_of_no_iterations_leaves_unset_raises_pythons_error():
    def first_set(x):
        i = rt.zeros([], "int64")
        state = {}
        while i < rt.shape(x)[0]:
            last = x[i]
            state["seen"] = last
            i += 1
        return last, state

    sf = autostatic.to_static(first_set, input_spec=[autostatic.InputSpec([None], "float32")])
    got, state = sf(rt.to_tensor([1.0, 2.0]))
    assert float(got) == 2.0 and float(state["seen"]) == 2.0
    with pytest.raises(UnboundLocalError, match="local variable 'last'"):
        first_set(rt.zeros([0]))
    with pytest.raises(UnboundLocalError, match="local variable 'last'"):
        sf(rt.zeros([0]))


def test_an_op_error_typing_a_variable_first_set_in_a_tensor_loop_is_that_error():
    def zeros_of_runtime_rank(n):
        i = 0
        while i < n:
            v = rt.zeros(rt.arange(i))  # the rank would change with i
            i += 1
        return v

    sf = autostatic.to_static(zeros_of_runtime_rank)
    with pytest.raises(ShapeError, match="a shape tensor must be 1-D") as info:
        sf(rt.to_tensor(2))  # before: "loop must iterate at least once to initialize 'v'"
    assert f"{__file__}:{zeros_of_runtime_rank.__code__.co_firstlineno + 3}" in str(info.value)


def test_numpy_functions_of_traced_values_are_clear_errors_at_the_users_line():
    """Paddle's test_error (NpApiErr): ``np.sum(a.numpy())`` in traced code is a TypeError
    naming NumPy's function and the rt op to use (NumPy's own 'unexpected keyword argument
    out' before), and ``np.asarray`` of a variable too."""
    import pytest

    import autostatic
    from autostatic_runtime.errors import SymbolicValueError

    def summed(x):
        return np.sum(x.numpy()) + 1

    def as_array(x):
        return np.asarray(x) * 2

    for fn, text in ((summed, "numpy.sum cannot take the symbolic variable"),
                     (as_array, "numpy cannot convert the symbolic variable")):  # fmt: skip
        with pytest.raises(SymbolicValueError, match=text) as caught:
            autostatic.to_static(fn)(rt.ones([2]))
        assert isinstance(caught.value, TypeError) and __file__ in str(caught.value)
