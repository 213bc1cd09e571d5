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


def _count(value):
    global COUNTER
    COUNTER += 1
    return value


def chained_comparisons(a, b):
    r1 = a < _count(b) < 10  # the middle operand is evaluated once
    r2 = 0 <= a < b <= _count(20)  # later links only when earlier ones hold
    r3 = a == b == _count(a) != 3
    r4 = [x for x in range(4) if 0 < x < a]
    r5 = a < b > _count(0) is not None
    r6 = (a > 0) < (b > 0) < _count(2)
    return r1, r2, r3, r4, r5, r6


def builtins_on_python_values(a, b):
    items = list(range(abs(a) % 5))
    n = len(items) + len(str(b)) + len({a: b})
    f = float(a) / (b or 1) + float("1.5")
    i = int(f) + int("12") + int(str(abs(b)), 8 if abs(b) < 8 else 10) + int()  # noqa: UP018
    t = bool(a) + bool(items) + bool()  # noqa: UP018
    k = isinstance(a, int) + isinstance(f, (str, float)) + isinstance(b, int | None)
    if a > 15:
        return len(a)  # TypeError, as in Python
    if b < -15:
        return int("x")  # ValueError
    return n, f, i, t, k


def asserts(a, b):
    assert a > -15, f"a={a} is too small"
    assert -15 < b < 15
    assert a != b or a == 0, (a, b)
    return a + b


class _Shaped:
    def __init__(self, a):
        self.shape = (a, 2)


def shape_attribute(a, b):
    s = _Shaped(a)
    s.shape = (s.shape[0] + b,) + s.shape[1:]  # a store stays a store
    if a > 15:
        return a.shape  # AttributeError, as in Python
    return s.shape, len(s.shape)


def printing(a, b):
    import io

    buf = io.StringIO()
    print(a, b, sep="-", end="!\n", file=buf, flush=True)
    print("x", None, [a], file=buf)
    print(*range(abs(a) % 3), file=buf, sep=None, end=None)
    if b > 15:
        print(a, file=buf, bad=1)  # TypeError, as in Python
    return buf.getvalue()


def shadowed_builtins(a, b):
    def len(x):  # noqa: A001  (on purpose: a local shadows the builtin)
        return 42

    print = lambda *args: sum(args)  # noqa: A001, E731
    return len([a]), print(a, b)


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


def returns_in_finally_blocks(a, b):  # noqa: C901 - one case per kind of exit
    def overrides(x):
        try:
            if x > 2:
                return "try"
            if x < -2:
                raise KeyError(x)
        finally:
            if x % 2:
                return "finally"  # noqa: B012 (replaces the return, swallows the raise)
        return "after"

    def in_loop(x):
        log = []
        for k in range(3):
            try:
                if k == x % 3:
                    raise ValueError(k)
                log.append(k)
            finally:
                if k == 1 and x > 0:
                    return log, "left at", k  # noqa: B012
        return log, "done"

    def nested(x):
        try:
            try:
                return x // (x % 3)  # ZeroDivisionError on multiples of 3
            finally:
                if x < 0:
                    return "inner"  # noqa: B012
        finally:
            if x > 5:
                return "outer"  # noqa: B012

    out = []
    for f in (overrides, in_loop, nested):
        try:
            out.append(f(a))
        except Exception as exc:  # noqa: BLE001 - the same exception must escape
            out.append(type(exc).__name__)
    return out, overrides(b) if b > -3 else None


def closure_sees_branch_update(a, b):
    y = 0
    get = lambda: y  # noqa: E731  (a closure over y, which the branch rebinds)
    if a > b:
        y = a
    return get()


def exception_after_branch_assignment(a, b):
    y = 0
    try:
        if a > b:
            y = a
            if a > 2 * b:
                raise ValueError(y)
    except ValueError:
        pass
    return y


# ---- for loops ---------------------------------------------------------------------------


def for_range_forms(a, b):
    step = b % 5 - 2 or 3  # negative, positive; never 0
    seen = []
    for i in range(a % 9):
        seen.append(i)
    for j in range(b, a, step):
        seen.append(j)
    for k in range(a, b):
        if k > a + 4:
            break
    return seen, j, k  # UnboundLocalError when a range is empty, as in Python


def for_range_errors(a, b):
    total = 0
    for i in range(a, b, a % 3):  # ValueError when the step is 0
        total += i
    for j in range(a / 2 if b > 0 else a):  # TypeError for a float
        total += j
    return total


