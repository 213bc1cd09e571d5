"""Builtins and expressions in converted code: print, assert, int/float/bool, len, x.shape,
isinstance and chained comparisons — exact on Python values, ops on symbolic tensors."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.convert_ops as jst
from autostatic_runtime import static
from autostatic_runtime.errors import AssertionFailedError, StaticBuildError
from tests.compiler import shadowing
from tests.compiler.test_symbolic_path import eager, op_types

HERE = os.path.abspath(__file__)


def trace(fn, *arrays, batch_free=False):
    """Converted ``fn`` on data Variables (first dim unknown with ``batch_free``)."""
    converted = autostatic.convert(fn)
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = []
            for i, a in enumerate(arrays):
                shape = list(a.shape)
                if batch_free and shape:
                    shape[0] = None
                args.append(static.data(f"a{i}", shape, str(a.dtype)))
            out = converted(*args)
    finally:
        rt.disable_static()
    outs = list(out) if isinstance(out, (tuple, list)) else [] if out is None else [out]
    return main, outs


def run(main, outs, *arrays):
    return static.Executor().run(main, {f"a{i}": a for i, a in enumerate(arrays)}, outs)


def line_of(fn, text: str) -> int:
    """The file line of the first line of ``fn`` containing ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


floats = hnp.arrays(np.float32, (3,), elements=st.floats(-4, 4, width=32))


# ---- runtime functions on Python values: exactly the builtins ----------------------------


def test_convert_functions_are_the_builtins_on_python_values(capsys):
    assert jst.convert_len([1, 2]) == 2 and jst.convert_len("abc") == 3
    assert jst.convert_int("12") == 12 and jst.convert_int("ff", 16) == 255
    assert (
        jst.convert_int() == 0 and jst.convert_float("1.5") == 1.5 and jst.convert_bool() is False
    )
    assert jst.convert_bool([]) is False and jst.convert_var_dtype(2.7, "int") == 2
    assert jst.convert_isinstance(3, int) and not jst.convert_isinstance(3, (str, float))
    assert jst.convert_shape(np.zeros((2, 3))) == (2, 3)
    t = rt.to_tensor([1.0, 2.0])
    assert jst.convert_len(t) == 2 and jst.convert_shape(t) == [2]
    assert jst.convert_isinstance(t, rt.Tensor)
    buf = io.StringIO()
    jst.convert_print(1, "a", sep="-", end="!", file=buf, flush=True)
    assert buf.getvalue() == "1-a!"
    jst.convert_print(t)
    assert capsys.readouterr().out == str(t) + "\n"
    with pytest.raises(TypeError):
        jst.convert_print(1, bad=2)
    with pytest.raises(TypeError):
        jst.convert_len(5)
    with pytest.raises(AttributeError, match="'int' object has no attribute 'shape'"):
        jst.convert_shape(5)
    with pytest.raises(AssertionError, match="^m$"):
        jst.convert_assert(0, "m")
    jst.convert_assert([1])


# ---- shadowed names are not the builtins -------------------------------------------------


@pytest.mark.usefixtures("body")
def test_module_level_shadows_are_called_as_written():
    converted = autostatic.convert(shadowing.uses_shadows)
    assert converted([1, 2, 3]) == shadowing.uses_shadows([1, 2, 3]) == ("mine", -1, 3)


def test_local_shadows_are_left_untouched():
    code = autostatic.to_code(shadowing.local_shadows)
    assert "convert_len" not in code and "convert_print" not in code
    assert "convert_int" in code  # int is not shadowed
    code = autostatic.to_code(shadowing.uses_shadows)
    assert "print is _jst.builtins.print" in code  # decided when it runs


# ---- print -------------------------------------------------------------------------------


def prints(x):
    y = x * 2
    print("y:", y, 3, sep="|")
    return x + 1


