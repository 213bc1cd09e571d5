"""Converted == original on Python values: same results, same exceptions, same side effects."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autostatic
from tests import programs
from tests.programs import PROGRAMS

pytestmark = pytest.mark.usefixtures("body")  # every test, on both bodies


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # the exception type and message must match too
        return ("raised", type(exc), str(exc))


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
@settings(max_examples=60, deadline=None)
@given(a=st.integers(-20, 20), b=st.integers(-20, 20))
def test_converted_matches_original(fn, a, b):
    converted = autostatic.convert(fn)
    programs.COUNTER = 0
    want = outcome(fn, a, b)
    counter_after_original = programs.COUNTER
    programs.COUNTER = 0
    got = outcome(converted, a, b)
    assert got == want
    assert programs.COUNTER == counter_after_original


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_metadata_is_kept(fn):
    converted = autostatic.convert(fn)
    assert converted.__name__ == fn.__name__
    assert converted.__qualname__ == fn.__qualname__
    assert converted.__doc__ == fn.__doc__
    assert converted.__defaults__ == fn.__defaults__
    assert inspect.signature(converted) == inspect.signature(fn)
    assert inspect.getsource(converted) == inspect.getsource(fn)
    assert converted.__code__.co_filename == fn.__code__.co_filename
    assert autostatic.convert(converted) is converted


def test_tracebacks_show_the_users_lines():
    def fails(a):
        if a > 0:
            b = a + 1
        raise RuntimeError(f"boom {b}")

    converted = autostatic.convert(fails)
    with pytest.raises(RuntimeError) as info:
        converted(1)
    frame = info.traceback[-1]
    assert frame.path == __file__ or str(frame.path) == __file__
    assert frame.lineno + 1 == fails.__code__.co_firstlineno + 3


def test_an_error_in_a_branch_of_one_statement_names_its_own_line():
    """``if c: return x`` then ``s += x`` is one assignment in the converted body; the
    ``+=`` that raises is still reported at its own line, in a ``try`` too."""

    def adds(xs, limit):
        s = "a"
        try:
            for x in xs:
                if x > limit:
                    return x
                s += x
        except KeyError:
            return -1
        return s

    converted = autostatic.convert(adds)
    with pytest.raises(TypeError) as info:
        converted([1, 2], 5)
    assert info.traceback[-1].lineno + 1 == adds.__code__.co_firstlineno + 6


def test_methods_static_and_class_methods_lambdas_and_partials():
    import functools

    class K:
        def __init__(self):
            self.k = 3

        def m(self, a):
            return self.k if a > 0 else -self.k

        @staticmethod
        def s(a):
            return a and 5

        @classmethod
        def c(cls, a):
            return cls.__name__ if a else None

    k = K()
    assert autostatic.convert(k.m)(1) == 3 and autostatic.convert(K.m)(k, -1) == -3
    assert autostatic.convert(K.__dict__["s"]).__func__(0) == 0
    assert autostatic.convert(K.__dict__["c"]).__func__(K, 1) == "K"
    lam = lambda a: a if a > 2 else -a  # noqa: E731
    assert autostatic.convert(lam)(1) == -1 and autostatic.convert(lam)(3) == 3
    part = functools.partial(programs.if_elif_else, 5)
    assert autostatic.convert(part)(7) == 2


def test_not_to_static_and_builtins_are_returned_as_they_are():
    @autostatic.not_to_static
    def keep(a):
        return a

    assert autostatic.convert(keep) is keep
    assert autostatic.convert(len) is len


def test_the_code_of_a_not_to_static_function_is_its_own():
    class Helper:
        def total(self, x):
            if x.shape[0] > 1:
                x = x + 1
            return x

    helper = Helper()
    autostatic.not_to_static(helper.total)  # as Paddle's jit.not_to_static(net.sum)
    code = autostatic.to_static(helper.total).code  # it is traced as written
    assert "if x.shape[0] > 1:" in code and "convert_ifelse" not in code
    assert code.startswith("def total(self, x):")


def test_to_code_shows_the_tracing_body_and_the_functional_form():
    code = autostatic.to_code(programs.if_elif_else)
    assert "_jst.tracing" not in code and "convert_ifelse" in code
    assert "__true_fn_3 = lambda a, b: (a - b,)" in code  # a branch of assignments: a lambda
    # an elif's branch is one inner convert_ifelse: a lambda too
    assert "__false_fn_4 = lambda a, b: _jst.convert_ifelse(a == b, " in code
    assert "def if_elif_else(a, b):" in code
    assert "__class__ is _jst_Variable" in code  # the user's statement for Python values


def test_branches_that_cannot_run_as_functions_keep_the_users_statement():
    for fn in (
        programs.closure_sees_branch_update,  # a closure reads what the branch assigns
        programs.exception_after_branch_assignment,  # an exception would hide the update
        programs.if_without_else_and_missing_var,  # reads a possibly-unbound variable
    ):
        assert "__class__ is _jst_Variable" in autostatic.to_code(fn), fn.__name__
