"""Nested functions keep their bodies as written in the tracing function, each with an entry
check, and are converted on their own first trace (``transformers/nested_functions.py``):
every way a nested function is reached while tracing still gives the program its ops, and
Python's semantics of closures stay exact."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime.errors import StaticBuildError
from tests.compiler.test_symbolic_path import op_types, trace


def _module(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOURCE = """
import functools
import autostatic_runtime as rt


def after_return(x, n):
    if n == 0:
        return x
    def halve(y):
        while rt.sum(y) > 1:
            y = y / 2
        return y
    return halve(x) + n


def nested_twice(x):
    if rt.mean(x) > 10:
        return x
    def outer(v):
        if rt.mean(v) > 5:
            return v * 0
        def inner(w):
            if rt.mean(w) > 0:
                return w + 1
            return w - 1
        return inner(v) * 2
    return outer(x)


def called_by_python(xs):
    def add(acc, x):
        if rt.sum(x) > 0:
            return acc + x
        return acc - x
    return functools.reduce(add, xs, rt.zeros([2]))


def reads_later_binding(x):
    def scaled():
        return y * 2
    y = x + 1
    if rt.mean(x) > 0:
        y = y * 3
    return scaled()


def local_class(x):
    class Base:
        def step(self, v):
            return v + 1

    class Clip(Base):
        def step(self, v):
            if rt.max(v) > 1:
                v = v / rt.max(v)
            return super().step(v)

    return Clip().step(x)


class Scaled:
    def __init__(self):
        self.__scale = 3.0

    def apply(self, x):
        if rt.mean(x) > 100:
            return x
        def g(v):
            if rt.mean(v) > 0:
                return v * self.__scale  # mangled, as in the method
            return v - self.__scale
        return g(x)


def returns_closure(x):
    def sign(v):
        if rt.mean(v) > 0:
            return v * 0 + 1
        return v * 0 - 1
    return sign(x), sign
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("nested"), "nested_functions_cases", SOURCE)


def _same(fn, *args):
    """The static function gives what the eager one gives, on every input."""
    static = autostatic.to_static(fn)
    expected = fn(*args)
    got = static(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)
    return static


def _tensor(*values):
    return rt.to_tensor(np.array(values, np.float32))


def test_a_def_after_an_early_return_keeps_its_body_and_traces_its_loop(mod):
    code = autostatic.to_code(mod.after_return)
    assert "while rt.sum(y) > 1:" in code  # the user's loop, not its converted form
    assert code.count("traces_here()") == 2  # the def, on both paths of the early return
    _same(mod.after_return, _tensor(8.0, 4.0), 3)
    _same(mod.after_return, _tensor(0.25, 0.25), 3)
    main, _ = trace(lambda x: mod.after_return(x, 3), np.ones(2, np.float32))
    assert "while" in op_types(main)  # the nested function's loop is an op


def test_functions_nested_in_nested_functions_trace_each_on_their_own(mod):
    for values in ((1.0, 2.0), (-3.0, -4.0), (6.0, 7.0), (20.0, 30.0)):
        static = autostatic.to_static(mod.nested_twice)
        expected = mod.nested_twice(_tensor(*values))
        np.testing.assert_allclose(static(_tensor(*values)).numpy(), expected.numpy())


def test_one_static_function_holds_the_conds_of_its_nested_functions(mod):
    static = autostatic.to_static(mod.nested_twice)
    for values in ((1.0, 2.0), (-3.0, -4.0), (6.0, 7.0), (20.0, 30.0)):  # one program
        expected = mod.nested_twice(_tensor(*values))
        np.testing.assert_allclose(static(_tensor(*values)).numpy(), expected.numpy())


def test_a_nested_function_called_by_python_code_is_traced_too(mod):
    xs = [_tensor(1.0, 2.0), _tensor(-5.0, 1.0), _tensor(3.0, 3.0)]
    static = autostatic.to_static(mod.called_by_python)
    np.testing.assert_allclose(static(xs).numpy(), mod.called_by_python(xs).numpy())
    flipped = [-x for x in xs]
    np.testing.assert_allclose(static(flipped).numpy(), mod.called_by_python(flipped).numpy())


def test_a_closure_reads_the_value_bound_after_its_def(mod):
    for values in ((1.0, 2.0), (-1.0, -2.0)):
        _same(mod.reads_later_binding, _tensor(*values))


def test_methods_of_local_classes_trace_with_super(mod):
    _same(mod.local_class, _tensor(0.5, 0.25))
    _same(mod.local_class, _tensor(4.0, 2.0))


def test_a_function_nested_in_a_method_reads_its_private_names(mod):
    obj = mod.Scaled()
    _same(obj.apply, _tensor(1.0, 2.0))
    _same(obj.apply, _tensor(-1.0, -2.0))


def test_a_returned_closure_runs_as_python_after_the_trace(mod):
    static = autostatic.to_static(lambda x: mod.returns_closure(x)[0])
    np.testing.assert_allclose(static(_tensor(2.0, 2.0)).numpy(), [1.0, 1.0])
    np.testing.assert_allclose(static(_tensor(-2.0, -2.0)).numpy(), [-1.0, -1.0])
    _, sign = mod.returns_closure(_tensor(1.0, 1.0))
    np.testing.assert_allclose(sign(_tensor(-3.0, -3.0)).numpy(), [-1.0, -1.0])  # eager


def test_a_nested_function_of_an_edited_file_is_a_clear_error(tmp_path):
    mod = _module(tmp_path, "edited_nested", SOURCE)
    path = tmp_path / "edited_nested.py"
    static = autostatic.to_static(mod.after_return)
    static(_tensor(8.0, 4.0), 0)  # traced: the function returns before its nested def
    path.write_text("# edited\n" + path.read_text())
    with pytest.raises(StaticBuildError, match="edited_nested.py has changed since"):
        static(_tensor(8.0, 4.0), 3)  # a new program reaches the def


PYTHON_SOURCE = """
def class_in_nested(n):
    def make():
        class K:
            def __init__(self, v):
                self.v = v

            def get(self):
                if self.v > 1:
                    return self.v
                return super().__repr__().startswith("<")

        return K(n)

    return make().get()


def late_binding(n):
    fs = []
    for i in range(n):
        def g(k=i):
            return k + i
        fs.append(g)
    return [f() for f in fs]


def shadows_the_runtime_name(n):
    def _jst(v):
        return v * 2

    class Twice:
        def get(self, v):
            if v:
                return _jst(v)
            return 0

    return Twice().get(n)
"""


@pytest.mark.parametrize("name", ["class_in_nested", "late_binding", "shadows_the_runtime_name"])
def test_converted_bodies_of_nested_functions_and_local_classes_run_as_python(
    tmp_path, monkeypatch, name
):
    """Each body converted on its own trace (forced here); the runtime's name in a method of
    a local class is never a ``__x`` name (the class body would mangle it)."""
    from autostatic_runtime import convert_ops

    fn = getattr(_module(tmp_path, f"nested_python_{name}", PYTHON_SOURCE), name)
    want = [fn(n) for n in range(4)]
    converted = autostatic.convert(fn)
    monkeypatch.setattr(convert_ops, "tracing", True)
    assert [converted(n) for n in range(4)] == want
