"""A catalogue of control-flow functions over Python values (tangent's idea).

Parametrized tests run each of them original vs converted on many inputs: the converted
function must return the same values and raise the same exceptions. Every function takes
two ints.
"""

from __future__ import annotations

COUNTER = 0


def if_elif_else(a, b):
    if a > b:
        r = a - b
    elif a == b:
        r = 0
    else:
        r = b - a
    return r


def if_without_else_and_missing_var(a, b):
    if a > 0:
        c = a * 2
    if b > 0:
        return c  # UnboundLocalError when a <= 0 < b, as in Python
    return -1


def nested_ifs(a, b):
    x = 0
    if a > 0:
        if b > 0:
            x = 1
        else:
            x = 2
            if a > 5:
                x += 10
    else:
        x = 3 if b > 2 else 4
    return x


def while_else_break(a, b):
    i = 0
    total = 0
    while i < abs(a) % 13:
        i += 1
        if i == b:
            break
        if i % 3 == 0:
            continue
        total += i
    else:
        total = -total
    return i, total


def for_else_and_walrus(a, b):
    hits = []
    for k in range(abs(b) % 7):
        if (m := k * a) > 10:
            hits.append(m)
            break
    else:
        hits.append(None)
    return hits


def logic(a, b):
    p = a and b
    q = a or b
    r = not a
    s = (a > 1) and (b < 3) or (a == b)
    t = a if b else b
    u = 0 < a < 10 <= b
    return p, q, r, s, t, u


def short_circuit_side_effects(a, b):
    seen = []

    def mark(v):
        seen.append(v)
        return v

    mark(a) and mark(b)
    mark(a) or mark(b)
    return seen


def early_returns(a, b):
    if a < 0:
        return "negative"
    while b > 0:
        if b == a:
            return "found"
        b -= 1
    return "done"


def exceptions(a, b):
    try:
        v = a // b
    except ZeroDivisionError:
        v = None
    finally:
        a += 1
    if v is None:
        raise ValueError("b was zero")
    return v, a


def closures_and_nonlocal(a, b):
    count = 0

    def bump(step):
        nonlocal count
        count += step
        return count

    while count < abs(a) % 20:
        bump(abs(b) % 3 + 1)
    return count


def generator_sum(a, b):
    def gen(n):
        i = 0
        while i < n:
            if i % 2:
                yield i
            i += 1

    return sum(gen(abs(a) % 10)) + b


def uses_global(a, b):
    global COUNTER
    if a > b:
        COUNTER += 1
    return a + b


def recursion(a, b):
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)

    return fact(abs(a) % 8) - b


def default_args_evaluated_once(a, b, acc=[]):  # noqa: B006  (on purpose)
    if a > b:
        acc.append(a)
    return len(acc) >= 0


def comprehension_scopes(a, b):
    xs = [i * a for i in range(abs(b) % 5) if i or a]
    d = {i: (i and a) for i in range(3)}
    return xs, d


def augmented_and_unpacking(a, b):
    x, *rest = a, b, a + b
    if rest:
        x += rest[-1]
    (p, q) = (x, a) if x > a else (a, x)
    return p, q


def loop_var_after_loop(a, b):
    i = -1
    for i in range(abs(a) % 4):  # noqa: B007  (i is read after the loop)
        pass
    while i < b and i < 100:
        i += 7
    return i


def deleted_variable(a, b):
    x = a
    if b > 0:
        del x
    try:
        return x
    except UnboundLocalError:
        return "deleted"


def string_and_list_values(a, b):
    s = "pos" if a > 0 else ""
    items = [a] if b else []
    if s and items:
        return s * 2, items
    return s or "empty", items or None


class Base:
    def value(self, a):
        return a + 1


class Child(Base):
    def value(self, a):
        if a > 0:
            return super().value(a) * 2
        return super().value(a)


def zero_arg_super(a, b):
    return Child().value(a) + b


def nested_loops_break_continue(a, b):
    hits = []
    i = 0
    while i < abs(a) + 2:
        i += 1
        if i % 3 == 0:
            continue
        j = 0
        while j < abs(b) + 1:
            j += 1
            if j > i:
                break
            if (i + j) % 2:
                continue
            hits.append((i, j))
        else:
            hits.append("inner-done")
        if len(hits) > 6:
            break
    else:
        hits.append("outer-done")
    return hits, i


def for_loop_jumps_and_else(a, b):
    seen = []
    for k in range(abs(a) + 3):
        if k == b:
            break
        if k % 2 == 0:
            continue
        seen.append(k)
    else:
        seen.append("else")
    it = iter(range(10))
    for v in it:
        if v >= abs(b) % 5:
            break
    return seen, k, v, next(it, "exhausted")


def returns_in_loops_try_and_with(a, b):
    import contextlib

    log = []

    @contextlib.contextmanager
    def cm():
        log.append("enter")
        try:
            yield
        finally:
            log.append("exit")

    for i in range(abs(a) + 1):
        with cm():
            if i == b:
                return "with", i, log
    try:
        if a > b:
            return "try", a // (b or 1), log
    finally:
        log.append("finally")
    while a < 50:
        a += 7
        for j in range(3):
            if a + j == 30:
                return "nested", a, j, log
    return None


def return_in_finally_and_generator_like(a, b):
    def inner(x):
        try:
            if x > 0:
                raise ValueError("positive")
            return "body"
        finally:
            if x > 5:
                return "finally wins"  # noqa: B012 (swallows the exception, as Python does)

    def falls_off(x):
        if x > 0:
            return x

    try:
        first = inner(a)
    except ValueError as exc:
        first = str(exc)
    return first, falls_off(b)


PROGRAMS = [
    if_elif_else, if_without_else_and_missing_var, nested_ifs, while_else_break,
    for_else_and_walrus, logic, short_circuit_side_effects, early_returns, exceptions,
    closures_and_nonlocal, generator_sum, uses_global, recursion, default_args_evaluated_once,
    comprehension_scopes, augmented_and_unpacking, loop_var_after_loop, deleted_variable,
    string_and_list_values, zero_arg_super, nested_loops_break_continue,
    for_loop_jumps_and_else, returns_in_loops_try_and_with, return_in_finally_and_generator_like,
]  # fmt: skip
