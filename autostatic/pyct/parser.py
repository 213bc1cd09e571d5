"""Parsing a live function back to a gast tree whose locations are the original file's.

``parse_function(fn)`` finds the source with ``inspect``, parses it and returns the
FunctionDef / AsyncFunctionDef / Lambda node with every ``lineno`` *and* ``col_offset`` equal
to the original file's (an indented method is parsed inside an ``if 1:`` wrapper rather than
dedented, so columns and multi-line strings stay exact). Decorators stay on the node; the node
is annotated with ``anno.DECORATORS`` and each decorator with ``anno.IS_DECORATOR``, so a
converter can drop them before recompiling.

A lambda is located in a parse of its whole file (its own line may not parse alone): among the
lambdas starting on ``co_firstlineno``, the one whose body spans the code object's
``co_positions()``.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import types
from dataclasses import dataclass
from typing import Any

import gast

from autostatic.pyct import anno
from autostatic.pyct.errors import SourceUnavailableError

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class FunctionSource:
    """A parsed function.

    Attributes:
        node: the gast FunctionDef / AsyncFunctionDef / Lambda, at the original locations.
        source: the function's source lines as they are in the file (not dedented); for a
            lambda, the lines the lambda spans.
        filename: ``co_filename`` of the function's code.
        first_line: the line (1-based) of the first line of ``source``.
    """

    node: gast.AST
    source: str
    filename: str
    first_line: int


def _code_of(fn: Any) -> types.CodeType:
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise SourceUnavailableError(fn, "it is not a Python function (builtin or C code?)")
    return code


def parse_function(fn: Any) -> FunctionSource:
    """Parse ``fn`` (a function, method or lambda) at its original file locations.

    Raises:
        SourceUnavailableError: no source (builtin, C function, exec'd or REPL code) or the
            source found does not define ``fn`` (file edited since import).
    """
    code = _code_of(fn)
    if code.co_name == "<lambda>":
        return _parse_lambda(fn, code)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise SourceUnavailableError(fn, _reason(code, e)) from None
    first = max(first, 1)
    source = "".join(lines)
    tree = _parse_fragment(fn, source, first)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, _DEFS) or node.name != code.co_name:
        raise SourceUnavailableError(fn, f"{code.co_filename}:{first} does not define it")
    node = gast.ast_to_gast(node)
    anno.set(node, anno.DECORATORS, tuple(node.decorator_list))
    for d in node.decorator_list:
        anno.set(d, anno.IS_DECORATOR, True)
    return FunctionSource(node, source, code.co_filename, first)


def _reason(code: types.CodeType, error: Exception) -> str:
    name = code.co_filename
    if name.startswith("<") and name.endswith(">"):
        return f"it was defined in {name} (exec, eval or the interactive prompt)"
    return f"{type(error).__name__}: {error}"


def _parse_fragment(fn: Any, source: str, first: int) -> ast.Module:
    """Parse lines starting at file line ``first``, keeping the file's lines and columns."""
    indented = source[:1] in (" ", "\t")
    text = "if 1:\n" + source if indented else source
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise SourceUnavailableError(fn, f"its source does not parse: {e}") from None
    if indented:
        tree.body = tree.body[0].body
        ast.increment_lineno(tree, first - 2)
    elif first > 1:
        ast.increment_lineno(tree, first - 1)
    return tree


_file_trees: dict[str, tuple[list[str], ast.Module]] = {}


def _file_tree(fn: Any, filename: str) -> tuple[list[str], ast.Module]:
    lines = linecache.getlines(filename)
    if not lines:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename)
    if not lines:
        return _raise_missing(fn, filename)
    cached = _file_trees.get(filename)
    if cached is not None and cached[0] is lines:
        return cached
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError as e:
        raise SourceUnavailableError(fn, f"{filename} does not parse: {e}") from None
    _file_trees[filename] = (lines, tree)
    return lines, tree


def _raise_missing(fn: Any, filename: str) -> Any:
    if filename.startswith("<") and filename.endswith(">"):
        reason = f"it was defined in {filename} (exec, eval or the interactive prompt)"
    else:
        reason = f"{filename} cannot be read"
    raise SourceUnavailableError(fn, reason)


def _parse_lambda(fn: Any, code: types.CodeType) -> FunctionSource:
    lines, tree = _file_tree(fn, code.co_filename)
    line = code.co_firstlineno
    candidates = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == line]
    node = _pick_lambda(candidates, code)
    if node is None:
        raise SourceUnavailableError(fn, f"no lambda found at {code.co_filename}:{line}")
    source = "".join(lines[node.lineno - 1 : node.end_lineno])
    return FunctionSource(gast.ast_to_gast(node), source, code.co_filename, node.lineno)


def _pick_lambda(candidates: list[ast.Lambda], code: types.CodeType) -> ast.Lambda | None:
    """The innermost candidate whose body contains every located instruction of ``code``."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    spans = [
        (l0, c0, l1, c1)
        for l0, l1, c0, c1 in code.co_positions()
        if l0 is not None and c0 is not None and (l0, c0) != (l1, c1)
    ]
    best = None
    for cand in candidates:
        b = cand.body
        start, end = (b.lineno, b.col_offset), (b.end_lineno, b.end_col_offset)
        if all(start <= (l0, c0) and (l1, c1) <= end for l0, c0, l1, c1 in spans):
            size = (end[0] - start[0], end[1] - start[1])
            if best is None or size < best[0]:
                best = (size, cand)
    return best[1] if best is not None else None
