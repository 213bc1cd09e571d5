"""The stack a converted body sees: ``warnings.warn(stacklevel=n)``, ``sys._getframe(n)``,
``inspect.stack()`` and ``inspect.currentframe()`` count the frames the eager program has,
while tracing (entry checks, tracing bodies, branch and loop functions, the runtime's own
frames in between) as eagerly."""

from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt

RECORDS: list = []


def deprecated(what, level):
    warnings.warn(f"{what} is deprecated", DeprecationWarning, stacklevel=level)


def caller_line(depth):
    frame = sys._getframe(depth)
    return frame.f_code.co_filename, frame.f_lineno  # (in a branch: __true_fn_1 as the name)


def names_on_stack():
    here = inspect.currentframe()
    return tuple(info.function for info in inspect.stack()[:4]), here.f_code.co_name


def steps(x, level):
    deprecated("plain code", level)
    RECORDS.append(("plain", caller_line(1), caller_line(2), names_on_stack()))
    if rt.sum(x) > 0:  # a tensor branch: traced in a branch function
        deprecated("a branch", level)
        RECORDS.append(("branch", caller_line(1), caller_line(2)))
        x = x + 1
    i = 0
    while i < rt.shape(x)[0]:  # a tensor loop: its body traced in a loop function
        deprecated("a loop body", level)
        RECORDS.append(("loop", caller_line(1), caller_line(2)))
        i += 1
    return x


def model(x, level):
    return steps(x, level) * 2


def _run(fn, *args):
    RECORDS.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    where = {(str(w.message), w.filename, w.lineno) for w in caught}
    return where, {tuple(r) for r in RECORDS}


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_traced_body_sees_the_frames_of_the_eager_program(level):
    x = np.ones([2], np.float32)
    eager = _run(model, rt.to_tensor(x), level)
    static = _run(autostatic.to_static(model), rt.to_tensor(x), level)
    assert static == eager
    where, records = eager
    first = steps.__code__.co_firstlineno
    called = ((__file__, first + 2), (__file__, model.__code__.co_firstlineno + 1))
    names = (("names_on_stack", "steps", "model", "_run"), "names_on_stack")
    assert ("plain", *called, names) in records
    assert {line for _, _, line in where} and all(f == __file__ for _, f, _ in where)


def test_a_stacklevel_past_the_stack_names_what_python_names():
    def shallow(x):
        warnings.warn("far", UserWarning, stacklevel=50)
        return x

    with warnings.catch_warnings(record=True) as eager:
        warnings.simplefilter("always")
        shallow(rt.to_tensor([1.0]))
    with warnings.catch_warnings(record=True) as static:
        warnings.simplefilter("always")
        autostatic.to_static(shallow)(rt.to_tensor([1.0]))
    assert [w.filename for w in static] == [w.filename for w in eager] == ["sys"]
