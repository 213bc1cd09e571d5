# autostatic: enable
"""Tricky Python functions for the conversion contract's checks: converted (tracing) bodies
must behave exactly as the original on Python values. Each CASES entry: (function, list of
arg tuples). This module is marked so the import-hook checks can import it too."""

from __future__ import annotations

import itertools

LOG: list = []
G = 0


def order_of_evaluation(a, b):
    LOG.clear()

    def t(v):
        LOG.append(v)
        return v

    if t(a) > t(b) and t(a + 1) or t(b - 1):
        r = t("x") if t(a) else t("y")
    else:
        r = [t(i) for i in range(t(b)) if t(i % 2)]
    return r, list(LOG)


def unbound_after_if(a):
    if a > 0:
        y = a
    return y  # UnboundLocalError when a <= 0


def del_then_read(a):
    x = a
    if a > 1:
        del x
    return x


def del_in_for_else(n):
    b = 1
    for _ in range(n):
        pass
    else:
        del b
    return b


def del_in_loop(n):
    b = 0
    for i in range(n):
        if i == 2:
            del b
            break
        b = i
    return b


def for_else_break(xs, t):
    for x in xs:
        if x == t:
            break
    else:
        return "not found"
    return x


def while_else(n, t):
    i = 0
    while i < n:
        i += 1
        if i == t:
            break
        if i % 3 == 0:
            continue
    else:
        i = -i
    return i


def generator_to_loop(n, stop):
    def gen():
        for i in range(n):
            LOG.append(i)
            yield i

    LOG.clear()
    total = 0
    g = gen()
    for v in g:
        if v == stop:
            break
        total += v
    rest = list(g)
    return total, rest, list(LOG)


def iterator_consumption(xs, k):
    it = iter(xs)
    first = []
    for v in it:
        first.append(v)
        if len(first) == k:
            break
    second = []
    for v in it:
        if v < 0:
            continue
        second.append(v)
    return first, second


def walrus_everywhere(xs):
    out = []
    i = 0
    while (n := len(xs) - i) > 0:
        if (v := xs[i]) % 2 and (w := v * 2) > 4:
            out.append(w)
        elif v:
            out.append(-v)
        i += 1
    ys = [y for x in xs if (y := x + 1) > 2]
    return out, n, ys, y if xs else None


def closure_counter(n):
    count = 0

    def inc(k=1):
        nonlocal count
        count += k
        return count

    for i in range(n):
        if i % 2:
            inc()
        else:
            inc(2)
        if count > 7:
            break
    return count, inc()


def global_update(n):
    global G
    G = 0
    for i in range(n):
        if i > 2:
            G += i
        else:
            G -= 1
    return G


def try_finally_return(a):
    LOG.clear()
    try:
        if a > 0:
            return "try"
        LOG.append("body")
    finally:
        LOG.append("finally")
        if a > 5:
            return "finally"
    return "end"


def try_finally_break_continue(n):
    out = []
    for i in range(n):
        try:
            if i == 1:
                continue
            if i == 4:
                break
            out.append(i)
        finally:
            out.append(-i)
    else:
        out.append("else")
    return out


