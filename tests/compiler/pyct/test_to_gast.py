"""``to_gast`` makes exactly the tree ``gast.ast_to_gast`` makes (fields, contexts, locations),
and ``to_ast`` the tree ``gast.gast_to_ast`` makes."""

from __future__ import annotations

import ast
import glob
import os
import sys
import textwrap

import gast
import pytest

from autostatic.pyct.to_gast import as_ast, as_gast, to_ast, to_gast

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
STDLIB = os.path.dirname(ast.__file__)

EVERY_SYNTAX = textwrap.dedent(
    '''
    """Docstring."""
    from __future__ import annotations
    import os.path as osp, sys
    from . import sibling
    from .pkg.mod import (a as b, c)
    x: int = 1
    y = z = [1, *rest] if x else {**d, "k": (yield_ := 3)}
    del x, y[0], z.attr

    @decorator(arg, kw=1)
    async def coroutine(p, /, q: int = 2, *args, r, s=3, **kwargs) -> "R":
        global g
        async with a as (b, c), d:
            async for i, j in gen():
                await thing(i)
        return [e async for e in agen() if e]

    def generator(a, b=lambda c, *d, e=1, **f: c):
        nonlocal_ = 1
        def inner():
            nonlocal nonlocal_
            nonlocal_ += 1
            yield from range(3)
            yield
        return inner

    class K(Base, metaclass=Meta):
        attr: list[int]
        def method(self):
            return super().method(), self.attr[1:2:3], self.attr[::]

    try:
        pass
    except (ValueError, TypeError) as err:
        raise RuntimeError("x") from err
    except Exception:
        raise
    else:
        pass
    finally:
        pass
    try:
        pass
    except* OSError as group:
        pass
    while not done and (n := next_n()) > 0 or -x < ~y <= +z is not None:
        break
    else:
        continue_ = 1
    for k in {1, 2} | set():
        continue
    with open(f) as fh, lock:
        assert fh, f"{fh!r:>10} and {x=} {y:{width}}"
    match command:
        case [1, 2, *others]:
            pass
        case {"key": value, **rest}:
            pass
        case Point(x=0, y=yy) | Point(0, yy) if yy > 0:
            pass
        case str() as text:
            pass
        case None | True | -1 | 1 + 2j:
            pass
        case _:
            pass
    lambda: (a for a in b for c in a if c)
    {k: v for k, v in items}, {s for s in t}, b"bytes", ..., 1 if a else 2
    print(*args, sep="", **kwargs)
    '''
)


def _same(tree: ast.AST) -> None:
    expected = gast.dump(gast.ast_to_gast(tree), include_attributes=True)
    new = to_gast(tree)
    assert gast.dump(new, include_attributes=True) == expected
    _same_back(new)


def _same_back(tree: gast.AST) -> None:
    expected = ast.dump(gast.gast_to_ast(tree), include_attributes=True)
    assert ast.dump(to_ast(tree), include_attributes=True) == expected


def test_every_syntax():
    _same(ast.parse(EVERY_SYNTAX))


def _sources() -> list[str]:
    own = sorted(glob.glob(os.path.join(ROOT, "autostatic", "**", "*.py"), recursive=True))
    own += [os.path.join(ROOT, "tests", "programs.py")]
    names = ("ast.py", "inspect.py", "argparse.py", "dataclasses.py", "typing.py",
             "asyncio/base_events.py", "json/decoder.py")  # fmt: skip
    stdlib = [os.path.join(STDLIB, name) for name in names]
    return [p for p in own + stdlib if os.path.exists(p)]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: os.path.relpath(p, ROOT))
