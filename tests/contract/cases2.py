"""More tricky Python for the forced-converted checks: builtins the converter routes
(print, len, int, float, bool, max, min, isinstance, range, enumerate, zip), .shape on
non-tensors, generators' return values, finally overriding, frames and warnings."""

from __future__ import annotations

import io
import sys
import warnings

import numpy as np


class Weird:
    def __init__(self, v):
        self.v = v
        self.log = []

    def __bool__(self):
        self.log.append("bool")
        return self.v > 0

    def __len__(self):
        self.log.append("len")
        if self.v < 0:
            raise ValueError("negative length")
        return self.v

    def __int__(self):
        return self.v * 10

    def __float__(self):
        return self.v / 4

    def __index__(self):
        return self.v

    def __gt__(self, other):
        self.log.append("gt")
        return self.v > other

    def __repr__(self):
        return f"Weird({self.v}, {self.log})"


def builtins_on_objects(v):
    w = Weird(v)
    out = []
    if w:
        out.append(len(w))
    out.append(int(w))
    out.append(float(w))
    out.append(bool(w))
    out.append(not w)
    out.append(w and 5)
    out.append(w or "zero")
    return out, w


def max_min_ties(a, b):
    return (max(a, b), min(a, b), max([a, b]), min((b, a)), max(a, b, key=abs),
            max([], default="d"), min(a, b, 3))


def isinstance_tuples(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return "number"
    if isinstance(v, np.ndarray):
        return ("array", v.shape, len(v))
    return type(v).__name__


def shape_of_numpy(n):
    a = np.zeros((n, 3))
    s = a.shape
    if a.shape[0] > 1:
        return s, type(s).__name__, a.shape[1]
    return s, len(a)


def print_variants(n):
    buf = io.StringIO()
    for i in range(n):
        if i % 2:
            print(i, "odd", sep="-", end="|", file=buf)
        else:
            print(i, file=buf)
    print(file=buf)
    return buf.getvalue()


def range_enumerate_zip(n):
    out = []
    r = range(n, 0, -2)
    for i, (a, b) in enumerate(zip(r, "abcdef"), 5):
        if a == 3:
            continue
        out.append((i, a, b))
    try:
        for p in zip([1, 2], [3], strict=True):
            out.append(p)
    except ValueError as e:
        out.append(str(e))
    return out, r[::-1]


def gen_return_value(n):
    def g():
        try:
            for i in range(n):
                if i == 3:
                    return "early"
                yield i
        finally:
            LOG.append("closed")
        return "done"

    LOG.clear()
    it = g()
    got = []
    while True:
        try:
            got.append(next(it))
        except StopIteration as e:
            got.append(e.value)
            break
    return got, list(LOG)


LOG: list = []


def finally_overrides(n):
    for i in range(n):
        try:
            if i == 1:
                raise ValueError("x")
        finally:
            if i == 1:
                return "finally-return"  # noqa: B012
    return "end"


def continue_in_finally(n):
    out = []
    for i in range(n):
        try:
            if i % 2:
                raise KeyError(i)
            out.append(i)
        finally:
            if i < 3:
                continue  # noqa: B012 - swallows the KeyError
        out.append("after")
    return out


def for_rebinds_iterable(xs):
    out = []
    for x in xs:
        xs = [0]
        out.append(x)
    for x in x if isinstance(x, list) else [x]:
        out.append(x)
    return out, xs


def subscript_side_effects(n):
    calls = []

    def k(v):
        calls.append(v)
        return v % 2

    d = {0: 0, 1: 0}
    for i in range(n):
        if i > 1:
            d[k(i)] += i
        else:
            d[k(i)] -= 1
    return d, calls


def warn_stacklevel(flag):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if flag:
            warnings.warn("careful", stacklevel=1)
    return [(str(x.message), x.lineno) for x in w]


def frame_lines(a):
    if a:
        line = sys._getframe().f_lineno
    else:
        line = -sys._getframe().f_lineno
    return line - sys._getframe().f_code.co_firstlineno


def locals_view(a):
    b = a * 2
    if a:
        c = 3
    return sorted(locals())


def assert_with_side_effect(a):
    calls = []
    try:
        assert a > 0, calls.append("msg") or "message"
    except AssertionError as e:
        return str(e), calls
    return "ok", calls


def del_loop_var(n):
    out = []
    for i in range(n):
        out.append(i)
        del i
    try:
        return out, i  # noqa: F821
    except UnboundLocalError as e:
        return out, type(e).__name__


def nested_global_and_nonlocal(n):
    x = 0

    def outer():
        nonlocal x

        def inner():
            global G2
            G2 = n
            return G2

        for _ in range(n):
            x += inner()
        return x

    return outer(), G2


G2 = None


def walrus_in_comprehension_and_guard(xs):
    match xs:
        case [first, *_] if (m := first * 2) > 2:
            return m, [t for v in xs if (t := v) > 1], t
        case _:
            return None


def while_condition_side_effects(n):
    calls = []

    def c(i):
        calls.append(i)
        return i < n

    i = 0
    while c(i):
        i += 1
        if i == 5:
            break
    else:
        calls.append("else")
    return calls


def conditional_expression_side_effects(a):
    log = []
    v = (log.append("t") or "T") if (log.append("c") or a) else (log.append("f") or "F")
    return v, log


def break_in_finally(n):
    out = []
    for i in range(n):
        try:
            if i == 2:
                raise KeyError(i)
            out.append(i)
        finally:
            if i == 2:
                break  # noqa: B012 - swallows the KeyError
    return out


def long_elif_with_jumps(v):
    out = []
    for i in range(v):
        if i == 0:
            out.append("zero")
        elif i == 1:
            continue
        elif i == 2:
            out.append("two")
            if v == 3:
                break
        elif i == 4:
            return out, "four"
        else:
            out.append(i)
    else:
        out.append("else")
    return out


CASES = [
    (builtins_on_objects, [(0,), (3,), (-2,)]),
    (max_min_ties, [(1, 1.0), (-2, 2), (True, 1), (2, -3)]),
    (isinstance_tuples, [(1,), (True,), (2.5,), (np.ones(3),), ("s",)]),
    (shape_of_numpy, [(0,), (1,), (4,)]),
    (print_variants, [(0,), (5,)]),
    (range_enumerate_zip, [(0,), (7,)]),
    (gen_return_value, [(2,), (5,)]),
    (finally_overrides, [(0,), (1,), (3,)]),
    (for_rebinds_iterable, [([1, 2, 3],), ([],), ([[4, 5]],)]),
    (subscript_side_effects, [(0,), (5,)]),
    (warn_stacklevel, [(True,), (False,)]),
    (frame_lines, [(0,), (1,)]),
    (assert_with_side_effect, [(1,), (0,)]),
    (del_loop_var, [(0,), (3,)]),
    (nested_global_and_nonlocal, [(0,), (3,)]),
    (walrus_in_comprehension_and_guard, [([2, 0, 3],), ([1],), ([],)]),
    (while_condition_side_effects, [(0,), (3,), (9,)]),
    (conditional_expression_side_effects, [(0,), (1,)]),
    (long_elif_with_jumps, [(0,), (3,), (4,), (6,)]),
]
