"""``global``/``nonlocal`` names assigned inside a tensor ``if`` or loop: the op carries the
name as a loop variable or branch output, and the assignment after it sets the module's (or
the enclosing function's) variable, so code after the statement reads the op's result, as
eager code reads the Python value. The converted body keeps Python's semantics on Python
values, wherever the declaration is written (its declarations are moved to the top)."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from tests.idioms.harness import check

TALLY = 0
TRACE = None
SCALE = 1


def steps_until_zero(x):
    global TALLY
    TALLY = 0
    while x > 0:
        TALLY = TALLY + 1
        x = x - 1.0
    return x, TALLY


def declared_in_the_loop(n):
    for i in range(n):
        global TRACE
        TRACE = i * 3
    return TRACE


def doubled_in_one_branch(x):
    global SCALE
    SCALE = 1
    if rt.sum(x) > 0:
        SCALE = SCALE * 2
    return x * SCALE


def declared_in_a_branch(x):
    if rt.mean(x) > 0:
        global TRACE
        TRACE = x + 1.0
    else:
        TRACE = x - 1.0
    return TRACE * 2.0


def counter_of_a_closure(x):
    calls = 0

    def run(y):
        nonlocal calls
        while rt.sum(y) > 0:
            calls = calls + 1
            y = y - 1.0
        return y

    return run(x), calls


CASES = [
    (steps_until_zero, [(np.float32(3.0),), (np.float32(-1.0),)]),
    (declared_in_the_loop, [(np.int64(4),)]),
    (doubled_in_one_branch, [(np.ones(3, "float32"),), (-np.ones(3, "float32"),)]),
    (declared_in_a_branch, [(np.ones(3, "float32"),), (-np.ones(3, "float32"),)]),
    (counter_of_a_closure, [(np.float32(2.5),), (np.float32(0.0),)]),
]


@pytest.mark.parametrize("fn, inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_global_assigned_in_a_tensor_statement_matches_eager(fn, inputs):
    arrays = [tuple(np.asarray(a) for a in args) for args in inputs]
    check(fn, arrays, grad=False)


def test_the_global_holds_the_ops_result_after_the_statement_while_traced():
    seen = []

    def after(x):
        global TALLY
        TALLY = 0
        while x > 0:
            TALLY = TALLY + 2
            x = x - 1
        seen.append(type(TALLY).__name__)
        return TALLY

    assert int(autostatic.to_static(after)(rt.to_tensor(3))) == 6
    assert seen == ["Variable"]


# ---- the converted body on Python values --------------------------------------------------


def python_loop_with_inner_declaration(n):
    for i in range(n):
        if i % 2:
            global TRACE
            TRACE = i
        else:
            try:
                pass
            except ValueError:
                global SCALE
                SCALE = 0
    return TRACE


@pytest.mark.usefixtures("body")
def test_declarations_inside_blocks_keep_pythons_meaning():
    global TRACE, SCALE
    TRACE, SCALE = None, 1
    converted = autostatic.convert(python_loop_with_inner_declaration)
    assert converted(4) == 3 and TRACE == 3 and SCALE == 1
    TRACE = None
    assert converted(0) is None