def test_print_prints_each_time_the_program_runs(capsys):
    main, outs = trace(prints, np.ones(2, np.float32))
    assert "print" in op_types(main)
    assert capsys.readouterr().out == ""  # nothing while building
    a = np.array([1.0, 2.0], np.float32)
    run(main, outs, a)
    run(main, outs, a)
    want = f"y:|{rt.to_tensor(a * 2)}|3\n"
    assert capsys.readouterr().out == want * 2
    again = static.Program.parse(main.serialize())  # survives a round trip
    static.Executor().run(again, {"a0": a}, [outs[0].name])
    assert capsys.readouterr().out == want
    prints(rt.to_tensor(a))
    assert capsys.readouterr().out == want  # the same text eagerly


def prints_in_branch(x):
    if x.sum() > 0:
        print("positive", x.sum())
        y = x
    else:
        y = -x
    print("always", file=sys.stderr)
    return y


def test_print_in_a_branch_prints_when_the_branch_runs(capsys):
    main, outs = trace(prints_in_branch, np.ones(2, np.float32))
    assert capsys.readouterr().err == ""  # a line of Python values prints when it runs too
    run(main, [], np.array([1.0, 2.0], np.float32))  # nothing fetched: the cond stays
    printed = capsys.readouterr()
    assert "positive" in printed.out and printed.err == "always\n"
    run(main, outs, np.array([-1.0, -2.0], np.float32))
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err == "always\n"


def prints_python_values(x, n=3):
    print("x is", x)
    print("n is", n)  # Python values only
    if x.sum() > 0:
        print("positive")
    else:
        print("not positive")
    i = 0
    while i < x.sum():
        print("step")
        i += 1
    return x


def test_a_print_of_python_values_prints_in_eager_order_each_run(capsys):
    """A print of Python values only is a print op too: before, it printed once while the
    program was built (before every line of the tensors' prints, both branches of a tensor
    ``if``, one iteration of a tensor loop) and never when the program ran again."""
    main, outs = trace(prints_python_values, np.ones(2, np.float32))
    assert capsys.readouterr().out == ""
    for a in (np.array([1.0, 1.0], np.float32), np.array([-1.0, 0.0], np.float32)):
        run(main, outs, a)
        static_out = capsys.readouterr().out
        prints_python_values(rt.to_tensor(a))
        assert static_out == capsys.readouterr().out


def prints_an_array_argument(a, x):
    print(a)
    print("a is", a, {"unit": "m"})
    if rt.sum(x) > 0:
        print("positive", a)
    return x * 2.0


def prints_python_counters_of_a_tensor_loop(x, n):
    i = 0
    step = 0.25
    while i < n:
        print("step", i, step)
        i += 1
        step = step * 2.0
    print("done", i)
    return x


@pytest.mark.parametrize(
    "fn, args",
    [
        (prints_an_array_argument, (np.array([1, 2, 3]), rt.ones([2]))),
        (prints_an_array_argument, (np.array([0.5, -1.0]), -rt.ones([2]))),
        (prints_python_counters_of_a_tensor_loop, (rt.ones([2]), rt.to_tensor(3))),
    ],
    ids=["int_array", "float_array_other_branch", "loop_counters"],
)
def test_values_eager_holds_as_arrays_or_numbers_print_as_eagerly(capsys, fn, args):
    """A NumPy array argument (fed as a tensor) prints as NumPy prints it, and a Python
    number a tensor loop carries as a Python number (both printed as Tensor(...) before)."""
    fn(*args)
    want = capsys.readouterr().out
    sf = autostatic.to_static(fn)
    for _ in range(2):  # traced, then from the cache
        sf(*args)
        assert capsys.readouterr().out == want


def prints_to_file(x, buf):
    print(x, file=buf)


def test_print_of_a_tensor_to_a_file_is_a_clear_error():
    converted = autostatic.convert(prints_to_file)
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            x = static.data("x", [2], "float32")
            with pytest.raises(StaticBuildError, match="sys.stdout or sys.stderr") as info:
                converted(x, io.StringIO())
    finally:
        rt.disable_static()
    assert f"{HERE}:{line_of(prints_to_file, 'print(x')}" in str(info.value)


