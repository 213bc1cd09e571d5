"""Calls of builtins that need a symbolic form: ``print``, ``len``, ``int``, ``float``,
``bool`` and ``isinstance`` go to ``_jst.convert_<name>`` when the name is Python's builtin.

Before::

    n = len(x)
    print('n =', n)

After::

    n = (_jst.convert_len if len is _jst.builtins.len else len)(x)
    (_jst.convert_print if print is _jst.builtins.print else print)('n =', n)

A name the function (or a function nested in it) binds itself — a parameter, an assignment,
an import, a ``def``, a ``global``/``nonlocal`` declaration — is not the builtin, and its calls
are left as written. Whether a module-level name (``from rich import print``, a global
``def len``) shadows the builtin is only known when the code runs, hence the identity test,
which costs one attribute lookup while tracing (the converted body only runs then) and keeps
Python's order: the callee is evaluated before the arguments. When the call pass has
already wrapped the callee (``_jst.convert_call(len)(x)``), the wrapped call is the fallback,
so a user's own ``len`` is still converted.
"""

from __future__ import annotations

import gast

from autostatic.pyct.nodes import walk
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import name
from autostatic.transformers.base import Transformer

#: builtin name -> the convert_ops function that stands for it while tracing
CONVERTED = {
    "print": "convert_print",
    "len": "convert_len",
    "int": "convert_int",
    "float": "convert_float",
    "bool": "convert_bool",
    "isinstance": "convert_isinstance",
    "max": "convert_max",
    "min": "convert_min",
}


def _binds(node: gast.AST) -> tuple:
    """The names ``node`` itself binds (not its children)."""
    if isinstance(node, gast.Name):
        return () if isinstance(node.ctx, gast.Load) else (node.id,)
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return (node.name,)
    if isinstance(node, gast.alias):
        return ((node.asname or node.name).partition(".")[0],)
    if isinstance(node, (gast.Global, gast.Nonlocal)):
        return tuple(node.names)
    if isinstance(node, (gast.MatchAs, gast.MatchStar)) and node.name:
        return (node.name,)
    if isinstance(node, gast.MatchMapping) and node.rest:
        return (node.rest,)
    return ()


def bound_names(tree: gast.AST) -> set[str]:
    """Every name ``tree`` binds anywhere (any scope in it): shadows of builtins."""
    return {n for node in walk(tree) for n in _binds(node)}


class BuiltinCallTransformer(Transformer):
    """Routes calls of the builtins in ``CONVERTED`` to ``_jst`` (see the module docstring).

    Only a call's callee changes, in place, so one walk over the tree finds both the calls
    and the names the function binds (cheaper than a NodeTransformer pass).
    """

    @classmethod
    def transform(cls, node: gast.AST, ctx) -> gast.AST:
        self = cls(ctx)
        shadowed: set[str] = set()
        calls = []
        for sub in walk(node):
            if isinstance(sub, gast.Call):
                builtin = self._builtin_of(sub.func)
                if builtin is not None:
                    calls.append((sub, builtin))
            else:
                shadowed.update(_binds(sub))
        for call, builtin in calls:
            if builtin not in shadowed:
                self._route(call, builtin)
        return node

    def _route(self, node: gast.Call, builtin: str) -> None:
        test = gast.Compare(
            left=name(builtin),
            ops=[gast.Is()],
            comparators=[gast.Attribute(value=self.jst("builtins"), attr=builtin, ctx=gast.Load())],
        )
        select = gast.IfExp(test=test, body=self.jst(CONVERTED[builtin]), orelse=node.func)
        node.func = copy_location_deep(select, node.func)

    def _builtin_of(self, func: gast.expr) -> str | None:
        """The builtin a call's callee names: ``len`` or ``_jst.convert_call(len)``."""
        if self._is_jst(func, "convert_call") and len(func.args) == 1 and not func.keywords:
            func = func.args[0]
        if isinstance(func, gast.Name) and func.id in CONVERTED:
            return func.id
        return None

    def _is_jst(self, node: gast.expr, attr: str) -> bool:
        func = node.func if isinstance(node, gast.Call) else None
        return (
            isinstance(func, gast.Attribute)
            and func.attr == attr
            and isinstance(func.value, gast.Name)
            and func.value.id == self.ctx.jst
        )
