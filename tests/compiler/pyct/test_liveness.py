"""liveness: LIVE_IN / LIVE_OUT / LOOP_LIVE_IN_* on every construct."""

from __future__ import annotations

import gast

from autostatic.pyct import analyze, anno

from .helpers import analyzed, at, get, parse


def live(src: str, line: int, key: str = anno.LIVE_OUT, kind: type | None = None) -> set:
    fn, _ = analyzed(src)
    return get(fn, line, key, kind)


def test_straight_line():
    src = """
    def f(a, unused):
        b = a + 1
        c = b * 2
        return c
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_IN) == {"a"}
    assert get(fn, 2, anno.LIVE_OUT) == {"b"}
    assert get(fn, 3, anno.LIVE_OUT) == {"c"}
    assert get(fn, 4, anno.LIVE_OUT) == set()


def test_if_else_live_out_is_after_the_whole_statement():
    src = """
    def f(a, b, c):
        if a:
            x = b
        else:
            x = c
            y = 1
        return x
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_IN) == {"a", "b", "c"}
    assert get(fn, 2, anno.LIVE_OUT) == {"x"}
    assert get(fn, 3, anno.LIVE_IN) == {"b"}
    assert get(fn, 6, anno.LIVE_OUT) == {"x"}


def test_if_without_else_keeps_the_old_value_live():
    src = """
    def f(a):
        x = 0
        if a:
            x = 1
        return x
    """
    assert live(src, 2) == {"a", "x"}


def test_while_loop():
    src = """
    def f(n):
        s = 0
        i = 0
        while i < n:
            t = s
            s = t + i
            i += 1
        return s
    """
    fn, _ = analyzed(src)
    loop = at(fn, 4)
    assert set(anno.get(loop, anno.LIVE_IN)) == {"i", "n", "s"}
    assert set(anno.get(loop, anno.LOOP_LIVE_IN_HEADER)) == {"i", "n", "s"}
    assert set(anno.get(loop, anno.LOOP_LIVE_IN_BODY)) == {"i", "n", "s"}
    assert set(anno.get(loop, anno.LIVE_OUT)) == {"s"}
    assert get(fn, 5, anno.LIVE_OUT) == {"i", "n", "t"}
    assert get(fn, 7, anno.LIVE_OUT) == {"i", "n", "s"}  # back to the test


def test_for_target_is_bound_by_each_step():
    src = """
    def f(xs):
        s = 0
        for x in xs:
            s += x
        return s
    """
    fn, _ = analyzed(src)
    loop = at(fn, 3)
    assert set(anno.get(loop, anno.LIVE_IN)) == {"xs", "s"}
    assert set(anno.get(loop, anno.LOOP_LIVE_IN_HEADER)) == {"s"}
    assert set(anno.get(loop, anno.LOOP_LIVE_IN_BODY)) == {"s", "x"}


def test_for_target_read_after_the_loop_may_be_the_old_value():
    src = """
    def f(xs):
        x = None
        for x in xs:
            pass
        return x
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_OUT) == {"xs", "x"}  # xs may be empty
    assert set(anno.get(at(fn, 3), anno.LOOP_LIVE_IN_HEADER)) == {"x"}


def test_break_continue_return():
    src = """
    def f(xs, k):
        for x in xs:
            if x == k:
                break
            if x:
                continue
            return x
        else:
            k = 0
        return k
    """
    fn, _ = analyzed(src)
    assert get(fn, 4, anno.LIVE_OUT) == {"k"}  # after the loop (the else is skipped)
    assert get(fn, 6, anno.LIVE_OUT) == {"k"}  # the next step
    assert get(fn, 7, anno.LIVE_OUT) == set()
    assert get(fn, 7, anno.LIVE_IN) == {"x"}
    assert get(fn, 2, anno.LIVE_OUT) == {"k"}


def test_handler_reads_keep_values_live_across_the_try_body():
    src = """
    def f(g):
        x = 1
        try:
            x = g()
            y = x
        except ValueError:
            return x
        return y
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_OUT) == {"g", "x"}  # g() may raise before x is rebound
    assert get(fn, 4, anno.LIVE_OUT) == {"x"}
    assert get(fn, 5, anno.LIVE_IN) == {"x"}
    assert get(fn, 5, anno.LIVE_OUT) == {"y"}  # the body is done: the handler is behind us


def test_finally_reads():
    src = """
    def f(g):
        r = 0
        try:
            return g()
        finally:
            print(r)
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_OUT) == {"g", "r"}
    assert get(fn, 4, anno.LIVE_OUT) == {"r"}  # the return goes through the finally


def test_except_as_name_is_dead_after_the_handler():
    src = """
    def f(g):
        try:
            g()
        except Exception as e:
            print(e)
        return 1
    """
    fn, _ = analyzed(src)
    handler = fn.body[0].handlers[0]
    assert set(anno.get(handler, anno.LIVE_IN)) == set()
    assert get(fn, 5, anno.LIVE_IN) == {"e"}
    assert set(anno.get(handler, anno.LIVE_OUT)) == set()


def test_del_reads_and_kills():
    src = """
    def f(a):
        x = a
        del x
        return 1
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_OUT) == {"x"}
    assert get(fn, 3, anno.LIVE_OUT) == set()


