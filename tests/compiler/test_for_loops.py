"""``for`` loops: exactly Python on Python values; a ``while`` op over symbolic iterables.

The Python-semantics catalogue (tests/programs.py) checks converted == original for many
``for`` shapes; here: the generated form, routing of ``range``/``enumerate``/``zip``, and the
symbolic path (programs built with data Variables, run, and compared with eager results).
"""

from __future__ import annotations

import re
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.convert_ops as convert_ops
from autostatic_runtime import static
from autostatic_runtime.errors import StaticBuildError

# ---- helpers -------------------------------------------------------------------------------


def build(fn, *specs):
    """Trace converted ``fn`` on data Variables ``a0, a1...`` of ``(shape, dtype)`` specs."""
    converted = autostatic.convert(fn)
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = [static.data(f"a{i}", list(s), d) for i, (s, d) in enumerate(specs)]
            out = converted(*args)
    finally:
        rt.disable_static()
    return main, list(out) if isinstance(out, (tuple, list)) else [out]


def run(program, *arrays):
    main, outs = program
    got = static.Executor().run(main, {f"a{i}": a for i, a in enumerate(arrays)}, outs)
    return [np.asarray(g) for g in got]


def eager(fn, *arrays):
    out = fn(*[rt.to_tensor(a) for a in arrays])
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [np.asarray(o) for o in outs]


def op_types(program) -> list[str]:
    main, _ = program
    return [op.type for b in main.blocks for op in b.ops]


def assert_close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


SCALAR_INT = ((), "int64")
ROWS = ((None, 3), "float32")
rows = st.integers(0, 5).flatmap(
    lambda n: st.lists(
        st.lists(st.floats(-4, 4, width=32), min_size=3, max_size=3), min_size=n, max_size=n
    )
)


def as_rows(values) -> np.ndarray:
    return np.asarray(values, np.float32).reshape(-1, 3)


# ---- the generated code ----------------------------------------------------------------------


def range_sum(n):
    s = 0
    for i in range(n):
        s = s + i
    return s


def test_generated_code_keeps_the_users_loop_and_adds_a_while():
    code = autostatic.to_code(range_sum)
    assert "_jst.convert_range(range, n)" in code
    # the Python path: the user's loop over the iterable's items (none when it is symbolic)
    assert "for i in (__iter_0 := _jst.python_items(_jst.convert_range(range, n))):" in code
    assert "__loop_body_1 = lambda i, s: (s + i,)" in code  # the item first, as the target
    # then the while op over a symbolic iterable, or nothing (the Python loop was the loop)
    assert (
        "s, = _jst.convert_for_loop(__iter_0, __loop_body_1, (s,), (), ('s',)" in code
        and "if (__iter_0 := _jst.hand_over(__iter_0)) is not None else (s,)" in code
    )


def test_loops_over_iterables_that_are_never_symbolic_stay_as_written():
    def literal_loops(a):
        for k in range(3):
            a += k
        for w in [1, 2]:
            a += w
        for i, c in enumerate("ab"):
            a += i * len(c)
        for v in (x * 2 for x in range(-2, 2)):
            a += v
        return a

    code = autostatic.to_code(literal_loops)
    # to_code shows the tracing body: the loop stays a Python 'for' (range called as written)
    assert "is_symbolic_iterable" not in code and "for k in _jst.convert_call(range)(3):" in code
    assert autostatic.convert(literal_loops)(1) == literal_loops(1)


def test_a_local_named_range_is_not_routed():
    def local_range(n):
        range = list  # noqa: A001
        out = []
        for c in range("ab" * n):
            out.append(c)
        return out

    code = autostatic.to_code(local_range)
    assert "convert_range" not in code
    assert autostatic.convert(local_range)(2) == local_range(2)


def test_a_rebound_global_range_is_called_as_written(body):
    def collect(n):
        out = []
        for v in range(n):
            out.append(v)
        return out

    # the same code with a module global `range` that is not the builtin
    glob = dict(globals(), range=lambda n: ["custom"] * n)
    rebound = types.FunctionType(collect.__code__, glob, "collect", None, collect.__closure__)
    assert "convert_range" in autostatic.to_code(rebound)  # routed; the runtime checks
    assert autostatic.convert(rebound)(2) == ["custom", "custom"]
    assert autostatic.convert(collect)(2) == [0, 1]


