"""The logical and call rewrites in one walk over the function.

They rewrite different kinds of node (``and``/``or``/``not`` and ternaries: ``logical``;
calls and converted builtins: ``calls``), so one walk does both, each node rewritten after
its children: a ternary's arms are copied with their calls rewritten already, and the calls
the logical rewrite makes itself (``_jst.convert_and``...) are the converter's own, which the
call rewrite leaves alone anyway.
"""

from __future__ import annotations

from autostatic.transformers.calls import CallTransformer
from autostatic.transformers.logical import LogicalTransformer


class ExpressionTransformer(LogicalTransformer, CallTransformer):
    """``LogicalTransformer`` and ``CallTransformer`` in one walk (see the module docstring)."""
