"""reaching_defs: DEFINED_* / MAYBE_DEFINED_* on every construct."""

from __future__ import annotations

import gast

from autostatic.pyct import analyze, anno

from .helpers import analyzed, at, get, parse


def defs(fn: gast.AST, line: int, out: bool = False) -> tuple[set, set]:
    keys = (
        (anno.DEFINED_OUT, anno.MAYBE_DEFINED_OUT)
        if out
        else (anno.DEFINED_IN, anno.MAYBE_DEFINED_IN)
    )
    return get(fn, line, keys[0]), get(fn, line, keys[1])


def test_params_are_defined_at_entry():
    fn, _ = analyzed("def f(a, *b, c=1, **d):\n    return a\n")
    assert defs(fn, 2) == ({"a", "b", "c", "d"},) * 2


def test_if_assigned_in_one_branch_is_maybe():
    src = """
    def f(a):
        if a:
            x = 1
            y = 1
        else:
            y = 2
        return x, y
    """
    fn, _ = analyzed(src)
    assert defs(fn, 7) == ({"a", "y"}, {"a", "x", "y"})
    assert defs(fn, 2, out=True) == ({"a", "y"}, {"a", "x", "y"})
    assert defs(fn, 4, out=True) == ({"a", "x", "y"},) * 2  # end of the true branch
    assert defs(fn, 6, out=True) == ({"a", "y"},) * 2  # end of the false branch


def test_branch_that_returns_does_not_count():
    src = """
    def f(a):
        if a:
            x = 1
        else:
            return None
        return x
    """
    fn, _ = analyzed(src)
    assert defs(fn, 6)[0] == {"a", "x"}


def test_while_body_may_not_run():
    src = """
    def f(n):
        while n:
            x = n
            n -= 1
        return x
    """
    fn, _ = analyzed(src)
    assert defs(fn, 5) == ({"n"}, {"n", "x"})
    loop = at(fn, 2)
    assert set(anno.get(loop, anno.LOOP_DEFINED_IN_HEADER)) == {"n"}
    assert set(anno.get(loop, anno.LOOP_MAYBE_DEFINED_IN_HEADER)) == {"n", "x"}
    assert defs(fn, 3) == ({"n"}, {"n", "x"})  # the body's start: x from the last iteration


def test_while_true_with_break():
    src = """
    def f(g):
        while True:
            x = g()
            if x:
                break
        return x
    """
    fn, _ = analyzed(src)
    assert defs(fn, 6)[0] == {"g", "x"}


def test_for_target_and_else():
    src = """
    def f(xs):
        for x in xs:
            y = x
            if y:
                z = 1
                break
        else:
            z = 2
        return x, z
    """
    fn, _ = analyzed(src)
    assert defs(fn, 3)[0] == {"xs", "x"}
    assert defs(fn, 9) == ({"xs", "z"}, {"xs", "x", "y", "z"})


def test_del_undefines():
    src = """
    def f(a):
        x = a
        del x
        return a
    """
    fn, _ = analyzed(src)
    assert defs(fn, 4) == ({"a"}, {"a"})
    assert defs(fn, 3) == ({"a", "x"},) * 2


def test_try_except():
    src = """
    def f(g):
        try:
            x = g()
            y = 1
        except ValueError as e:
            y = 2
            print(e)
        return x, y, e
    """
    fn, _ = analyzed(src)
    handler = at(fn, 2).handlers[0]
    assert set(anno.get(handler, anno.DEFINED_IN)) == {"g"}
    assert set(anno.get(handler, anno.MAYBE_DEFINED_IN)) == {"g", "x", "y"}
    assert defs(fn, 6)[0] == {"g", "e"}
    assert defs(fn, 8) == ({"g", "y"}, {"g", "x", "y"})  # e is deleted after the handler


def test_try_finally_paths():
    src = """
    def f(g):
        try:
            x = g()
        except ValueError:
            x = None
        finally:
            done = True
        return x, done
    """
    fn, _ = analyzed(src)
    assert defs(fn, 7) == ({"g"}, {"g", "x"})  # the finally also runs on the way out
    assert defs(fn, 8)[0] == {"g", "x", "done"}  # only normal completion gets here
    assert defs(fn, 2, out=True)[0] == {"g", "x", "done"}


def test_with_may_suppress():
    src = """
    def f(p):
        with open(p) as fh:
            data = fh.read()
        return data
    """
    fn, _ = analyzed(src)
    assert defs(fn, 4) == ({"p", "fh"}, {"p", "fh", "data"})  # __exit__ may swallow
    fn = parse(src)
    analyze(fn, with_suppress=False)
    assert defs(fn, 4)[0] == {"p", "fh", "data"}


def test_walrus():
    src = """
    def f(a, g):
        if (n := g()) and (m := g()):
            return n + m
        return n
    """
    fn, _ = analyzed(src)
    assert defs(fn, 3) == ({"a", "g", "n"}, {"a", "g", "n", "m"})
    assert defs(fn, 4) == ({"a", "g", "n"}, {"a", "g", "n", "m"})


def test_comprehension_walrus_binds_outside():
    fn, _ = analyzed("def f(xs):\n    ys = [(last := x) for x in xs]\n    return last\n")
    assert defs(fn, 3) == ({"xs", "ys"}, {"xs", "ys", "last"})


def test_attribute_definitions_die_with_their_base():
    src = """
    def f(self, other):
        self.x = 1
        a = 0
        self = other
        return a
    """
    fn, _ = analyzed(src)
    assert "self.x" in defs(fn, 3)[0]
    assert "self.x" not in defs(fn, 5)[1]


def test_match():
    src = """
    def f(p):
        match p:
            case [x, y] if x > 0:
                z = y
            case {"k": x}:
                z = x
        return z
    """
    fn, _ = analyzed(src)
    match = at(fn, 2)
    assert set(anno.get(match.cases[1], anno.MAYBE_DEFINED_IN)) == {"p", "x", "y"}
    assert set(anno.get(match.cases[1], anno.DEFINED_IN)) == {"p"}
    assert defs(fn, 4)[0] == {"p", "x", "y"}
    assert defs(fn, 7) == ({"p"}, {"p", "x", "y", "z"})


def test_unreachable_statement_is_vacuously_defined():
    src = """
    def f(a):
        return a
        b = 1
        c = b
    """
    fn, _ = analyzed(src)
    assert defs(fn, 4) == ({"a", "b", "c"}, set())


def test_nested_def_and_import_and_class_define_names():
    src = """
    def f():
        import os.path as osp, sys
        def g():
            pass
        class C:
            pass
        return osp, sys, g, C
    """
    fn, _ = analyzed(src)
    assert defs(fn, 7)[0] == {"osp", "sys", "g", "C"}


def test_loop_header_sets_include_back_edges():
    src = """
    def f(xs):
        y = 0
        for x in xs:
            del y
            y = x
        return y
    """
    fn, _ = analyzed(src)
    loop = at(fn, 3)
    assert set(anno.get(loop, anno.LOOP_DEFINED_IN_HEADER)) == {"xs", "y"}
    assert defs(fn, 3)[0] == {"xs", "y"}
