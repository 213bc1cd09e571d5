"""activity: read / modified / deleted / bound sets per statement, and FunctionInfo."""

from __future__ import annotations

import gast
import pytest

from autostatic.pyct import activity, anno

from .helpers import analyzed, at, parse


def scope(src: str, key: str = anno.SCOPE) -> activity.Scope:
    """The Scope of the first statement of the function in ``src``."""
    fn = parse(src)
    activity.analyze(fn)
    return anno.get(fn.body[0], key)


def sets(sc: activity.Scope) -> tuple[set, set, set]:
    return set(sc.read), set(sc.modified), set(sc.deleted)


@pytest.mark.parametrize(
    "stmt, read, modified",
    [
        ("x = y + 1", {"y"}, {"x"}),
        ("x += y", {"x", "y"}, {"x"}),
        ("a, (b, *c) = d", {"d"}, {"a", "b", "c"}),
        ("[a, b] = c", {"c"}, {"a", "b"}),
        ("x = y = z", {"z"}, {"x", "y"}),
        ("self.w = v", {"self", "v"}, {"self.w"}),
        ("self.w += v", {"self", "self.w", "v"}, {"self.w"}),
        ("a.b.c = 1", {"a", "a.b"}, {"a.b.c"}),
        ("a[i] = v", {"a", "i", "v"}, {"a"}),
        ("a[i] += v", {"a", "i", "v"}, {"a"}),
        ("self.buf[i] = v", {"self", "self.buf", "i", "v"}, {"self.buf"}),
        ("a[i].x = v", {"a", "i", "v"}, {"a"}),
        ("f(a).x = v", {"f", "a", "v"}, set()),
        ("x: int = y", {"y"}, {"x"}),
        ("x: T", set(), set()),
        ("self.n: int = 0", {"self"}, {"self.n"}),
        ("print(x.y.z)", {"print", "x", "x.y", "x.y.z"}, set()),
        ("f(*args, k=v, **kw)", {"f", "args", "v", "kw"}, set()),
        ("y = f'{a!r:{b}}'", {"a", "b"}, {"y"}),
        ("assert x > 0, msg", {"x", "msg"}, set()),
        ("return x", {"x"}, set()),
        ("raise E(x) from c", {"E", "x", "c"}, set()),
        ("import os.path", set(), {"os"}),
        ("import numpy as np", set(), {"np"}),
        ("from a.b import c, d as e", set(), {"c", "e"}),
        ("y = (yield x)", {"x"}, {"y"}),
        ("y = a if c else b", {"a", "b", "c"}, {"y"}),
        ("y = a[1:n:2]", {"a", "n"}, {"y"}),
        ("y = {k: v for k, v in d.items()}", {"d", "d.items"}, {"y"}),
        ("y = [x for x in x]", {"x"}, {"y"}),
        ("y = [i * j for i in a for j in range(i) if j > t]", {"a", "range", "t"}, {"y"}),
        ("y = (z for q in a if (w := q))", {"a", "z"}, {"y", "w"}),
        ("y = [(w := q) for q in a]", {"a"}, {"y", "w"}),
        ("y = lambda p, k=d: p + k + e", {"d", "e"}, {"y"}),
        ("y = lambda: (z := 1) + z", set(), {"y"}),
        ("if (n := len(a)) > 3: pass", {"len", "a"}, {"n"}),
        ("pass", set(), set()),
    ],
)
def test_simple_statements(stmt, read, modified):
    sc = scope(f"def f():\n    {stmt}\n")
    assert set(sc.read) == read
    assert set(sc.modified) == modified


def test_bound_is_the_plain_names_only():
    sc = scope("def f():\n    a, self.x, b[0] = v\n")
    assert set(sc.bound) == {"a"}
    assert set(sc.modified) == {"a", "self.x", "b"}


@pytest.mark.parametrize(
    "stmt, read, deleted, modified",
    [
        ("del x", {"x"}, {"x"}, set()),
        ("del x, y", {"x", "y"}, {"x", "y"}, set()),
        ("del self.x", {"self", "self.x"}, {"self.x"}, set()),
        ("del a[i]", {"a", "i"}, set(), {"a"}),
    ],
)
def test_del(stmt, read, deleted, modified):
    sc = scope(f"def f():\n    {stmt}\n")
    assert sets(sc) == (read, modified, deleted)


@pytest.mark.parametrize(
    "expr",
    ["a and (w := b)", "a or (w := b)", "(w := b) if a else c", "[(w := q) for q in a]"],
)
def test_walrus_that_may_not_run_is_conditional(expr):
    sc = scope(f"def f():\n    y = {expr}\n")
    assert "w" in sc.bound and "w" in sc.conditional and "y" not in sc.conditional


def test_walrus_that_always_runs_is_not_conditional():
    sc = scope("def f():\n    y = (w := b) and a\n")
    assert "w" in sc.bound and not sc.conditional


def test_assert_binds_conditionally():  # stripped under -O
    sc = scope("def f():\n    assert (w := b)\n")
    assert sc.conditional == {"w"}


