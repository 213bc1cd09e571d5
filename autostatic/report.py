"""What ``python -m autostatic show`` and ``explain`` print: converted source, and for each
``if``/``while``/``for`` of a target whether it can become a static op and, if not, why."""

from __future__ import annotations

import ast
import difflib
import importlib.util
import os
from dataclasses import dataclass

import gast

from autostatic.hook.module_conversion import _functions, _is_not_to_static, convert_tree
from autostatic.tracing_factory import tracing_node
from autostatic.transformers import PIPELINE


class TargetError(Exception):
    """The target names no file, module or function (a user mistake)."""


@dataclass
class Target:
    path: str
    source: bytes
    qualname: str | None


def resolve(target: str) -> Target:
    """``path/to/file.py``, ``module`` or ``module:qualname`` (also ``file.py:qualname``)."""
    name, _, qualname = target.partition(":")
    if name.endswith(".py") or os.sep in name or os.path.isfile(name):
        path = name
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError) as exc:
            raise TargetError(f"cannot find module {name!r} ({exc})") from None
        if spec is None:
            raise TargetError(f"no module named {name!r}")
        path = spec.origin
        if not path or not path.endswith(".py"):
            raise TargetError(f"module {name!r} has no Python source ({path})")
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as exc:
        raise TargetError(f"can't open file {path!r}: {exc.strerror}") from None
    return Target(path, source, qualname or None)


def _select(tree: gast.Module, qualname: str | None, path: str) -> list:
    found = [(owner, i, q) for owner, i, q in _functions(tree.body, "")]
    if qualname is None:
        return found
    chosen = [item for item in found if item[2] == qualname]
    if not chosen:
        names = ", ".join(q for _, _, q in found) or "none"
        raise TargetError(f"{path} has no function {qualname!r} (functions: {names})")
    return chosen


def _unparse(node) -> str:
    return ast.unparse(gast.gast_to_ast(node) if isinstance(node, gast.AST) else node)


def _tracing(node, namer, filename: str, qualname: str, level: int | None = None):
    """The tracing function of ``node`` (after the first ``level`` transformers)."""
    return tracing_node(
        node, filename=filename, qualname=qualname, taken=set(namer.taken), passes=level
    )[0]


def show(target: str, level: int | None = None, diff: bool = False) -> str:
    """The converted source of ``target`` (a unified diff against the original with ``diff``)."""
    t = resolve(target)
    if level is not None and not 0 <= level <= len(PIPELINE):
        raise TargetError(f"--level must be between 0 and {len(PIPELINE)}")
    if t.qualname is None and level is None:
        original = ast.unparse(ast.parse(t.source))
        converted = ast.unparse(convert_tree(t.source, t.path).tree)
    else:
        from autostatic.hook.names import names_used
        from autostatic.pyct.naming import Namer

        tree = gast.parse(t.source)
        namer = Namer(names_used(tree))
        before, after = [], []
        for owner, i, qualname in _select(tree, t.qualname, t.path):
            node = owner[i]
            before.append(_unparse(node))
            if _is_not_to_static(node):
                after.append(before[-1])
            else:
                after.append(_unparse(_tracing(node, namer, t.path, qualname, level)))
        original, converted = "\n\n".join(before), "\n\n".join(after)
    if not diff:
        return converted + "\n"
    lines = difflib.unified_diff(
        original.splitlines(True)
        if original.endswith("\n")
        else (original + "\n").splitlines(True),
        (converted + "\n").splitlines(True),
        f"{t.path} (original)",
        f"{t.path} (converted)",
    )
    return "".join(lines)


_OPS = {
    "convert_ifelse": "a 'cond' op",
    "convert_while_loop": "a 'while' op",
    "convert_for_loop": "a 'while' op when it iterates over a tensor (or range/enumerate/zip of "
    "one); other iterables run as Python",
}


def _outcomes(converted: ast.AST, jst: str) -> dict:
    """line -> (static op or None, reason) from the calls the converter generated."""
    found = {}
    for node in ast.walk(converted):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == jst
            and node.args
        ):
            continue
        where = getattr(node.args[-1], "value", None)  # the constant (file, line, '')
        if not (isinstance(where, tuple) and len(where) >= 2):
            continue
        line = where[1]
        if node.func.attr in _OPS:
            found.setdefault(line, {})[node.func.attr] = (_OPS[node.func.attr], "")
        elif node.func.attr == "unsupported":
            message = getattr(node.args[0], "value", "not supported")
            found.setdefault(line, {})["unsupported"] = (None, message)
    return found


#: The generated calls that stand for each kind of statement, in order of preference.
_CALLS_FOR = {
    ast.If: ("unsupported", "convert_ifelse"),
    ast.While: ("unsupported", "convert_while_loop"),
    ast.For: ("unsupported", "convert_for_loop"),
}


def _outcome(found: dict, statement: ast.AST) -> tuple:
    calls = found.get(statement.lineno, {})
    for call in _CALLS_FOR[type(statement)]:
        if call in calls:
            return calls[call]
    return None, None


def explain(target: str) -> str:
    """One line per ``if``/``while``/``for``: can it become a static op, and if not, why."""
    t = resolve(target)
    tree = gast.parse(t.source)
    from autostatic.hook.names import names_used
    from autostatic.pyct.activity import BOOL_BUILTINS, python_bool
    from autostatic.pyct.naming import Namer

    namer = Namer(names_used(tree))
    out = []
    name = os.path.basename(t.path)
    for owner, i, qualname in _select(tree, t.qualname, t.path):
        node = owner[i]
        statements = sorted(
            (
                n
                for n in ast.walk(gast.gast_to_ast(node))
                if isinstance(n, (ast.If, ast.While, ast.For))
            ),
            key=lambda n: (n.lineno, n.col_offset),
        )
        out.append(f"{qualname} ({name}:{node.lineno})")
        if not statements:
            out.append("    no if/while/for")
            continue
        if _is_not_to_static(node):
            out.extend(
                f"    {name}:{s.lineno}: {_kind(s)}: stays Python (@not_to_static)"
                for s in statements
            )
            continue
        try:
            converted = gast.gast_to_ast(_tracing(node, namer, t.path, qualname))
        except Exception as exc:
            out.append(f"    the function cannot be converted: {type(exc).__name__}: {exc}")
            continue
        outcomes = _outcomes(converted, "_jst")
        for s in statements:
            op, reason = _outcome(outcomes, s)
            if op:
                verdict = f"can become {op}"
            elif reason:
                verdict = f"cannot become a static op: {reason}"
            elif isinstance(s, ast.For):
                verdict = (
                    "stays Python: it iterates over a list, a comprehension or constants, "
                    "never a tensor"
                )
            elif isinstance(s, ast.If) and python_bool(gast.ast_to_gast(s.test), BOOL_BUILTINS):
                verdict = (
                    "stays Python: its test (in/is, == with a string, isinstance...) is always "
                    "a Python bool, never a tensor"
                )
            else:
                verdict = "cannot become a static op: it is inside a statement that stays Python"
            out.append(f"    {name}:{s.lineno}: {_kind(s)}: {verdict}")
    return "\n".join(out) + "\n"


def _kind(node: ast.AST) -> str:
    return {ast.If: "if", ast.While: "while", ast.For: "for"}[type(node)]
