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
from autostatic.pyct.to_gast import as_gast, to_gast

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
    found = _by_indentation(code)
    if found is None:
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise SourceUnavailableError(fn, _reason(code, e)) from None
        first = max(first, 1)
        source = "".join(lines)
        tree = _parse_fragment(fn, source, first)
    else:
        source, first, tree = found
    node = tree.body[0] if tree.body else None
    if not isinstance(node, _DEFS) or node.name != code.co_name:
        raise SourceUnavailableError(fn, f"{code.co_filename}:{first} does not define it")
    node = as_gast(node)  # (a fresh parse: converted in place)
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
    try:
        return _parse_at(source, first)
    except SyntaxError as e:
        raise SourceUnavailableError(fn, f"its source does not parse: {e}") from None


def _parse_at(source: str, first: int) -> ast.Module:
    """``source`` parsed as if it started at line ``first`` of its file: blank lines in front
    (cheaper than moving every node's lines afterwards); an indented source is parsed inside
    an ``if 1:`` on the line before it."""
    if source[:1] in (" ", "\t"):
        if first < 2:
            tree = ast.parse("if 1:\n" + source)
            ast.increment_lineno(tree, first - 2)
        else:
            tree = ast.parse("\n" * (first - 2) + "if 1:\n" + source)
        tree.body = tree.body[0].body
        return tree
    return ast.parse("\n" * (first - 1) + source)


def _by_indentation(code: types.CodeType) -> tuple[str, int, ast.Module] | None:
    """``(source, first line, tree)`` of the function ``code`` defines (see ``def_at``)."""
    return def_at(linecache.getlines(code.co_filename), code.co_firstlineno)


def def_at(lines: list[str], first: int) -> tuple[str, int, ast.Module] | None:
    """``(source, first line, tree)`` of the def starting at file line ``first`` (its first
    decorator's, else its own) of a file's ``lines``, read up to the first later line
    indented no deeper than the ``def`` (``inspect`` tokenizes the file instead: 3x slower;
    parsing the whole file costs more still). A cut inside a string or a bracket does not
    parse, and then ``None`` (as for anything unusual): the caller reads the file another
    way."""
    start = first - 1
    if not lines or start >= len(lines):
        return None
    head = lines[start]
    indent = len(head) - len(head.lstrip(" \t"))
    if not head.strip() or head[indent] not in "@da":  # decorator, def or async def
        return None
    in_decorators = head[indent] == "@"
    end = start + 1
    while end < len(lines):
        line = lines[end]
        text = line.lstrip(" \t")
        if text and text[0] not in "#)]}\r\n" and len(line) - len(text) <= indent:
            # (a closing bracket continues a line: ``) -> str:`` of a long signature)
            if not in_decorators or text[0] not in "@da":
                break
            in_decorators = text[0] == "@"
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    source = "".join(lines[start:end])
    try:
        tree = _parse_at(source, start + 1)
    except SyntaxError:
        return None
    return source, start + 1, tree


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
    return FunctionSource(to_gast(node), source, code.co_filename, node.lineno)


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
