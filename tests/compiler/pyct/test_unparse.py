"""``pyct.unparse`` writes exactly the text ``ast.unparse`` writes."""

from __future__ import annotations

import ast
import glob
import os
import sys

import pytest

from autostatic.pyct.unparse import unparse
from tests.compiler.pyct.test_to_gast import EVERY_SYNTAX

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
STDLIB = os.path.dirname(ast.__file__)


def _sources() -> list[str]:
    own = sorted(glob.glob(os.path.join(ROOT, "autostatic", "**", "*.py"), recursive=True))
    own += [os.path.join(ROOT, "tests", "programs.py")]
    names = ("ast.py", "inspect.py", "argparse.py", "dataclasses.py", "typing.py",
             "asyncio/base_events.py", "json/decoder.py", "string.py", "textwrap.py")  # fmt: skip
    return [p for p in own + [os.path.join(STDLIB, n) for n in names] if os.path.exists(p)]


def _same(tree: ast.AST) -> None:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        assert unparse(tree) == ast.unparse(tree)
    finally:
        sys.setrecursionlimit(old)


def test_every_syntax():
    _same(ast.parse(EVERY_SYNTAX))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: os.path.basename(p))
def test_real_files(path):
    with open(path, encoding="utf-8") as f:
        _same(ast.parse(f.read(), path))


def test_converted_functions():
    from autostatic.conversion import _unparse
    from autostatic.pyct import parser
    from autostatic.pyct.to_gast import to_ast
    from autostatic.tracing_factory import tracing_node
    from tests.programs import PROGRAMS

    for fn in PROGRAMS:
        src = parser.parse_function(fn)
        node, _, _ = tracing_node(
            src.node, filename=src.filename, qualname=fn.__qualname__, taken=set()
        )
        assert _unparse(node) == ast.unparse(to_ast(node))


def test_nested_fstrings_and_precedence():
    text = 'f"{a!r:>{w}} {b + 1:{c}} {{x}}" + (lambda: (yield))() ** -(a if b else c)[1:2, ::3]'
    _same(ast.parse(text))
