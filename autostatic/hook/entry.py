"""A marked module as Python compiles it, plus one cheap entry check per function.

The import hook and ``python -m autostatic run`` compile marked modules with ``instrument``::

    # before                                  # after (the alias is picked free of the module)
    \"""Doc.\"""                                 \"""Doc.\"""
    from __future__ import annotations        from __future__ import annotations
                                              import autostatic_switch as __jst__
                                              __autostatic_source__ = '<source hash>'
    import autostatic_runtime as rt           import autostatic_runtime as rt

    def f(x):                                 def f(x):
        \"""Doc.\"""                                 \"""Doc.\"""
        if rt.mean(x) > 0: ...                    if __jst__.tracing and __jst__.traces_here():
                                                      return __jst__.traced()(x)
                                                  if rt.mean(x) > 0: ...   # untouched

``traced()`` finds the function by its key ``("autostatic.entry", source hash, first line,
name)``, built from the caller's code (its ``co_firstlineno``: the first decorator's line,
else the ``def``'s; its ``co_name``) and the module global ``__autostatic_source__`` (the
hash of the source the module was compiled from, set next to the alias): on a trace,
``autostatic.lazy`` re-reads the file, refuses it if its hash changed, finds the ``def``
there and converts it into the function's *tracing function* (once). No constant per
function: a key tuple in every function's constants made a warm import unmarshal a third
more (a module that uses the name ``__autostatic_source__`` gets the key as a constant). The
entry check sits on the ``def`` line. Every function gets one - module level, methods,
functions nested in functions - except ``@not_to_static`` functions (and the functions
inside them), generator and ``async`` functions (they always run as written; a generator is
iterated in Python even while tracing), and nested functions that declare ``nonlocal`` (the
entry check can only pass the values of free variables, not their cells; they are converted
with the function that contains them). Lambdas get none. The alias is a dunder, so class
bodies never mangle it. Only the standard library's ``ast`` is used: gast and the converter
are not imported.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass

from autostatic.hook.names import free_name, names_used

#: First item of every entry key: ``autostatic.lazy`` recognizes checked code by it.
MARK = "autostatic.entry"
ALIAS = "__jst__"
#: What the alias names: the switch the entry checks read, which loads nothing (the runtime
#: and NumPy load when the program loads them; see ``autostatic_switch``).
SWITCH = "autostatic_switch"
#: The module global holding the source hash the module was compiled from (hex).
SOURCE = "__autostatic_source__"
_NOT_CHECKED = "not_to_static"


@dataclass
class Instrumented:
    """A module compiled as Python compiles it, plus entry checks."""

    tree: ast.Module
    alias: str
    checked: int = 0  # functions with an entry check
    unchecked: int = 0  # generators, async, @not_to_static, nested with nonlocal


def _marked_not_to_static(node: ast.AST) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == _NOT_CHECKED:
            return True
        if isinstance(target, ast.Name) and target.id == _NOT_CHECKED:
            return True
    return False


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_scope_has(node: ast.AST, kinds: tuple) -> bool:
    """Whether ``node``'s own scope (not its nested functions or classes) contains ``kinds``."""
    stack = list(node.body)
    while stack:
        sub = stack.pop()
        if isinstance(sub, kinds):
            return True
        if isinstance(sub, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(sub))
    return False


def entry_check(alias, target, node: ast.FunctionDef) -> ast.If:
    """``if ALIAS.tracing and ALIAS.traces_here(): return ALIAS.traced(TARGET)(<params>)``
    on the ``def`` line; ``alias`` is a name or an expression, ``target`` a key (a constant),
    an expression, or None (``traced()``: the hook's, keyed by the caller's code)."""

    def jst(attr: str) -> ast.Attribute:
        value = ast.Name(id=alias, ctx=ast.Load()) if isinstance(alias, str) else alias
        return ast.Attribute(value=value, attr=attr, ctx=ast.Load())

    def load(name: str) -> ast.Name:
        return ast.Name(id=name, ctx=ast.Load())

    args = node.args
    positional: list = [load(a.arg) for a in args.posonlyargs + args.args]
    if args.vararg is not None:
        positional.append(ast.Starred(value=load(args.vararg.arg), ctx=ast.Load()))
    keywords = [ast.keyword(arg=a.arg, value=load(a.arg)) for a in args.kwonlyargs]
    if args.kwarg is not None:
        keywords.append(ast.keyword(arg=None, value=load(args.kwarg.arg)))
    if target is not None and not isinstance(target, ast.AST):
        target = ast.Constant(target)
    tracing_fn = ast.Call(func=jst("traced"), args=[] if target is None else [target], keywords=[])
    check = ast.If(
        test=ast.BoolOp(
            op=ast.And(),
            values=[jst("tracing"), ast.Call(func=jst("traces_here"), args=[], keywords=[])],
        ),
        body=[ast.Return(value=ast.Call(func=tracing_fn, args=positional, keywords=keywords))],
        orelse=[],
    )
    line, col = node.lineno, node.col_offset
    for sub in ast.walk(check):
        if "lineno" in sub._attributes:
            sub.lineno = sub.end_lineno = line
            sub.col_offset = sub.end_col_offset = col
    return check


