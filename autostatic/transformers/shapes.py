"""``x.shape`` reads: ``_jst.convert_shape(x)``, so unknown dims are runtime values.

Before::

    n, d = x.shape
    y = x.reshape([n, d * 2])

After::

    n, d = _jst.convert_shape(x)
    y = x.reshape([n, d * 2])

On anything but a symbolic tensor ``convert_shape(x)`` is ``x.shape``. For a symbolic one it
is a list with a Python int for each dim known while building and a 0-D int32 tensor (the
dim's value when the program runs) for each unknown (-1) dim. Only loads are rewritten
(``x.shape = ...`` and ``del x.shape`` stay), and not a called ``.shape`` (``np.shape(a)``).
"""

from __future__ import annotations

import gast

from autostatic.pyct.origin import copy_location_deep
from autostatic.transformers.base import Transformer, _node


class ShapeTransformer(Transformer):
    """Rewrites ``.shape`` loads (see the module docstring)."""

    @classmethod
    def has_work(cls, census) -> bool:
        return "shape" in census.attrs

    def visit_Call(self, node: gast.Call):
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "shape":
            func.value = self.visit(func.value)  # the callee stays an attribute
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        return self.generic_visit(node)

    def visit_Attribute(self, node: gast.Attribute):
        self.generic_visit(node)
        if node.attr != "shape" or not isinstance(node.ctx, gast.Load):
            return node
        call = _node(gast.Call, func=self.jst("convert_shape"), args=[node.value], keywords=[])
        return copy_location_deep(call, node)