def test_if_parts():
    src = """
    def f(a):
        if (t := a.x) > 0:
            b = t
        else:
            c = a
    """
    fn = parse(src)
    activity.analyze(fn)
    node = at(fn, 2)
    assert sets(anno.get(node, anno.TEST_SCOPE)) == ({"a", "a.x"}, {"t"}, set())
    assert sets(anno.get(node, anno.BODY_SCOPE)) == ({"t"}, {"b"}, set())
    assert sets(anno.get(node, anno.ORELSE_SCOPE)) == ({"a"}, {"c"}, set())
    assert sets(anno.get(node, anno.SCOPE)) == ({"a", "a.x", "t"}, {"t", "b", "c"}, set())


def test_if_without_else_has_an_empty_orelse_scope():
    src = "def f(a):\n    if a:\n        b = 1\n"
    assert anno.get(at(_done(src), 2), anno.ORELSE_SCOPE) == activity.EMPTY_SCOPE


def _done(src: str) -> gast.AST:
    fn = parse(src)
    activity.analyze(fn)
    return fn


def test_while_parts():
    fn = _done("def f(n):\n    while (k := n) > 0:\n        n -= 1\n    else:\n        z = 0\n")
    node = at(fn, 2)
    assert sets(anno.get(node, anno.TEST_SCOPE)) == ({"n"}, {"k"}, set())
    assert sets(anno.get(node, anno.BODY_SCOPE)) == ({"n"}, {"n"}, set())
    assert sets(anno.get(node, anno.ORELSE_SCOPE)) == (set(), {"z"}, set())


def test_for_parts():
    src = """
    def f(xs):
        for i, (a, self.b) in enumerate(xs):
            s = i + a
        else:
            t = 1
    """
    node = at(_done(src), 2)
    assert sets(anno.get(node, anno.ITER_SCOPE)) == ({"enumerate", "xs"}, set(), set())
    assert sets(anno.get(node, anno.TARGET_SCOPE)) == ({"self"}, {"i", "a", "self.b"}, set())
    assert set(anno.get(node, anno.TARGET_SCOPE).bound) == {"i", "a"}
    assert sets(anno.get(node, anno.BODY_SCOPE)) == ({"i", "a"}, {"s"}, set())
    assert sets(anno.get(node, anno.ORELSE_SCOPE)) == (set(), {"t"}, set())


def test_with_parts():
    src = """
    def f(p):
        with open(p) as fh, lock:
            data = fh.read()
    """
    node = at(_done(src), 2)
    assert sets(anno.get(node, anno.ITEMS_SCOPE)) == ({"open", "p", "lock"}, {"fh"}, set())
    assert sets(anno.get(node, anno.BODY_SCOPE)) == ({"fh", "fh.read"}, {"data"}, set())


def test_try_parts_and_handler_name_is_deleted():
    src = """
    def f(x):
        try:
            y = g(x)
        except (KeyError, E) as e:
            y = e
        else:
            z = y
        finally:
            w = 1
    """
    fn = _done(src)
    node = at(fn, 2)
    handler = node.handlers[0]
    assert sets(anno.get(node, anno.BODY_SCOPE)) == ({"g", "x"}, {"y"}, set())
    assert sets(anno.get(handler, anno.PATTERN_SCOPE)) == ({"KeyError", "E"}, {"e"}, set())
    assert sets(anno.get(handler, anno.SCOPE)) == ({"KeyError", "E", "e"}, {"e", "y"}, {"e"})
    assert sets(anno.get(node, anno.HANDLERS_SCOPE)) == sets(anno.get(handler, anno.SCOPE))
    assert sets(anno.get(node, anno.ORELSE_SCOPE)) == ({"y"}, {"z"}, set())
    assert sets(anno.get(node, anno.FINALLY_SCOPE)) == (set(), {"w"}, set())
    assert "e" in anno.get(node, anno.SCOPE).deleted


def test_match_capture_patterns_bind():
    src = """
    def f(p):
        match p:
            case {"k": 1, **rest}:
                a = rest
            case [1, *others] | (2 as others):
                a = others
            case Point(x=0, y=yy) if yy > lim:
                a = yy
            case Color.RED:
                a = 0
            case _:
                a = None
    """
    fn = _done(src)
    node = at(fn, 2)
    assert sets(anno.get(node, anno.SUBJECT_SCOPE)) == ({"p"}, set(), set())
    cases = node.cases
    assert set(anno.get(cases[0], anno.PATTERN_SCOPE).bound) == {"rest"}
    assert set(anno.get(cases[1], anno.PATTERN_SCOPE).bound) == {"others"}
    c2 = anno.get(cases[2], anno.PATTERN_SCOPE)
    assert set(c2.bound) == {"yy"} and set(c2.read) == {"Point", "yy", "lim"}
    assert set(anno.get(cases[3], anno.PATTERN_SCOPE).read) == {"Color", "Color.RED"}
    assert anno.get(cases[4], anno.PATTERN_SCOPE) == activity.EMPTY_SCOPE
    assert set(anno.get(node, anno.SCOPE).modified) == {"rest", "others", "yy", "a"}