def for_enumerate_zip_targets(a, b):
    xs = [a, b, a + b, a - b]
    ys = "wxyz"[: abs(b) % 5]
    out = []
    for i, (x, y) in enumerate(zip(xs, ys), start=a % 4):
        out.append((i, x, y))
    for n, *rest in [(a, b, 1), (b, a)]:
        out.append((n, rest))
    for pair in zip(xs, range(abs(a) % 6), strict=False):
        out.append(pair)
    return out


def for_else_break_continue(a, b):
    found = None
    for i in range(abs(a) % 12):
        if i % 3 == 1:
            continue
        if i == abs(b) % 7:
            found = i
            break
    else:
        found = "none"
    for _j in []:
        pass
    else:
        found = (found, "empty-else")
    return found, i  # i unbound when the first loop does not run


def _counted(items):
    global COUNTER
    COUNTER += 1
    return items


def for_iterable_once_generators_dicts(a, b):
    total = 0
    for v in _counted(x * a for x in range(abs(b) % 5)):  # a generator, evaluated once
        total += v
    d = {"p": a, "q": b}
    for key in d:
        total += d[key]
    for key, value in d.items():
        total += len(key) * value
    for ch in "ab" * (abs(a) % 3):
        total += ord(ch)
    it = iter([a, b, a * b])
    for first in it:  # the loop and the body share one iterator
        total += next(it, 0) - first
    return total, key, value


def for_mutating_list_and_targets(a, b):
    items = [a, b]
    for x in items:  # the list grows while it is iterated
        if len(items) < 6:
            items.append(x + 1)
    box = {}
    holder = type("Holder", (), {})()
    for box["k"] in range(abs(a) % 3 + 1):
        pass
    for holder.attr in (b, a):
        pass
    return items, box, holder.attr


def for_shadowed_builtins(a, b):
    def range(n):  # a local named range: not the builtin
        return [n, n]

    out = [i for i in range(a)]
    for i in range(b):
        out.append(i)

    def enumerate(xs, start=0):
        return [(start, x) for x in xs][:1]

    for i, x in enumerate([a, b], start=5):
        out.append((i, x))
    return out


def for_closure_shadowed_zip(a, b):
    zip = lambda *xs: [xs]  # noqa: E731  (a local the nested function reads)

    def inner():
        out = []
        for pair in zip(a, b):
            out.append(pair)
        return out

    return inner()


def for_nested_loops_and_yield(a, b):
    def pairs(n):
        for i in range(n):
            for j in range(i):
                if (i + j) % 3 == 0:
                    continue
                yield i, j

    total = 0
    for i, j in pairs(abs(a) % 7):
        total += i * j - b
    return total, list(pairs(abs(b) % 4))


def for_break_in_generators(a, b):
    def until(items, stop):
        for k, item in enumerate(items):
            if item == stop:
                break
            if item < 0:
                return
            yield k, item
        else:
            yield "done", stop

    return list(until(range(a, a + 6), b)), list(until([b, -1, a], a))


def assignment_branches(a, b):
    log = []
    if a > b:  # both branches only assign: evaluated as one tuple, the taken one only
        y = log.append("then") or a - b
    else:
        y = log.append("else") or b - a
    w = a
    if a % 3 == 0:  # the second value reads the first: not one tuple
        w = a + 1
        w = w * 2
    hit = miss = 0
    try:
        if b % 4 == 1:  # inside try: the first variable is set when the second raises
            hit = 1
            miss = 1 // (b - b)
    except ZeroDivisionError:
        pass
    return y, w, hit, miss, log