def test_attributes_count_and_die_with_their_base():
    src = """
    def f(self, other):
        a = self.w
        self = other
        return a + self.w
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_IN) == {"self", "self.w", "other"}
    assert get(fn, 2, anno.LIVE_OUT) == {"a", "other"}
    assert get(fn, 3, anno.LIVE_OUT) == {"a", "self", "self.w"}


def test_modified_attributes_are_live_everywhere():
    src = """
    def f(self, x):
        self.count = x
        return None
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_OUT) == {"self.count"}
    assert get(fn, 3, anno.LIVE_OUT) == {"self.count"}


def test_closure_variables_are_live_everywhere():
    src = """
    def f(x):
        def g():
            return x
        x = 2
        h = lambda: y
        y = 3
        return g
    """
    fn, info = analyzed(src)
    assert info.cell_vars == {"x", "y"}
    assert get(fn, 4, anno.LIVE_OUT) >= {"x", "y"}
    assert get(fn, 7, anno.LIVE_OUT) == {"x", "y"}


def test_generator_expressions_capture_lazily():
    src = """
    def f(xs, k):
        gen = (x + k for x in xs)
        k = 5
        return gen
    """
    fn, info = analyzed(src)
    assert info.cell_vars == {"k"}
    assert "k" in get(fn, 3, anno.LIVE_OUT)


def test_list_comprehension_variables_stay_inside():
    src = """
    def f(xs, x):
        ys = [x for x in xs]
        return ys, x
    """
    fn, info = analyzed(src)
    assert get(fn, 2, anno.LIVE_IN) == {"xs", "x"}
    assert info.cell_vars == frozenset()


def test_globals_and_nonlocals_are_live_everywhere():
    src = """
    def f():
        global G
        G = 1
        G = 2
        return None
    """
    fn, _ = analyzed(src)
    assert get(fn, 3, anno.LIVE_OUT) == {"G"}
    assert get(fn, 5, anno.LIVE_OUT) == {"G"}


def test_globals_and_builtins_are_not_tracked():
    fn, _ = analyzed("def f(x):\n    y = len(x)\n    return print(y)\n")
    assert get(fn, 2, anno.LIVE_IN) == {"x"}


def test_walrus_in_test():
    src = """
    def f(g):
        if (n := g()) > 0:
            return n
        return 0
    """
    fn, _ = analyzed(src)
    assert get(fn, 2, anno.LIVE_IN) == {"g"}
    assert get(fn, 3, anno.LIVE_IN) == {"n"}


def test_conditional_walrus_does_not_kill():
    src = """
    def f(a):
        x = 1
        if a and (x := 2):
            pass
        return x
    """
    assert live(src, 2) == {"a", "x"}


def test_match_captures_kill():
    src = """
    def f(p, x):
        match p:
            case [x]:
                return x
            case _:
                return x
    """
    fn, _ = analyzed(src)
    match = at(fn, 2)
    assert set(anno.get(match, anno.LIVE_IN)) == {"p", "x"}
    case = match.cases[0]
    assert set(anno.get(case, anno.LIVE_IN)) == {"x"}  # the pattern may fail: x still live
    assert get(fn, 4, anno.LIVE_IN) == {"x"}


def test_with_as():
    src = """
    def f(p):
        with open(p) as fh:
            data = fh.read()
        return data
    """
    fn, _ = analyzed(src)
    # __exit__ may swallow an exception raised before `data` is bound: the old `data` is read
    assert get(fn, 2, anno.LIVE_IN) == {"p", "data"}
    assert get(fn, 2, anno.LIVE_OUT) == {"data"}
    assert get(fn, 3, anno.LIVE_IN) == {"fh", "fh.read", "data"}


def test_nested_def_reads_at_definition():
    src = """
    def f(a, d):
        def g(x=d):
            return x
        return g
    """
    fn, info = analyzed(src)
    assert get(fn, 2, anno.LIVE_IN) == {"d"}
    assert info.cell_vars == frozenset()


def test_unreachable_code_after_return():
    src = """
    def f(a):
        return a
        b = a
    """
    fn, _ = analyzed(src)
    assert get(fn, 3, anno.LIVE_IN) == {"a"}
    assert get(fn, 2, anno.LIVE_OUT) == set()


def test_loop_body_annotations_on_while_else():
    src = """
    def f(n, m):
        while n:
            n -= 1
        else:
            m += 1
        return m
    """
    fn, _ = analyzed(src)
    loop = at(fn, 2, gast.While)
    assert set(anno.get(loop, anno.LOOP_LIVE_IN_BODY)) == {"n", "m"}
    assert get(fn, 5, anno.LIVE_OUT) == {"m"}


def test_with_that_cannot_suppress():
    src = """
    def f(p):
        with open(p) as fh:
            data = fh.read()
        return data
    """
    fn = parse(src)
    analyze(fn, with_suppress=False)
    assert get(fn, 2, anno.LIVE_IN) == {"p"}
    assert get(fn, 3, anno.LIVE_IN) == {"fh", "fh.read"}


def test_finally_statement_on_the_exception_path_is_followed_by_the_re_raise():
    src = """
    def f(g):
        a = 1
        try:
            try:
                g()
            finally:
                del a
        except Exception:
            return a
        return 0
    """
    fn, _ = analyzed(src)
    # the raising copy of `del a` re-raises into the handler, which reads `a`
    assert get(fn, 7, anno.LIVE_OUT) == {"a"}