def test_errors_from_the_iterable_point_at_the_users_line(body):
    def bad(n):
        total = 0
        for i in range(n):
            total += i
        return total

    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer") as e:
        autostatic.convert(bad)("3")
    lines = [f.lineno + 1 for f in e.traceback if f.path == __file__ or str(f.path) == __file__]
    assert bad.__code__.co_firstlineno + 2 in lines


def test_eager_tensors_are_iterated_by_python_in_the_converted_body(monkeypatch):
    monkeypatch.setattr(convert_ops, "tracing", True)

    def rows_sum(x, n):
        s = x[0] * 0
        for i, row in enumerate(x):
            s = s + row * i
        for j in range(n):
            s = s + j
        return s, i, j

    x, n = rt.to_tensor([[1.0, 2.0], [3.0, 4.0]]), rt.to_tensor(3)
    got, want = autostatic.convert(rows_sum)(x, n), rows_sum(x, n)
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
    assert got[1:] == want[1:] == (1, 2)


def test_runtime_functions_return_the_builtins_results_for_python_values():
    assert convert_ops.convert_range(range, 1, 9, 3) == range(1, 9, 3)
    assert list(convert_ops.convert_enumerate(enumerate, "ab", start=4)) == [(4, "a"), (5, "b")]
    zipped = convert_ops.convert_zip(zip, [1, 2], "xyz")
    assert type(zipped) is zip and list(zipped) == [(1, "x"), (2, "y")]
    t = rt.to_tensor([1.0, 2.0])
    assert type(convert_ops.convert_enumerate(enumerate, t)) is enumerate
    assert convert_ops.convert_range(lambda *a: ("mine", a), 3) == ("mine", (3,))
    for value in ([1], "s", t, range(2), {"k": 1}, iter([])):
        assert not convert_ops.is_symbolic_iterable(value)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        convert_ops.convert_range(range, 1.5)
    with pytest.raises(TypeError, match="range expected at least 1 argument"):
        convert_ops.convert_range(range)
    with pytest.raises(ValueError, match="must not be zero"):
        convert_ops.convert_range(range, 0, 3, 0)


def test_range_with_a_tensor_bound_checks_the_python_ones_as_python_does():
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            n = static.data("n", [], "int64")
            assert convert_ops.is_symbolic_iterable(convert_ops.convert_range(range, n))
            with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
                convert_ops.convert_range(range, 0, n, 0)
            with pytest.raises(TypeError, match="'float' object cannot be interpreted"):
                convert_ops.convert_range(range, 0.5, n)
            with pytest.raises(StaticBuildError, match="only be iterated by a 'for' statement"):
                list(convert_ops.convert_range(range, n))
    finally:
        rt.disable_static()


# ---- symbolic: range -------------------------------------------------------------------------


def range_sum_and_last(n):
    s = rt.full([], 0, "int64")
    i = rt.full([], -1, "int64")
    for i in range(n):
        s = s + i * i
    return s, i


@settings(max_examples=20, deadline=None)
@given(n=st.integers(-2, 9))
def test_range_of_a_tensor_becomes_a_while_op(n):
    program = _cached(range_sum_and_last, SCALAR_INT)
    assert op_types(program).count("while") == 1
    arr = np.array(n, np.int64)
    got = run(program, arr)
    assert_close(got, eager(range_sum_and_last, arr))
    assert int(got[0]) == sum(i * i for i in range(n))


def range_forms(start, stop, step):
    total = rt.full([], 0, "int64")
    count = 0
    for k in range(start, stop, step):
        total = total + k
        count += 1
    return total, count


RANGE_MIXES = ["start", "stop", "step", "start,stop", "stop,step", "start,stop,step"]