def _statement_lists(stmt: ast.stmt):
    """The statement lists directly inside ``stmt`` (bodies, branches, handlers, cases)."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if block:
            yield block
    for handler in getattr(stmt, "handlers", ()):
        yield handler.body
    for case in getattr(stmt, "cases", ()):
        yield case.body


def instrument(
    source: str | bytes, filename: str, source_hash: bytes, text: str | None = None
) -> Instrumented:
    """Parse ``source`` (``SyntaxError`` as Python raises it) and add the entry checks.

    Args:
        source: the module's source.
        filename: where it lives (syntax errors and code name it).
        source_hash: ``importlib.util.source_hash`` of the bytes; goes into every key.
        text: ``source`` decoded, when the caller has it.
    """
    tree = ast.parse(source, filename)
    if text is None:
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    alias = ALIAS
    if alias in text:  # rare: the alias is used in the module, pick another
        alias = free_name(ALIAS, names_used(tree))
    has_yield, has_nonlocal = "yield" in text, "nonlocal" in text
    keyed = SOURCE in text  # the module uses the name: each check carries its key instead
    digest = source_hash.hex()
    result = Instrumented(tree=tree, alias=alias)
    stack = [(tree.body, False)]  # (statements, inside a function)
    while stack:
        body, nested = stack.pop()
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef):
                if _marked_not_to_static(stmt):
                    result.unchecked += 1
                    continue  # as written, its nested functions too
                if (has_yield and _own_scope_has(stmt, (ast.Yield, ast.YieldFrom))) or (
                    nested and has_nonlocal and _own_scope_has(stmt, (ast.Nonlocal,))
                ):
                    result.unchecked += 1
                else:
                    key = (MARK, digest, first_line(stmt), stmt.name) if keyed else None
                    at = 1 if _is_docstring(stmt.body[0]) else 0
                    stmt.body.insert(at, entry_check(alias, key, stmt))
                    result.checked += 1
                stack.append((stmt.body, True))
                continue
            if isinstance(stmt, ast.AsyncFunctionDef):
                result.unchecked += 1
                stack.append((stmt.body, True))
                continue
            for block in _statement_lists(stmt):
                stack.append((block, nested))
    if True:  # always: ``__jst__`` in a module's namespace says the hook compiled it
        at = _insert_at_ast(tree)
        line = tree.body[at].lineno if at < len(tree.body) else 1
        imp = ast.Import(names=[ast.alias(name=SWITCH, asname=alias)])
        head = [imp]
        if not keyed:
            target = ast.Name(id=SOURCE, ctx=ast.Store())
            head.append(ast.Assign(targets=[target], value=ast.Constant(digest)))
        for stmt in head:
            for sub in ast.walk(stmt):
                sub.lineno = sub.end_lineno = line
                sub.col_offset = sub.end_col_offset = 0
        tree.body[at:at] = head
    return result


def first_line(node) -> int:
    """``co_firstlineno`` of the function ``node`` defines: its first decorator's line."""
    return min([d.lineno for d in node.decorator_list] + [node.lineno])


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _insert_at_ast(tree: ast.Module) -> int:
    """Index after the docstring and the ``from __future__`` imports."""
    body = tree.body
    i = 1 if body and _is_docstring(body[0]) else 0
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        i += 1
    return i


def is_checked(code: types.CodeType) -> bool:
    """Whether ``code`` starts with an entry check (the hook's or ``autostatic.convert``'s)."""
    names = code.co_names
    return "traced" in names and "traces_here" in names