def exceptions_in_loop(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                raise ZeroDivisionError("zero")
            out.append(10 // x)
        except ZeroDivisionError as e:
            out.append(str(e))
            if len(out) > 3:
                return out
            continue
        except TypeError:
            break
        else:
            out.append("ok")
        finally:
            out.append("f")
    return out


def exception_var_unbound(a):
    e = "before"
    try:
        if a:
            raise ValueError(a)
    except ValueError as e:  # noqa: F841 (the case: except clears e)
        pass
    return e  # UnboundLocalError when a was raised (except clears e)


def match_statement(v):
    match v:
        case 0 | 1:
            return "small"
        case [x, y, *rest] if x > y:
            return ("seq", x, y, len(rest))
        case {"k": k, **others}:
            if k:
                return ("map", k, sorted(others))
            return "map-empty"
        case str() as s if len(s) > 2:
            return s.upper()
        case int(n) if n < 0:
            return -n
    return "other"


def many_early_returns(k, x):
    if k == 0:
        return x
    if k == 1:
        return x + 1
    if k == 2:
        if x > 0:
            return x * 2
        x = -x
    if k == 3:
        for i in range(x):
            if i == 2:
                return i
    while k > 4:
        k -= 1
        if k == 6:
            return "six"
        if k == 5:
            continue
    return (k, x)


def nested_loops_return(grid, t):
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            if v == t:
                return r, c
            if v < 0:
                break
        else:
            continue
        break
    return None


def lambdas_and_comprehensions(n):
    fs = [lambda x, i=i: x * i for i in range(n)]
    g = (f(2) for f in fs if f(1) % 2 == 0)
    d = {i: [j for j in range(i) if j % 2] for i in range(n)}
    s = {x % 3 for x in range(n)}
    return [f(3) for f in fs], list(g), d, s


def decorated(n):
    def deco(fn):
        def wrapper(*a):
            return ("wrapped", fn(*a))

        return wrapper

    @deco
    def inner(x):
        if x > 1:
            return x * 2
        return x

    return [inner(i) for i in range(n)]


def class_in_function(n):
    class K:
        base = n

        def __init__(self, v):
            self.v = v

        def get(self):
            if self.v > self.base:
                return self.v
            return self.base

    return [K(i).get() for i in range(n + 2)]


def super_zero_arg(n):
    class A:
        def f(self):
            return "A"

    class B(A):
        def f(self):
            if n:
                return "B" + super().f()
            return "B"

    return B().f()


def with_statement(n):
    log = []

    class CM:
        def __enter__(self):
            log.append("enter")
            return self

        def __exit__(self, *exc):
            log.append(("exit", exc[0].__name__ if exc[0] else None))
            return n > 3

    for i in range(n):
        with CM():
            if i == 2:
                continue
            if i == 4:
                raise KeyError(i)
            log.append(i)
    return log


def augmented_and_star(a, *args, k=1, **kw):
    x, *y = (a, *args)
    x += k
    if kw:
        for key in sorted(kw):
            x += kw[key]
    else:
        x *= 2
    return x, y


def loop_var_after(n):
    for i in range(n):
        pass
    return i  # unbound when n == 0


def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


def nonlocal_in_nested_loop(n):
    total = 0

    def add(v):
        nonlocal total
        total += v

    i = 0
    while i < n:
        j = 0
        while j < i:
            add(j)
            j += 1
            if total > 10:
                break
        i += 1
    return total


def chained_comparisons(a, b, c):
    LOG.clear()

    def t(v):
        LOG.append(v)
        return v

    r = t(a) < t(b) < t(c)
    s = a < b > c != a
    return r, s, list(LOG)


def zip_enumerate(xs, ys):
    out = []
    for i, (x, y) in enumerate(zip(xs, ys), start=1):
        if x == y:
            continue
        out.append((i, x - y))
    return out


def shadowed_builtins(xs):
    len = lambda v: 42  # noqa: E731
    range = list  # noqa: F841
    if xs:
        return len(xs)
    return print


def conditional_import(flag):
    if flag:
        import math as m
    else:
        import cmath as m
    return m.__name__


def augmented_attribute_subscript(n):
    class O:
        pass

    o = O()
    o.v = 0
    d = {"k": [0]}
    for i in range(n):
        if i % 2:
            o.v += i
        else:
            d["k"][0] -= i
    return o.v, d


def raise_from_and_reraise(a):
    try:
        try:
            if a == 0:
                raise ValueError("v")
            return 1 / a
        except ValueError as e:
            raise RuntimeError("r") from e
    except RuntimeError as e:
        return type(e.__cause__).__name__


def itertools_loop(n):
    out = []
    for a, b in itertools.product(range(n), repeat=2):
        if a == b:
            continue
        if a + b > n:
            break
        out.append((a, b))
    return out


def yield_function(n):
    for i in range(n):
        if i % 2:
            yield i
        else:
            continue
    return


def default_mutable(v, acc=[]):  # noqa: B006
    if v:
        acc.append(v)
    return list(acc)


def del_in_loop_left_by_return(k):
    """The hand-over of the loop's other items after a return (a Python flag) read ``b``,
    deleted by an earlier item: UnboundLocalError where Python returns."""
    a = 1
    b = 2
    for a in range(k):
        if a > 0:
            return (a, k)
        del b
    return (a, b)


def del_in_loop_left_by_break(k):
    b = 2
    for a in range(k):
        if a > 0:
            break
        del b
    else:
        a = -1
    return a


def del_loop_target_then_return(k):
    b = 2
    a = 1
    for a in range(k):
        del a
        if b > 0:
            return (b, k)
    return (a, b)


def unbound_after_loop_left_by_break(k):
    """A Python break handed the loop's (no) other items over all the same, binding ``a``
    (unbound in Python) to the runtime's UNDEFINED: ``a = a`` then did not raise."""
    b = 2
    if b % 2:
        a = 0
    else:
        for c in range(k):
            if b > 0:
                break
            a = c
        a = a
    return a


class Base:
    def f(self, n):
        return ("base", n)


class Child(Base):
    scale = 3

    def f(self, n):
        if n > 0:
            return super().f(n)
        for i in range(-n):
            if i == 2:
                return ("child-loop", i, __class__.__name__)
        return ("child", n)

    @property
    def p(self):
        if self.scale > 2:
            return self.scale * 2
        return None

    @staticmethod
    def s(n):
        while n > 10:
            n //= 2
        return n

    @classmethod
    def c(cls, n):
        return cls.__name__ if n else cls.scale


def class_methods(n):
    ch = Child()
    return ch.f(n), ch.p, Child.s(n), Child.c(n), Child.c(0)


async def _agen(n):
    for i in range(n):
        if i % 2:
            continue
        yield i


async def _coro(n):
    out = []
    async for v in _agen(n):
        if v > 4:
            break
        out.append(v)
    return out


def run_async(n):
    import asyncio

    return asyncio.run(_coro(n))


CASES = [
    (order_of_evaluation, [(1, 2), (3, 1), (0, 0), (2, 2), (-1, 3)]),
    (unbound_after_if, [(1,), (0,)]),
    (del_then_read, [(1,), (2,)]),
    (del_in_for_else, [(0,), (1,), (3,)]),
    (del_in_loop, [(0,), (2,), (5,)]),
    (for_else_break, [([1, 2, 3], 2), ([1, 2, 3], 9), ([], 1)]),
    (while_else, [(5, 2), (5, 9), (0, 1), (7, 3)]),
    (generator_to_loop, [(5, 2), (5, 9), (0, 0)]),
    (iterator_consumption, [([1, 2, -3, 4, 5], 2), ([1], 3), ([], 1)]),
    (walrus_everywhere, [([1, 2, 3, 0, 5],), ([],), ([4],)]),
    (closure_counter, [(0,), (3,), (10,)]),
    (global_update, [(0,), (5,)]),
    (try_finally_return, [(1,), (0,), (6,), (-3,)]),
    (try_finally_break_continue, [(0,), (3,), (6,)]),
    (exceptions_in_loop, [([1, 0, 2],), ([0, 0, 0, 0, 1],), ([1, "a", 2],), ([],)]),
    (exception_var_unbound, [(0,), (1,)]),
    (match_statement, [(0,), ([3, 1, 5, 6],), ([1, 3],), ({"k": 1, "z": 2},), ({"k": 0},),
                       ("abc",), ("a",), (-4,), (4.5,)]),
    (many_early_returns, [(k, x) for k in range(9) for x in (-2, 0, 3, 5)]),
    (nested_loops_return, [([[1, 2], [3, 4]], 3), ([[1, -1, 3], [3]], 3), ([[5]], 1), ([], 0)]),
    (lambdas_and_comprehensions, [(0,), (4,)]),
    (decorated, [(3,)]),
    (class_in_function, [(0,), (2,)]),
    (super_zero_arg, [(0,), (1,)]),
    (with_statement, [(3,), (5,), (6,)]),
    (augmented_and_star, [(1,), (1, 2, 3), (1, 2, "k"), (1,)]),
    (loop_var_after, [(0,), (3,)]),
    (while_true_break, [(0,), (1,), (4,)]),
    (nonlocal_in_nested_loop, [(0,), (4,), (10,)]),
    (chained_comparisons, [(1, 2, 3), (3, 2, 1), (1, 2, 2)]),
    (zip_enumerate, [([1, 2, 3], [1, 0, 3, 4]), ([], [1])]),
    (shadowed_builtins, [([1],), ([],)]),
    (conditional_import, [(True,), (False,)]),
    (augmented_attribute_subscript, [(0,), (5,)]),
    (raise_from_and_reraise, [(0,), (2,)]),
    (itertools_loop, [(0,), (3,), (5,)]),
    (class_methods, [(0,), (2,), (-5,), (40,)]),
    (del_in_loop_left_by_return, [(0,), (1,), (3,)]),
    (del_in_loop_left_by_break, [(0,), (1,), (3,)]),
    (del_loop_target_then_return, [(0,), (1,), (3,)]),
    (unbound_after_loop_left_by_break, [(0,), (1,), (3,)]),
    (run_async, [(0,), (9,)]),
]
