"""The switch a marked module's entry checks read, without loading the runtime.

A module the import hook compiles starts with ``import autostatic_switch as __jst__``, and
each of its functions with ``if __jst__.tracing and __jst__.traces_here(): return
__jst__.traced()(<params>)``. This package imports nothing, so a marked module imports at
the cost of Python's own import: NumPy and the runtime load when the program loads them.

``tracing`` is True while any thread builds a program (``autostatic_runtime.mode`` keeps
it in step on every switch, ``rt.enable_static()`` included) or when
``AUTOSTATIC_FORCE_CONVERTED=1`` (read here, once, for the whole process). Once
``autostatic_runtime.convert_ops`` is loaded, ``traces_here`` and ``traced`` are its own
functions (it puts them here); before that, the ones below load it first.

PYTEST_DONT_REWRITE: pytest leaves this package's own asserts alone (its plugin is in it).
"""

from __future__ import annotations

import os
import sys

#: ``AUTOSTATIC_FORCE_CONVERTED=1`` (read at import): converted functions always run their
#: converted body, on Python values too (see docs/reliability.md).
FORCE_CONVERTED = os.environ.get("AUTOSTATIC_FORCE_CONVERTED", "").strip().lower() in (
    "1", "true", "yes", "on",
)  # fmt: skip

#: True while any thread builds a program (or forced): one attribute read on the eager path.
tracing = FORCE_CONVERTED


def traces_here() -> bool:
    """Whether the calling thread traces (the runtime's ``convert_ops.traces_here``)."""
    from autostatic_runtime import convert_ops  # (it puts its own functions here)

    return convert_ops.traces_here()


def traced(target=None):
    """The tracing function of the calling converted function (``convert_ops.traced``)."""
    from autostatic_runtime import convert_ops

    return convert_ops.traced(target, sys._getframe(1))
