"""Calls of builtins that need a symbolic form: ``print``, ``len``, ``int``, ``float``,
``bool``, ``isinstance``, ``max`` and ``min`` go to ``_jst.convert_<name>`` when the name is
Python's builtin. The call pass routes each call as it rewrites it (``route``).

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
Python's order: the callee is evaluated before the arguments. The call pass has wrapped the
callee already (``_jst.convert_call(len)(x)``): the wrapped call is the fallback, so a user's
own ``len`` is still converted.
"""

from __future__ import annotations

import gast

from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import LOAD, name
from autostatic.transformers.base import Transformer, _node

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


def route(self: Transformer, node: gast.Call) -> None:
    """Route ``node`` (its callee wrapped by the call pass already, or not) to its
    ``_jst.convert_<name>`` when it calls a builtin of ``CONVERTED`` that the function does
    not bind itself (its census's bound names)."""
    builtin = _builtin_of(self, node.func)
    if builtin is None or builtin in self.ctx.census.bound:
        return
    test = _node(gast.Compare,
        left=name(builtin),
        ops=[_node(gast.Is)],
        comparators=[_node(gast.Attribute, value=self.jst("builtins"), attr=builtin, ctx=LOAD)],
    )
    select = _node(gast.IfExp, test=test, body=self.jst(CONVERTED[builtin]), orelse=node.func)
    node.func = copy_location_deep(select, node.func)


def _builtin_of(self: Transformer, func: gast.expr) -> str | None:
    """The builtin a call's callee names: ``len`` or ``_jst.convert_call(len)``."""
    if (
        isinstance(func, gast.Call)
        and isinstance(func.func, gast.Attribute)
        and func.func.attr == "convert_call"
        and isinstance(func.func.value, gast.Name)
        and func.func.value.id == self.ctx.jst
        and len(func.args) == 1
        and not func.keywords
    ):
        func = func.args[0]
    if isinstance(func, gast.Name) and func.id in CONVERTED:
        return func.id
    return None