@pytest.mark.parametrize("symbolic", RANGE_MIXES)
@settings(max_examples=12, deadline=None)
@given(start=st.integers(-6, 6), stop=st.integers(-6, 6), step=st.integers(-3, 3).filter(bool))
def test_range_with_python_and_tensor_bounds(symbolic, start, stop, step):
    names = symbolic.split(",")
    values = {"start": start, "stop": stop, "step": step}

    def fn(*tensors):
        bound = dict(values, **dict(zip(names, tensors)))
        return range_forms(bound["start"], bound["stop"], bound["step"])

    program = build(fn, *[SCALAR_INT] * len(names))
    assert "while" in op_types(program)
    got = run(program, *[np.array(values[n], np.int64) for n in names])
    want = list(range(start, stop, step))
    assert int(got[0]) == sum(want) and int(got[1]) == len(want)


def test_range_bounds_may_be_one_element_tensors_of_any_int_dtype():
    def fn(n):
        s = rt.full([], 0, "int64")
        for i in range(1, n):
            s = s + i
        return s

    program = build(fn, ((1,), "int32"))
    assert int(run(program, np.array([5], np.int32))[0]) == 10


# ---- symbolic: tensors, enumerate, zip ---------------------------------------------------------


def decaying_rows(x):
    s = rt.zeros([3])
    for row in x:
        s = s * 0.5 + row
    return s, row


@settings(max_examples=20, deadline=None)
@given(values=rows)
def test_rows_of_a_tensor_with_an_unknown_first_dim(values):
    program = _cached(decaying_rows, ROWS)
    assert "while" in op_types(program)
    x = as_rows(values)
    if len(x):
        assert_close(run(program, x), eager(decaying_rows, x))
    else:  # no iterations: `row` is unbound after the loop, as in Python
        with pytest.raises(UnboundLocalError, match="'row'"):
            eager(decaying_rows, x)
        with pytest.raises(UnboundLocalError, match="'row'"):
            run(program, x)


def enumerate_zip(x, y):
    s = rt.zeros([3])
    for i, (a, b) in enumerate(zip(x, y), start=2):
        s = s + (a - b) * i
    for j, row in enumerate(x):
        s = s + row * j
    for k, c in zip(range(10), y):  # a Python range next to a tensor
        s = s - c * k
    return s


@settings(max_examples=20, deadline=None)
@given(xs=rows, ys=rows)
def test_enumerate_and_zip_of_tensors(xs, ys):
    program = _cached(enumerate_zip, ROWS, ROWS)
    assert op_types(program).count("while") == 3
    x, y = as_rows(xs), as_rows(ys)
    assert_close(run(program, x, y), eager(enumerate_zip, x, y))


def zip_with_a_list(x):
    s = rt.zeros([3])
    for row, w in zip(x, [1.0, -2.0, 3.0]):
        s = s + row * w
    return s


def test_zip_of_a_tensor_and_a_list_of_numbers():
    program = build(zip_with_a_list, ROWS)
    for n in (0, 2, 5):
        x = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        assert_close(run(program, x), eager(zip_with_a_list, x))


# ---- symbolic: nesting -------------------------------------------------------------------------


def nested(x, n):
    s = rt.zeros([3])
    for row in x:
        for j in range(n):
            s = s + row * j
        s = s - 1
    return s


@settings(max_examples=15, deadline=None)
@given(values=rows, n=st.integers(0, 4))
def test_nested_for_loops_are_nested_while_ops(values, n):
    program = _cached(nested, ROWS, SCALAR_INT)
    assert op_types(program).count("while") == 2
    x, k = as_rows(values), np.array(n, np.int64)
    assert_close(run(program, x, k), eager(nested, x, k))


def triangle(n):
    s = rt.full([], 0, "int64")
    for i in range(n):
        for j in range(i, 0, -1):  # bounds from the outer loop's target
            s = s + i * j
    return s


def test_an_inner_range_bounded_by_the_outer_target():
    program = build(triangle, SCALAR_INT)
    assert op_types(program).count("while") == 2
    for n in range(6):
        want = sum(i * j for i in range(n) for j in range(i, 0, -1))
        assert int(run(program, np.array(n, np.int64))[0]) == want


def for_in_tensor_if(x, n):
    s = rt.sum(x, axis=0)
    if rt.mean(x) > 0:
        for i in range(n):
            s = s + i
    else:
        for row in x:
            s = s - row
    return s


