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

from autostatic.pyct.to_gast import to_ast, to_gast

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
