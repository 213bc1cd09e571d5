"""Calls: ``f(args)`` becomes ``_jst.convert_call(f)(args)`` in the converted body.

Before::

    out = self.my_fc(x)
    out = add_two(out, y)

After::

    out = _jst.convert_call(self.my_fc)(x)
    out = _jst.convert_call(add_two)(out, y)

The converted body runs only while a static program is built, so helpers, methods and
sublayers called from it are converted too (once each, cached); the callee is evaluated
before its arguments, as Python does. Calls of builtins with a symbolic form (``len``,
``print``...) are routed to it as well (``builtin_calls``). Calls the converter itself
generates (``_jst.*``) and builtins that inspect the calling frame (``super()``,
``locals()``, ``eval``...) are left as they are.
"""

from __future__ import annotations

import gast

from autostatic.pyct.templates import copy_location, name
from autostatic.transformers.base import Transformer, _node
from autostatic.transformers.builtin_calls import route

#: Builtins that must run in the caller's own frame.
FRAME_BUILTINS = frozenset(
    {"super", "locals", "globals", "vars", "dir", "eval", "exec", "breakpoint", "__import__"}
)


class CallTransformer(Transformer):
    """Routes calls through ``convert_call`` (see the module docstring)."""

    def visit_Call(self, node: gast.Call):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Name) and (
            func.id in FRAME_BUILTINS or func.id in (self.ctx.jst, self.ctx.sym)
        ):
            if func.id == "super" and not (node.args or node.keywords):
                self._explicit_super(node)
            return node
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.value.id == self.ctx.jst
        ):
            return node
        wrapped = _node(gast.Call, func=self.jst("convert_call"), args=[func], keywords=[])
        node.func = copy_location(wrapped, func)
        route(self, node)
        return node

    def _explicit_super(self, node: gast.Call) -> None:
        """``super()`` as ``super(__class__, <first parameter>)``, what Python reads for it:
        the statement may end up in a branch or loop function, whose own first parameter is
        not the method's. Only in a method defined in a class body (its qualified name says
        so), whose first positional parameter it is, and where ``super`` is Python's."""
        fn, info, qualname = self.function, self.ctx.info, self.ctx.qualname or ""
        owner, _, own_name = qualname.rpartition(".")
        if (
            type(fn) is not gast.FunctionDef
            or fn.name != own_name
            or not owner
            or owner.endswith("<locals>")
            or (info is not None and "super" in info.locals)
        ):
            return
        params = fn.args.posonlyargs + fn.args.args
        if not params:
            return
        node.args = [
            name("__class__", at=node),
            name(params[0].id, at=node),
        ]