def for_exception_in_body(a, b):
    results = []
    for i in range(abs(a) % 6):
        try:
            results.append(b // (i - 2))
        except ZeroDivisionError:
            results.append("div0")
        finally:
            results.append(i)
    for i in range(3):
        if i == abs(b) % 5:
            raise KeyError(i)
    return results


def list_append_pop_in_loops(a, b):
    xs = []
    for i in range(abs(a) % 6):  # the lists a symbolic loop would carry as tensor arrays
        xs.append(i * b)
        if i % 2:
            xs.append(-i)
    popped = []
    while len(xs) > 2:
        popped.append(xs.pop())
        if popped[-1] == b:
            popped.append(xs.pop(0))
    ys = [a]
    n = 0
    while n < abs(b) % 4:
        ys.append(ys[-1] + n)
        n += 1
    else:
        ys.pop(0)
    return xs, popped, ys


def list_append_errors(a, b):
    xs = []
    i = 0
    while i < abs(a) % 5:
        xs.append(i)
        i += 1
    return xs.pop() + xs.pop(b % 3)  # IndexError when the list runs short


def docstring_and_early_return(a, b):
    """A docstring: the lowering passes insert their flags before it (toolz's
    instanceproperty lost them)."""
    if a > b:
        return a
    return b - 1


def values_read_through_locals(a, b):
    """Variables read only through ``locals()`` (parse's extract_format) stay outputs of the
    branches that set them (generated names aside)."""
    align = None
    if a > b:
        align = "<"
    elif b > 3:
        grouping = ","  # noqa: F841
    seen = locals()
    return sorted((k, v) for k, v in seen.items() if not k.startswith("__"))


def return_value_that_raises(a, b):
    """A ``return`` whose value raises (and is caught) has not returned (cachetools' cached
    method: ``try: return cache[key] except KeyError: ...``)."""
    cache = {a: b} if a > 0 else {}
    try:
        return cache[b]
    except KeyError:
        pass
    return -1


class _Box:
    def __init__(self, value):
        self.value = value


def branch_input_copies_are_released(a, b):
    """The copy of a maybe-unbound branch input does not keep the old value alive
    (more_itertools.extract checks values die once emitted)."""
    import weakref

    gone, refs = [], []
    for i in range(abs(a) % 4 + 2):
        if i % 2 == 0 or b > 0:
            value = _Box(i)
        if refs:
            gone.append(refs[-1]() is None)
        refs.append(weakref.ref(value))
    return gone


def returns_in_inner_loops_body_and_else(a, b):
    """An inner loop returning from its body (it leaves only the inner loop) and from its
    else (which leaves the outer loop too): after it, the rest is skipped either way."""
    total = 0
    for x in range(abs(a) % 5):
        w = 0
        while w < 3:
            w += 1
            if w + x == b:
                return ("body", x, w, total)
        else:
            if x == a % 3:
                return ("else", x, total)
        total += w + x
    return ("end", total)


def _read_counter():
    return COUNTER


def assignments_seen_by_calls(a, b):
    """A branch that sets a closure's cell and then calls code reading it: the call sees
    the new value (a one-line form of the branch would evaluate it first)."""
    total = 1

    def bump():
        nonlocal total
        total += 1
        return total

    if a > b:
        total = total + 10
        seen = bump()
    else:
        seen = total
    return total, seen


def global_seen_by_calls(a, b):
    """The same for a ``global``: the function called after the assignment reads it."""
    global COUNTER
    if a > b:
        COUNTER = COUNTER + 7
        counted = _read_counter()
    else:
        counted = -1
    return counted


def breaks_before_the_rest(a, b):
    """``if c: A; break`` then more statements: the rest is the ``if``'s ``else``."""
    seen = []
    i = 0
    while i < abs(a) + 3:
        i += 1
        if i == abs(b) % 5:
            seen.append(("stop", i))
            break
        elif i % 4 == 0:
            seen.append("four")
        if i > 6:
            break
        seen.append(i)
    else:
        seen.append("no break")
    for j in range(abs(b) % 6):
        if j * a > 8:
            if j % 2:
                seen.append(("odd", j))
                break
            seen.append(("even", j))
            continue
        seen.append(j)
    else:
        seen.append("for done")
    return seen, i


def loop_target_deleted_on_some_paths(a, b):
    """A ``for`` target that may be unbound before the loop and is read after it."""
    k = -1
    if a > 0:
        del k
    for k in range(abs(b) % 4):
        if k == a:
            break
    try:
        return k
    except UnboundLocalError as exc:
        return str(exc)


PROGRAMS = [
    if_elif_else, if_without_else_and_missing_var, nested_ifs, while_else_break,
    for_else_and_walrus, logic, short_circuit_side_effects, early_returns, exceptions,
    closures_and_nonlocal, generator_sum, for_break_in_generators, assignment_branches,
    uses_global, recursion,
    default_args_evaluated_once,
    comprehension_scopes, augmented_and_unpacking, loop_var_after_loop, deleted_variable,
    string_and_list_values, zero_arg_super, nested_loops_break_continue,
    for_loop_jumps_and_else, returns_in_loops_try_and_with, return_in_finally_and_generator_like,
    returns_in_finally_blocks,
    closure_sees_branch_update, exception_after_branch_assignment,
    chained_comparisons, builtins_on_python_values, asserts, shape_attribute, printing,
    shadowed_builtins, for_range_forms, for_range_errors,
    for_enumerate_zip_targets, for_else_break_continue, for_iterable_once_generators_dicts,
    for_mutating_list_and_targets, for_shadowed_builtins, for_closure_shadowed_zip,
    for_nested_loops_and_yield, for_exception_in_body, list_append_pop_in_loops,
    list_append_errors,
    docstring_and_early_return, values_read_through_locals, return_value_that_raises,
    branch_input_copies_are_released, assignments_seen_by_calls,
    global_seen_by_calls, returns_in_inner_loops_body_and_else, breaks_before_the_rest,
    loop_target_deleted_on_some_paths,
]  # fmt: skip