def test_paddle_style_print_shows_name_shape_dtype_values(capsys):
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            x = static.data("x", [None, 2], "float32")
            y = static.Print(x * 1, message="after scale", summarize=3) + 1
    finally:
        rt.disable_static()
    (got,) = static.Executor().run(main, {"x": np.ones((2, 2), np.float32)}, [y])
    np.testing.assert_allclose(got, 2 * np.ones((2, 2)))
    out = capsys.readouterr().out
    for text in ("Variable: ", "message: after scale", "shape: [2, 2]", "dtype: float32"):
        assert text in out
    assert "data: [1.0 1.0 1.0 ...]" in out


# ---- assert ------------------------------------------------------------------------------


def checks(x):
    assert x.sum() > 0, "sum must be positive"
    return x * 2


def test_assert_becomes_an_op_that_raises_at_the_users_line():
    main, outs = trace(checks, np.ones(2, np.float32))
    assert "assert" in op_types(main)
    np.testing.assert_allclose(run(main, outs, np.ones(2, np.float32))[0], [2, 2])
    for program in (main, static.Program.parse(main.serialize())):
        with pytest.raises(AssertionError) as info:  # an AssertionError, as in Python
            static.Executor().run(program, {"a0": -np.ones(2, np.float32)}, [outs[0].name])
        assert isinstance(info.value, AssertionFailedError)
        text = str(info.value)
        assert "'assert x.sum() > 0' failed: sum must be positive" in text
        assert f"{HERE}:{line_of(checks, 'assert')}" in text


def test_assert_is_kept_although_nothing_reads_it():
    main, _ = trace(checks, np.ones(2, np.float32))
    with pytest.raises(AssertionFailedError):
        run(main, [], -np.ones(2, np.float32))


def checks_in_loop(x):
    i = 0
    while i < x.sum():
        assert i < 3, "too many iterations"
        i = i + 1
    return i


def test_assert_inside_a_while_op():
    main, outs = trace(checks_in_loop, np.ones(2, np.float32))
    assert {"while", "assert"} <= op_types(main)
    assert int(run(main, outs, np.ones(2, np.float32))[0]) == 2
    with pytest.raises(AssertionFailedError, match="too many iterations"):
        run(main, outs, np.full(2, 5.0, np.float32))


def test_assert_of_a_python_value_while_tracing_is_pythons():
    def f(x, n):
        assert n > 0, f"n={n}"
        return x

    converted = autostatic.convert(f)
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            x = static.data("x", [2], "float32")
            assert converted(x, 1) is x
            with pytest.raises(AssertionError, match="^n=0$"):
                converted(x, 0)
    finally:
        rt.disable_static()