@settings(max_examples=15, deadline=None)
@given(values=rows.filter(bool), n=st.integers(0, 4))
def test_for_inside_an_if_with_a_tensor_condition(values, n):
    program = _cached(for_in_tensor_if, ROWS, SCALAR_INT)
    assert {"cond", "while"} <= set(op_types(program))
    x, k = as_rows(values), np.array(n, np.int64)
    assert_close(run(program, x, k), eager(for_in_tensor_if, x, k))


def for_else_and_python_loops(x, n):
    s = rt.zeros([3])
    for i in range(n):
        s = s + i
    else:
        s = s * 2
    for w in [1.0, 2.0]:  # a Python list while tracing: unrolled, as written
        s = s + w
    for _ in range(2):
        s = s + 1
    return s


def test_for_else_runs_after_a_symbolic_loop_and_python_loops_unroll():
    program = build(for_else_and_python_loops, ROWS, SCALAR_INT)
    assert op_types(program).count("while") == 1
    for n in (0, 3):
        x, k = np.ones((2, 3), np.float32), np.array(n, np.int64)
        assert_close(run(program, x, k), eager(for_else_and_python_loops, x, k))


def test_python_loops_while_tracing_build_no_while_op():
    def unrolled(x):
        for k in range(3):
            x = x + k
        for i, v in enumerate([x, x]):
            x = x + v * i
        return x

    program = build(unrolled, ROWS)
    assert "while" not in op_types(program)
    x = np.ones((2, 3), np.float32)
    assert_close(run(program, x), eager(unrolled, x))


def weighted_rows(x, w):
    h = rt.zeros([3])
    for i, row in enumerate(x):
        h = rt.tanh(h * w + row * i)
    return rt.sum(h * h)


@settings(max_examples=10, deadline=None)
@given(values=rows.filter(bool), w=st.floats(-1, 1, width=32))
def test_gradients_flow_through_a_symbolic_for(values, w):
    x, wa = as_rows(values), np.array(w, np.float32)
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            xv, wv = static.data("a0", [None, 3], "float32"), static.data("a1", [], "float32")
            xv.stop_gradient = wv.stop_gradient = False
            loss = autostatic.convert(weighted_rows)(xv, wv)
            grads = static.gradients(loss, [xv, wv])
    finally:
        rt.disable_static()
    got = static.Executor().run(main, {"a0": x, "a1": wa}, [loss, *grads])
    xt, wt = rt.to_tensor(x, stop_gradient=False), rt.to_tensor(wa, stop_gradient=False)
    eloss = weighted_rows(xt, wt)
    want = [eloss.numpy(), *(g.numpy() for g in rt.grad(eloss, [xt, wt]))]
    assert_close([np.asarray(g) for g in got], want)