def test_real_files(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        _same(tree)
    finally:
        sys.setrecursionlimit(old)


def test_the_source_tree_is_left_as_it_was():
    tree = ast.parse(EVERY_SYNTAX)
    before = ast.dump(tree, include_attributes=True)
    to_gast(tree)
    assert ast.dump(tree, include_attributes=True) == before


def test_converted_functions_go_back_as_gast_takes_them():
    """The converter's own nodes (made from templates and by hand) too."""
    from autostatic.pyct import parser
    from autostatic.tracing_factory import tracing_node
    from tests.programs import PROGRAMS

    for fn in PROGRAMS:
        src = parser.parse_function(fn)
        node, _, _ = tracing_node(
            src.node, filename=src.filename, qualname=fn.__qualname__, taken=set()
        )
        _same_back(node)


def test_gast_tree_is_left_as_it_was():
    tree = to_gast(ast.parse(EVERY_SYNTAX))
    before = gast.dump(tree, include_attributes=True)
    to_ast(tree)
    assert gast.dump(tree, include_attributes=True) == before


# -- as_ast: in place, located ------------------------------------------------------------------


def _located_copy(tree: gast.AST) -> str:
    """What ``as_ast`` must make: ``to_ast``'s tree with ``ast.fix_missing_locations``."""
    return ast.dump(ast.fix_missing_locations(to_ast(tree)), include_attributes=True)


def test_as_ast_is_to_ast_with_missing_locations_fixed():
    expected = _located_copy(to_gast(ast.parse(EVERY_SYNTAX)))
    assert ast.dump(as_ast(to_gast(ast.parse(EVERY_SYNTAX))), include_attributes=True) == expected


@pytest.mark.parametrize("path", _sources(), ids=lambda p: os.path.relpath(p, ROOT))
def test_as_ast_on_real_files(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        expected = _located_copy(to_gast(ast.parse(source, path)))
        new = as_ast(to_gast(ast.parse(source, path)))
        assert ast.dump(new, include_attributes=True) == expected
        compile(new, path, "exec", dont_inherit=True)
    finally:
        sys.setrecursionlimit(old)


def _unlocated(tree: ast.AST) -> list:
    """The nodes of ``tree`` with a location field unset (or None)."""
    fields = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    return [
        node
        for node in ast.walk(tree)
        if any(getattr(node, f, None) is None for f in fields if f in node._attributes)
    ]


def _converted(fn, copy=True):
    from autostatic.conversion import converting
    from autostatic.pyct import parser
    from autostatic.tracing_factory import tracing_node

    src = parser.parse_function(fn)
    with converting():
        node, _, _ = tracing_node(
            src.node, filename=src.filename, qualname=fn.__qualname__, taken=set(), copy=copy
        )
    return node


def test_converted_functions_as_ast_are_located_as_before():
    """The converter leaves most generated expressions unlocated (they take their
    statement's); ``as_ast`` locates them as ``ast.fix_missing_locations`` would. (A node
    the converter put in two places is converted once, located by its first parent: the
    comparison is on a copy where each place has its own, as ``to_ast`` makes them.)"""
    from autostatic.transformers.base import clone
    from tests.programs import PROGRAMS

    for fn in PROGRAMS:
        node = _converted(fn)
        expected = _located_copy(node)
        assert ast.dump(as_ast(clone(node)), include_attributes=True) == expected, fn.__name__
        assert not _unlocated(as_ast(node)), fn.__name__


def test_every_node_of_a_compiled_tracing_factory_is_located():
    """The factory module is compiled without ``ast.fix_missing_locations``: every node of
    it (the tracing function's and the factory's own) carries its location."""
    from autostatic.tracing_factory import factory_module, tracing_tree
    from tests.programs import PROGRAMS

    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        from bench_convert import fifty_lines
    finally:
        sys.path.pop(0)
    for fn in [*PROGRAMS, fifty_lines]:
        from autostatic.pyct import parser

        src = parser.parse_function(fn)
        fdef, jst, sym = tracing_tree(
            src.node, filename=src.filename, qualname=fn.__qualname__,
            freevars=fn.__code__.co_freevars, taken=set(fn.__globals__), copy=False,
        )  # fmt: skip
        module = factory_module(fdef, jst, sym, fn.__qualname__, fn.__code__.co_freevars)
        assert not _unlocated(module), fn.__name__
        compile(module, src.filename, "exec", dont_inherit=True)


def test_locals_filter_is_located():
    """``locals()`` in a tracing function is rewritten on the ``ast`` tree: located too."""
    from autostatic.tracing_factory import factory_module, tracing_tree

    def uses_locals(x):
        y = x + 1
        if y > 2:
            y = 3
        return sorted(locals())

    src = __import__("autostatic.pyct.parser", fromlist=["parser"]).parse_function(uses_locals)
    fdef, jst, sym = tracing_tree(
        src.node, filename=src.filename, qualname="uses_locals", freevars=(), taken=set()
    )
    module = factory_module(fdef, jst, sym, "uses_locals", ())
    assert not _unlocated(module)
    assert any(isinstance(n, ast.DictComp) for n in ast.walk(module))


def test_as_ast_converts_shared_nodes_once():
    name = gast.Name("x", gast.Load(), None, None)
    tree = gast.Expression(body=gast.Tuple(elts=[name, name], ctx=gast.Load()))
    new = as_ast(tree)
    assert type(new.body.elts[0]) is ast.Name and new.body.elts[0] is new.body.elts[1]
    assert new.body.elts[0].lineno == 1
    assert eval(compile(new, "<t>", "eval"), {"x": 5}) == (5, 5)


# -- as_gast: in place ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", _sources(), ids=lambda p: os.path.relpath(p, ROOT))
def test_as_gast_on_real_files(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        expected = gast.dump(to_gast(ast.parse(source, path)), include_attributes=True)
        assert gast.dump(as_gast(ast.parse(source, path)), include_attributes=True) == expected
    finally:
        sys.setrecursionlimit(old)


def test_as_gast_every_syntax_and_back():
    tree = as_gast(ast.parse(EVERY_SYNTAX))
    assert gast.dump(tree, include_attributes=True) == gast.dump(
        to_gast(ast.parse(EVERY_SYNTAX)), include_attributes=True
    )
    _same_back(tree)


def test_as_gast_leaves_the_parsers_shared_nodes_alone():
    """Python's parser shares one node per context and operator between all trees."""
    as_gast(ast.parse("a = b + c and not d < e"))
    tree = ast.parse("x = y + z or not w < v")
    kinds = {type(n) for n in ast.walk(tree)}
    assert {ast.Load, ast.Store, ast.Add, ast.Or, ast.Not, ast.Lt} <= kinds
    assert not any(isinstance(n, gast.AST) and type(n).__module__.startswith("gast")
                   for n in ast.walk(tree))  # fmt: skip