def test_nested_def_reads_free_variables_at_definition():
    src = """
    def f(a, b):
        @deco(c)
        def g(x, y=d, *, z: T = e) -> R:
            w = x + a
            return w + b.attr + glob
    """
    sc = anno.get(_done(src).body[0], anno.SCOPE)
    assert set(sc.read) == {"deco", "c", "d", "e", "T", "R", "a", "b", "b.attr", "glob"}
    assert set(sc.modified) == set(sc.bound) == {"g"}


def test_nested_def_body_is_annotated_but_locals_stay_inside():
    fn = _done("def f():\n    def g(x):\n        y = x\n        return y\n")
    g = fn.body[0]
    assert set(anno.get(g.body[0], anno.SCOPE).modified) == {"y"}
    assert anno.get(fn.body[0], anno.SCOPE).read == frozenset()


def test_nested_global_and_nonlocal():
    src = """
    def f():
        def g():
            global G
            nonlocal n
            G = n = q = 1
            return q
    """
    sc = anno.get(at(_done(src), 2), anno.SCOPE)
    assert set(sc.read) == {"n"}  # nonlocal: a free variable; G is the module's; q is g's


def test_nested_class():
    src = """
    def f(base, k):
        class C(base, metaclass=M):
            x = k
            y = x
            def m(self):
                return x + k2
    """
    fn = _done(src)
    sc = anno.get(fn.body[0], anno.SCOPE)
    # `x` read in the body after the class binds it is the class's; the method's `x` is outer
    assert set(sc.read) == {"base", "M", "k", "x", "k2"}
    assert set(sc.modified) == {"C"}


def test_lambda_free_variables():
    sc = scope("def f():\n    g = lambda x, *a, **kw: x + y + len(a) + kw['k']\n")
    assert set(sc.read) == {"y", "len"}


@pytest.mark.parametrize(
    "stmt, flag",
    [
        ("x = yield 1", "has_yield"),
        ("yield from g", "has_yield"),
        ("x = await g", "has_await"),
        ("v = locals()", "uses_locals_builtin"),
        ("v = vars()", "uses_locals_builtin"),
        ("super().f()", "uses_locals_builtin"),
        ("exec(s)", "uses_locals_builtin"),
        ("eval(s, {})", "uses_locals_builtin"),
    ],
)
def test_function_flags(stmt, flag):
    fn = parse(f"async def f(g, s):\n    {stmt}\n")
    info = activity.analyze(fn)
    assert getattr(info, flag) is True
    others = {"has_yield", "has_await", "uses_locals_builtin"} - {flag}
    assert not any(getattr(info, o) for o in others)


def test_flags_do_not_come_from_nested_functions():
    fn = parse("def f():\n    def g():\n        yield locals()\n    h = lambda: (yield)\n")
    info = activity.analyze(fn)
    assert not info.has_yield and not info.uses_locals_builtin


def test_vars_with_argument_does_not_observe_locals():
    info = activity.analyze(parse("def f(o):\n    return vars(o), super(T, o)\n"))
    assert not info.uses_locals_builtin


def test_function_info():
    src = """
    def f(a, /, b, *args, c, d=1, **kw):
        global G
        nonlocal_free = outer
        x: int
        G = 1
        for i in range(3):
            y = [j for j in args]
        def g():
            return a + y
        cb = lambda: b
        gen = (z * c for z in kw)
        return locals
    """
    fn, info = analyzed(src)
    assert info.params == ("a", "b", "args", "c", "d", "kw")
    assert info.globals == {"G"} and info.nonlocals == frozenset()
    locals_ = {"a", "b", "args", "c", "d", "kw", "nonlocal_free", "x", "i", "y", "g", "cb", "gen"}
    assert info.locals == locals_
    assert info.free_vars == {"outer", "range", "locals"}
    assert info.cell_vars == {"a", "y", "b", "c"}
    assert {"a", "y", "b", "c", "G"} <= info.always_live
    assert not info.uses_locals_builtin  # `locals` is only read, not called
    assert anno.get(fn, anno.FUNCTION_INFO) is info


def test_nonlocal_names_are_not_locals():
    src = """
    def f():
        nonlocal n
        n = 2
        m = n
    """
    _, info = analyzed(src)
    assert info.nonlocals == {"n"} and info.locals == {"m"}
    assert "n" in info.free_vars and "n" in info.always_live


def test_modified_attribute_chains_are_always_live():
    _, info = analyzed("def f(self):\n    self.a.b = 1\n    del self.c\n    self.d[0] = 1\n")
    assert info.always_live == {"self.a.b", "self.c", "self.d"}  # self.d's object changed


def test_lambda_function_info():
    lam = gast.parse("lambda x, y=1: x + z").body[0].value
    info = activity.analyze(lam)
    assert info.params == ("x", "y") and info.free_vars == {"z"} and info.name == "<lambda>"


def test_scope_repr_and_equality():
    sc = activity.Scope(read=frozenset({"a"}))
    assert sc == activity.Scope(read=frozenset({"a"})) and sc != activity.EMPTY_SCOPE
    assert repr(sc) == "Scope(read=['a'])"
