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

from autostatic.pyct.census import Census
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


class BuiltinCallTransformer(Transformer):
    """Routes calls of the builtins in ``CONVERTED`` to ``_jst`` (see the module docstring).

    Only a call's callee changes, in place: the calls are the ones the call pass saw (or
    found in one walk), the names the function binds are its census's; no NodeTransformer
    pass.
    """

    @classmethod
    def has_work(cls, census) -> bool:
        return not census.names.isdisjoint(CONVERTED)

    @classmethod
    def transform(cls, node: gast.AST, ctx) -> gast.AST:
        self = cls(ctx)
        calls = ctx.calls
        if calls is None:  # the call pass has not run
            calls = [sub for sub in walk(node) if isinstance(sub, gast.Call)]
        shadowed = (ctx.census or Census.of(node)).bound
        for call in calls:
            builtin = self._builtin_of(call.func)
            if builtin is not None and builtin not in shadowed:
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