def test_assert_is_removed_under_python_O(tmp_path):
    script = tmp_path / "opt.py"
    script.write_text(
        textwrap.dedent(
            """
            import autostatic, autostatic_runtime.convert_ops as jst

            def f(a):
                assert a > 0, "never seen under -O"
                return a

            jst.tracing = True
            print(autostatic.convert(f)(-1))
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-O", str(script)], capture_output=True, text=True, env=_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "-1"


def gradient_through_checks(x):
    assert x.sum() > -100
    print(x.mean())
    return (x * x).sum()


def test_print_and_assert_do_not_repeat_in_the_backward_program(capsys):
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            x = static.data("x", [3], "float32")
            x.stop_gradient = False
            loss = autostatic.convert(gradient_through_checks)(x)
            (gx,) = static.gradients([loss], [x])
    finally:
        rt.disable_static()
    a = np.array([1.0, 2.0, 3.0], np.float32)
    _, g = static.Executor().run(main, {"x": a}, [loss, gx])
    np.testing.assert_allclose(g, 2 * a)
    assert capsys.readouterr().out.count("Tensor(") == 1


# ---- int / float / bool ------------------------------------------------------------------


def casts(x):
    s = x.sum()
    return int(s), float(x[0] > 0), bool(s), float(int(s))


@settings(max_examples=15, deadline=None)
@given(a=floats)
def test_int_float_bool_are_casts(a):
    main, outs = trace(casts, a)
    assert "cast" in op_types(main)
    assert [str(o.dtype) for o in outs] == ["int64", "float32", "bool", "float32"]
    assert all(o.shape == [] for o in outs)
    got = run(main, outs, a)
    want = eager(casts, a)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64))


def truth_of_vector(x):
    return bool(x > 0)


def test_bool_of_a_symbolic_vector_is_a_clear_error_at_the_users_line():
    with pytest.raises(StaticBuildError) as info:
        trace(truth_of_vector, np.ones(3, np.float32))
    text = str(info.value)
    assert "bool()" in text and "shape [3]" in text and "rt.all(x) or rt.any(x)" in text
    assert f"{HERE}:{line_of(truth_of_vector, 'return')}" in text


# ---- len and shape -----------------------------------------------------------------------


def sizes(x):
    n = len(x)
    rows, cols = x.shape
    flat = x.reshape([rows * cols])
    return flat * n, rows + cols


def test_len_and_shape_known_dims_stay_python_ints():
    main, outs = trace(sizes, np.ones((2, 3), np.float32))
    assert "shape" not in op_types(main)
    assert outs[1] == 5


def test_len_and_shape_unknown_dims_are_runtime_values():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    main, outs = trace(sizes, a, batch_free=True)
    assert "shape" in op_types(main)
    got = run(main, outs, a)
    want = eager(sizes, a)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    b = np.ones((5, 2), np.float32)  # the same program, another batch size
    np.testing.assert_allclose(run(main, outs, b)[1], 7)


def keeps_batch(x):
    return x.reshape([x.shape[0], -1])


def test_a_runtime_dim_in_reshape_is_inferred():
    a = np.ones((4, 2, 3), np.float32)
    main, outs = trace(keeps_batch, a, batch_free=True)
    assert "reshape_dynamic" in op_types(main) and len(outs[0].shape) == 2
    assert run(main, outs, a)[0].shape == (4, 6)
    assert run(main, outs, np.ones((7, 2, 3), np.float32))[0].shape == (7, 6)


def len_of_scalar(x):
    return len(x.sum())


def test_len_of_a_0d_tensor_is_a_type_error_as_eagerly():
    with pytest.raises(TypeError, match="0-D"):
        trace(len_of_scalar, np.ones(2, np.float32))
    with pytest.raises(TypeError, match="0-D"):
        len_of_scalar(rt.to_tensor([1.0]))


# ---- isinstance --------------------------------------------------------------------------


def tensor_or_number(x, scale):
    if isinstance(x, rt.Tensor) and not isinstance(scale, (rt.Tensor, str)):
        return x * scale
    return None


def test_isinstance_counts_a_symbolic_tensor_as_a_tensor():
    main, outs = trace(_with_scale, np.ones(2, np.float32))
    np.testing.assert_allclose(run(main, outs, np.ones(2, np.float32))[0], [3, 3])
    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            x = static.data("x", [2], "float32")
            assert jst.convert_isinstance(x, rt.Tensor | None)
            assert not jst.convert_isinstance(x, rt.nn.Parameter)
            assert jst.convert_isinstance(x, static.Variable)
    finally:
        rt.disable_static()


def _with_scale(x):
    return tensor_or_number(x, 3)


# ---- chained comparisons -----------------------------------------------------------------


def in_range(x):
    m = x.mean()
    return -1.0 < m <= 1.0, 0 < 1 < m


@settings(max_examples=15, deadline=None)
@given(a=floats)
def test_chained_comparison_of_tensors_is_logical_and(a):
    main, outs = trace(in_range, a)
    assert "logical_and" in op_types(main)
    got = run(main, outs, a)
    want = eager(in_range, a)
    for g, w in zip(got, want):
        assert bool(g) == bool(w)


def test_chained_comparison_evaluates_the_middle_once():
    calls = []

    def middle(x):
        calls.append(1)
        return x.mean()

    def f(x):
        return 0.0 < middle(x) < 2.0

    main, outs = trace(f, np.ones(2, np.float32))
    assert len(calls) == 1
    assert bool(run(main, outs, np.ones(2, np.float32))[0])


# ---- pdb and breakpoint ------------------------------------------------------------------


def _env():
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    return dict(os.environ, PYTHONPATH=root, PYTHONBREAKPOINT="pdb.set_trace")


@pytest.mark.parametrize("tracing", [False, True], ids=["eager", "tracing"])
@pytest.mark.parametrize("how", ["breakpoint()", "pdb.set_trace()"])
def test_the_debugger_stops_in_converted_code_at_the_users_line(tmp_path, tracing, how):
    script = tmp_path / "debugged.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import pdb
            import autostatic, autostatic_runtime.convert_ops as jst

            def f(a):
                x = a * 7
                {how}
                y = x + 1  # the line after the breakpoint
                return y

            jst.tracing = {tracing}
            print("result", autostatic.convert(f)(6))
            """
        )
    )
    out = subprocess.run(
        [sys.executable, str(script)],
        input="p x\nc\n",
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert f"{script}(8)f()" in out.stdout  # the user's file, line and function
    assert "-> y = x + 1  # the line after the breakpoint" in out.stdout
    assert "42" in out.stdout and "result 43" in out.stdout


# ---- inside control flow -----------------------------------------------------------------


def checks_in_branch(x):
    if x.mean() > 0:
        assert x.min() > 0, "mixed signs"
        y = x
    else:
        y = -x
    return y


def test_assert_in_a_tensor_branch_checks_only_when_the_branch_runs():
    main, outs = trace(checks_in_branch, np.ones(2, np.float32))
    assert {"cond", "assert"} <= op_types(main)
    run(main, [], np.array([-1.0, -2.0], np.float32))  # else branch: no check
    np.testing.assert_allclose(run(main, outs, np.array([1.0, 2.0], np.float32))[0], [1, 2])
    with pytest.raises(AssertionFailedError, match="mixed signs"):
        run(main, [], np.array([3.0, -1.0], np.float32))


def prints_in_loop(x):
    i = x.sum() * 0
    while i < 3:
        print("step", i)
        i = i + 1
    return i


def test_print_in_a_while_op_prints_each_iteration(capsys):
    main, outs = trace(prints_in_loop, np.ones(2, np.float32))
    assert {"while", "print"} <= op_types(main)
    run(main, [], np.ones(2, np.float32))  # nothing fetched: the while stays for its prints
    assert capsys.readouterr().out.count("step") == 3


# ---- the generated code ------------------------------------------------------------------


def generated(x, y, s):
    a = 0 < x < y <= s
    s.shape = x.shape
    n = y.shape(3)
    assert a, "msg"
    return n, len(x)


def test_generated_code_reads_like_its_docstrings():
    code = autostatic.to_code(generated)
    tracing = code.split("    else:\n        a = 0 < x < y <= s")[0]
    assert "__cmp_" not in tracing  # local middle operands are read twice, no temporaries
    assert "_jst.convert_and(__v_0, x < y)" in tracing  # each operand appears once
    assert "_jst.convert_and(__v_1, y <= s)" in tracing
    assert "s.shape = _jst.convert_shape(x)" in tracing  # loads only
    assert "convert_call(y.shape)(3)" in tracing  # a called .shape stays an attribute
    assert "assert __assert_2 if (__assert_2 := a).__class__ is not" in tracing
    assert "else _jst.convert_assert(__assert_2, " in tracing
    assert "'msg', 'a')" in tracing  # message and source text
    assert "len is _jst.builtins.len else _jst.convert_call(len)" in tracing