class TinyRNN(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = rt.nn.Linear(6, 3)

    def forward(self, x):
        h = rt.zeros([1, 3])
        for row in x:
            h = rt.tanh(self.cell(rt.concat([rt.unsqueeze(row, 0), h], axis=1)))
        return rt.sum(h * h)


def test_parameter_gradients_through_an_rnn_over_tensor_rows():
    rt.seed(0)
    net = TinyRNN()
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            xv = static.data("x", [None, 3], "float32")
            loss = autostatic.convert(net.forward)(xv)
            pairs = static.append_backward(loss)
    finally:
        rt.disable_static()
    assert "while" in op_types((main, []))
    exe = static.Executor()
    exe.run(startup)
    got = exe.run(main, {"x": x}, [loss] + [g for _, g in pairs])
    eager_loss = net(rt.to_tensor(x))
    eager_loss.backward()
    grads = {p.name: p.grad.numpy() for p in net.parameters()}
    assert_close([np.asarray(got[0])], [eager_loss.numpy()])
    assert len(pairs) == 2
    for (param, _), g in zip(pairs, got[1:]):
        np.testing.assert_allclose(g, grads[param.name], rtol=1e-5, atol=1e-6)


# ---- symbolic: what is not supported (clear errors at the user's line) -------------------------


def _line(fn, offset):
    return fn.__code__.co_firstlineno + offset


def test_a_loop_variable_changing_dtype_after_its_first_iteration_is_named():
    def flip(n):
        s = rt.full([], 1.0, "float32")
        for _ in range(n):  # float32 -> int64 -> float32 ...: no dtype for the while op
            s = s.astype("int64") if s.dtype == rt.float32 else s.astype("float32")
        return s

    with pytest.raises(StaticBuildError, match="may change its dtype in the first") as e:
        build(flip, SCALAR_INT)
    assert "'s' has dtype float32 before an iteration, but int64 after it" in str(e.value)
    assert e.value.location[1] == _line(flip, 2)


def test_list_append_in_a_symbolic_for_becomes_a_tensor_array():
    def collect(x):
        out = []
        for row in x:
            out.append(row * 2)
        return rt.stack(out)

    program = build(collect, ROWS)
    assert {"create_array", "array_write", "stack_array"} <= set(op_types(program))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_close(run(program, x), eager(collect, x))  # tests/compiler/test_tensor_arrays.py


def test_list_extend_in_a_symbolic_for_appends_to_a_tensor_array():
    def collect(x):
        out = []
        for row in x:
            out.extend([row * 2, row])
        return rt.stack(out)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = autostatic.to_static(collect)(rt.to_tensor(x))
    np.testing.assert_allclose(got.numpy(), collect(rt.to_tensor(x)).numpy())


class Collector:
    def __init__(self):
        self.outs = []

    def run(self, x):
        for row in x:
            self.outs.append(row)
        return x


def test_appending_to_an_attribute_list_is_not_supported_yet_either():
    with pytest.raises(StaticBuildError, match=r"'self.outs.append\(...\)' inside a 'for'"):
        build(Collector().run, ROWS)


def test_lists_built_inside_the_body_or_in_the_else_are_fine():
    def fine(x):
        s = rt.zeros([3])
        log = []
        for row in x:
            parts = []
            parts.append(row)
            s = s + parts[0]
        else:
            log.append("done")
        return s

    program = build(fine, ROWS)
    x = np.ones((4, 3), np.float32)
    assert_close(run(program, x), eager(fine, x))


def break_in_loop(n):
    s = rt.full([], 0, "int64")
    for i in range(n):
        if i > 2:
            break
        s = s + i
    return s


def continue_in_loop(n):
    s = rt.full([], 0, "int64")
    for i in range(n):
        if i > 2:
            continue
        s = s + i
    return s


@pytest.mark.parametrize("fn", [break_in_loop, continue_in_loop], ids=["break", "continue"])
@pytest.mark.parametrize("n", [0, 2, 6])
def test_break_and_continue_in_a_symbolic_for(fn, n):
    program = build(fn, SCALAR_INT)
    assert "while" in {op.type for op in program[0].global_block().ops}
    np.testing.assert_array_equal(run(program, np.array(n, "int64"))[0], fn(n))
    value = rt.to_tensor(n)
    assert int(autostatic.convert(fn)(value)) == int(fn(value))  # eager: as written


def range_of_floats(x):
    for _ in range(rt.sum(x)):
        pass


def over_a_0d_tensor(x):
    for _ in rt.sum(x):
        pass


def zip_strict(x):
    for _ in zip(x, x, strict=True):
        pass


def zip_with_an_iterator(x):
    for _ in zip(x, iter([1.0])):
        pass


@pytest.mark.parametrize(
    "fn, message",
    [
        (range_of_floats, r"range\(\) argument 1 is a float32 tensor, but range\(\) needs int"),
        (over_a_0d_tensor, "iteration over a 0-d tensor"),
        (zip_strict, r"zip\(..., strict=True\) over tensors is not supported yet"),
        (zip_with_an_iterator, r"zip\(\) of a tensor and a list_iterator .* not supported yet"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_iterables_the_symbolic_path_cannot_step(fn, message):
    with pytest.raises(StaticBuildError, match=message) as e:
        build(fn, ROWS)
    assert e.value.location[:2] == (__file__, _line(fn, 1))


# ---- program cache for hypothesis loops -------------------------------------------------------

_PROGRAMS: dict = {}


def _cached(fn, *specs):
    key = (fn, specs)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = build(fn, *specs)
    return _PROGRAMS[key]


def last_row_and_index(x):
    total = x[0] * 0.0
    for i, row in enumerate(x):  # noqa: B007  (a tuple target read after the loop)
        total = total + row
    for r in x:  # a name target, unbound before the loop, read after it
        total = total + r * 0.5
    return total, i, row, r


def last_index_bound_before(n):
    k = rt.full([], 7, "int64")
    for k in range(n):  # noqa: B007  (bound before the loop: kept when it never runs)
        pass
    return k


def test_loop_targets_read_after_a_symbolic_loop_carry_the_last_item():
    code = autostatic.to_code(last_row_and_index)
    assert "target=" in code and "_jst.UNDEFINED" in code  # r: its slot, from a placeholder
    program = build(last_row_and_index, ((None, 3), "float32"))
    assert op_types(program).count("while") == 2
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert_close(run(program, x), eager(last_row_and_index, x))
    program = build(last_index_bound_before, SCALAR_INT)
    assert int(run(program, np.array(3, np.int64))[0]) == 2
    assert int(run(program, np.array(0, np.int64))[0]) == 7  # as Python: the loop never ran


def python_loops_in_a_tensor_branch(x, weights):
    s = rt.zeros([3])
    if rt.sum(x) > 0:  # in its branch function each `for` is one convert_for_loop call,
        for w in weights:  # which steps a Python list in Python
            s = s + w * x[0]
        for k in range(2):
            if k == 1:
                break
            s = s * 2
        last = k  # the item where the loop broke
    else:
        last = -1
    return s + last


def test_python_loops_in_a_tensor_branch_run_item_by_item():
    code = autostatic.to_code(python_loops_in_a_tensor_branch)
    assert code.count("_jst.convert_for_loop(weights,") == 1  # the branch function's form
    weights = [1.0, 2.0, 3.0]
    program = build(lambda v: python_loops_in_a_tensor_branch(v, weights), ROWS)
    assert "while" not in op_types(program) and "cond" in op_types(program)
    for x in (np.ones((2, 3), np.float32), -np.ones((2, 3), np.float32)):
        assert_close(
            run(program, x), eager(lambda v: python_loops_in_a_tensor_branch(v, weights), x)
        )


def test_a_target_no_item_bound_in_a_branch_function_is_unbound_as_in_python():
    def last_item(x, items):
        if rt.sum(x) > 0:
            for item in items:  # noqa: B007 (read after the loop)
                pass
            return x + item
        return x

    assert "if item is _jst.UNDEFINED:" in autostatic.to_code(last_item)
    x = np.ones((2, 3), np.float32)
    assert_close(run(build(lambda v: last_item(v, [1.0]), ROWS), x), [x + 1])
    program = build(lambda v: last_item(v, []), ROWS)  # the branch raises: so does the program
    assert_close(run(program, -x), [-x])
    with pytest.raises(Exception, match="UnboundLocalError"):
        run(program, x)


# ---- tuple targets unpacked by the runtime --------------------------------------------------


def rows_times_index(x):
    total = x[0] * 0
    for k, row in enumerate(x):
        total = total + row * k
    return total


def pairs_in_a_tensor_branch(x, pairs):
    total = x * 0
    if x.sum() > 0:
        for a, b in pairs:  # a Python loop in a branch function: stepped by convert_for_loop
            total = total + a * b
    return total


def test_a_tuple_target_of_names_is_the_body_functions_parameters():
    """``for k, row in ...``: the body function takes ``k, row`` (``unpack=2``), so a body of
    one statement is a lambda; the item is unpacked as the assignment would."""
    code = autostatic.to_code(rows_times_index)
    assert "lambda k, row, total:" in code and "unpack=2" in code and "__item" not in code
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    program = build(rows_times_index, ([4, 3], "float32"))
    np.testing.assert_allclose(run(program, x)[0], eager(rows_times_index, x)[0])


@pytest.mark.parametrize(
    "pairs, error",
    [
        ([(1, 2), (3, 4)], None),
        ([(1, 2), (3,)], "not enough values to unpack (expected 2, got 1)"),
        ([(1, 2, 3)], "too many values to unpack (expected 2)"),
        ([5], "cannot unpack non-iterable int object"),
    ],
)
def test_unpacking_an_item_fails_as_the_assignment_would(pairs, error):
    x = np.ones([2], np.float32)
    if error is None:
        program = build(lambda v: pairs_in_a_tensor_branch(v, pairs), ([2], "float32"))
        want = eager(lambda v: pairs_in_a_tensor_branch(v, pairs), x)[0]
        np.testing.assert_allclose(run(program, x)[0], want)
        return
    with pytest.raises((ValueError, TypeError), match=re.escape(error)) as eagerly:
        pairs_in_a_tensor_branch(rt.to_tensor(x), pairs)
    with pytest.raises(type(eagerly.value), match=re.escape(error)):
        build(lambda v: pairs_in_a_tensor_branch(v, pairs), ([2], "float32"))


def test_a_target_unbound_after_a_loop_of_no_items_stays_unbound(monkeypatch):
    """The hand-over assignment reads its loop variables back only when they are bound before
    the loop: after a loop of no items, a target read in an ``except`` is unbound, as in
    Python (packaging's ``pylock`` reads ``i`` so)."""
    import autostatic_runtime.convert_ops as convert_ops

    def first_bad(xs):
        try:
            for i, a in enumerate(xs):  # noqa: B007
                if a < 0:
                    raise ValueError(a)
        except ValueError:
            return "bad", i
        return "ok"

    converted = autostatic.convert(first_bad)
    monkeypatch.setattr(convert_ops, "tracing", True)  # the converted body runs
    assert converted([1, 2, -3]) == ("bad", 2)
    assert converted([]) == "ok"
    monkeypatch.setattr(convert_ops, "tracing", False)
    assert first_bad([]) == "ok"


def first_above(x, t, forget):
    last = rt.full([], -1.0, "float32")
    if forget:  # a Python bool: on this path the target is unbound before the loop
        del last
    for last in x:
        if last > t:
            break
    return last


@pytest.mark.parametrize("forget", [False, True])
@pytest.mark.parametrize("t", [1.5, 9.0])
def test_a_target_maybe_unbound_before_a_symbolic_loop_starts_shaped_like_an_item(forget, t):
    x = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    converted = autostatic.convert(first_above)
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            out = converted(static.data("a0", [4], "float32"), t, forget)
    finally:
        rt.disable_static()
    assert "while" in op_types((main, [out]))
    (got,) = run((main, [out]), x)
    np.testing.assert_array_equal(got, first_above(rt.to_tensor(x), t, forget).numpy())
    code = autostatic.to_code(first_above)
    assert "loop_placeholder" not in code  # convert_for_loop makes it from UNDEFINED


def index_of_first_above(x, limit):
    for k in [0, 1, 2, 3]:  # a Python loop left by a tensor `break`, its target read after
        if x[k] > limit:
            break
    return x[0] * 0 + k


def first_row_above(x, limit):
    for row in x:  # a tensor iterable, the target unbound before the loop and read after it
        if row.sum() > limit:
            return row
    return row * 0 - 1


@pytest.mark.parametrize("limit", [-10.0, 1.5, 2.5, 10.0])
def test_a_target_read_after_a_loop_left_by_a_tensor_jump(limit):
    x = np.array([0.0, 2.0, 1.0, 3.0], np.float32)
    rows = np.array([[0.0, 1.0], [2.0, 0.5], [1.0, 4.0]], np.float32)
    for fn, value, shape in ((index_of_first_above, x, [4]), (first_row_above, rows, [3, 2])):
        converted = autostatic.convert(fn)
        main = static.Program()
        rt.enable_static()
        try:
            with static.program_guard(main):
                out = converted(static.data("a0", shape, "float32"), limit)
        finally:
            rt.disable_static()
        (got,) = run((main, [out]), value)
        want = fn(rt.to_tensor(value), limit).numpy()
        np.testing.assert_allclose(got, want)
    code = autostatic.to_code(first_row_above)  # the user's loop, then one hand-over call
    assert "hand_over(" in code and "is_symbolic_iterable" not in code
