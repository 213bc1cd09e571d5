"""A whole module as it runs while tracing, for tools (``show``, differential tests).

``convert_tree`` replaces every function that is not nested in another function (module
level, methods at any class depth, functions inside module-level ``if``/``try``/``with``
blocks) by its tracing function - the converted body, exact on Python values - and imports
the aliases the generated code uses after the docstring and ``__future__`` imports.
``@not_to_static`` functions are left as written; a function the converter cannot handle is
left as written and reported in ``ModuleConversion.failures``. Line numbers stay the user's.

The import hook does not use this: it compiles marked modules with an entry check per
function (``entry.py``) and converts a function only when tracing reaches it (``lazy.py``).
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field

import gast  # convert_tree only; ``instrument`` needs the standard library alone

from autostatic.hook.entry import SOURCE
from autostatic.hook.names import free_name, names_used
from autostatic.pyct.naming import Namer
from autostatic.pyct.to_gast import as_ast, as_gast, to_gast

JST = "_jst"
#: A dunder name: code that walks its module's namespace for callables (toolz.curried builds
#: its namespace so) skips dunders, and a dunder is never name-mangled in class bodies.
SYM = "__jst_Variable__"
_DEFS = (gast.FunctionDef, gast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers")


@dataclass
class Failure:
    """One function left unconverted: where and why."""

    qualname: str
    lineno: int
    reason: str


@dataclass
class ModuleConversion:
    """The result of converting one module."""

    tree: ast.Module  # the converted module, ready for ``compile``
    converted: int = 0  # functions converted
    skipped: int = 0  # ``@not_to_static`` functions left alone
    failures: list[Failure] = field(default_factory=list)
    jst: str = JST
    sym: str = SYM


def _is_not_to_static(node: gast.AST) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, gast.Call) else deco
        if isinstance(target, gast.Attribute) and target.attr == "not_to_static":
            return True
        if isinstance(target, gast.Name) and target.id == "not_to_static":
            return True
    return False


def _functions(body: list, prefix: str):
    """Yield ``(owner_list, index, qualname)`` of every function not nested in a function."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, _DEFS):
            yield body, i, prefix + stmt.name
        elif isinstance(stmt, gast.ClassDef):
            yield from _functions(stmt.body, f"{prefix}{stmt.name}.")
        else:
            for attr in _BLOCKS:
                block = getattr(stmt, attr, None) or []
                for child in block:
                    if isinstance(child, gast.ExceptHandler):
                        yield from _functions(child.body, prefix)
                if block and isinstance(block[0], gast.stmt):
                    yield from _functions(block, prefix)
            if isinstance(stmt, gast.Match):
                for case in stmt.cases:
                    yield from _functions(case.body, prefix)


def _insert_at(tree: gast.Module) -> int:
    """Index after the docstring and the ``from __future__`` imports."""
    body = tree.body
    i = 0
    if (
        body
        and isinstance(body[0], gast.Expr)
        and isinstance(body[0].value, gast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        i = 1
    while i < len(body) and isinstance(body[i], gast.ImportFrom) and body[i].module == "__future__":
        i += 1
    return i


def _alias_imports(jst: str, sym: str, lineno: int) -> list[ast.stmt]:
    imports = [
        ast.Import(names=[ast.alias(name="autostatic_runtime.convert_ops", asname=jst)]),
        ast.ImportFrom(
            module="autostatic_runtime.static.program",
            names=[ast.alias(name="Variable", asname=sym)],
            level=0,
        ),
    ]
    for stmt in imports:
        for node in ast.walk(stmt):
            if "lineno" in node._attributes:
                node.lineno = node.end_lineno = lineno
                node.col_offset = node.end_col_offset = 0
    return imports


def _tracing_function(node, filename: str, qualname: str, taken: set, jst: str, sym: str):
    """The tracing function of ``node`` (converted in place: the module's tree is its own),
    with the module's aliases, and ``node``'s decorators (which still apply at module level)."""
    from autostatic.tracing_factory import tracing_node
    from autostatic.transformers.base import clone

    decorators = clone(node.decorator_list)  # (the passes may rewrite the node's own)
    new, _, _ = tracing_node(
        node, filename=filename, qualname=qualname, taken=taken - {jst, sym}, copy=False,
        names=(jst, sym),
    )  # fmt: skip
    new.decorator_list = decorators
    return new


def convert_tree(
    source: str | bytes, filename: str, module_name: str = "", source_hash: str | None = None
) -> ModuleConversion:
    """Parse ``source`` and replace every function not nested in a function by its tracing
    function (the module as it runs while tracing); returns the converted ``ast.Module``.
    With ``source_hash`` (the import hook's) the module also sets ``__autostatic_source__``:
    its functions are then known as the hook's.

    Raises ``SyntaxError`` when the source does not parse. Failures of single functions are
    collected in the result, not raised.
    """
    from autostatic.conversion import converting

    with converting():  # (one garbage collection afterwards, not one per function)
        return _convert_tree(source, filename, source_hash)


def _convert_tree(source: str | bytes, filename: str, source_hash: str | None):
    tree = as_gast(ast.parse(source, filename))  # (a fresh tree: made gast in place)
    namer = Namer(names_used(tree))
    jst = free_name(JST, namer.taken)
    sym = free_name(SYM, namer.taken)
    result = ModuleConversion(tree=None, jst=jst, sym=sym)
    failed = []
    for owner, index, qualname in list(_functions(tree.body, "")):
        node = owner[index]
        if _is_not_to_static(node):
            result.skipped += 1
            continue
        try:
            new = _tracing_function(node, filename, qualname, namer.taken, jst, sym)
        except Exception as exc:  # any failure leaves this function as written
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            result.failures.append(Failure(qualname, node.lineno, reason))
            failed.append((owner, index, node.lineno, node.col_offset))
            continue
        owner[index] = new
        result.converted += 1
    if failed:  # the transformers changed a failed node in place: parse it again
        originals = {
            (n.lineno, n.col_offset): n
            for n in gast.walk(to_gast(ast.parse(source)))
            if isinstance(n, _DEFS)
        }
        for owner, index, lineno, col in failed:
            owner[index] = originals[(lineno, col)]
    at = _insert_at(tree)
    module = as_ast(tree)  # in place, every node located (``ast.fix_missing_locations``)
    line = module.body[at].lineno if at < len(module.body) else 1
    imports = _alias_imports(jst, sym, line)
    if not result.converted:  # no callable of ours in a namespace that needs none
        imports = imports[:1]
    if source_hash is not None:
        target = ast.Name(id=SOURCE, ctx=ast.Store())
        mark = ast.Assign(targets=[target], value=ast.Constant(source_hash))
        imports.append(ast.copy_location(mark, imports[0]))
        for sub in (target, mark.value):
            ast.copy_location(sub, mark)
    module.body[at:at] = imports
    result.tree = module
    return result


def convert_module_source(
    source: str | bytes, filename: str, module_name: str = ""
) -> tuple[types.CodeType, ModuleConversion]:
    """Compile ``source`` with its functions converted; returns the code and the report.

    Raises ``SyntaxError`` for source Python itself rejects (the caller compiles the original
    to get Python's exact error) and whatever ``compile`` raises for the converted tree.
    """
    result = convert_tree(source, filename, module_name)
    code = compile(result.tree, filename, "exec", dont_inherit=True)
    return code, result
