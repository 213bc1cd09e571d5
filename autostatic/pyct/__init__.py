"""pyct: a tensor-free toolkit over gast ASTs (parsing, annotations, dataflow analyses).

``analyze(func_node)`` runs everything on one function and annotates its statements::

    src = parser.parse_function(fn)
    info = analyze(src.node)
    anno.get(src.node.body[2], anno.LIVE_OUT)      # frozenset of live symbols

Pipeline: activity (read/modified sets) -> cfg -> liveness -> reaching definitions.
Nested functions are not analyzed as functions (their free variables are reads at the
definition point); call ``analyze`` on them when needed.
"""

from __future__ import annotations

import gc

import gast

from autostatic.pyct import activity, anno, cfg, liveness, reaching_defs
from autostatic.pyct.errors import PyctError, SourceUnavailableError
from autostatic.pyct.scope import FunctionInfo, Scope

__all__ = [
    "FunctionInfo",
    "PyctError",
    "Scope",
    "SourceUnavailableError",
    "analyze",
    "anno",
]


def analyze(func_node: gast.AST, *, with_suppress: bool = True) -> FunctionInfo:
    """Run all analyses on a FunctionDef / AsyncFunctionDef / Lambda and annotate it.

    Args:
        func_node: the function; its nested functions are only walked, not analyzed.
        with_suppress: whether a ``with`` may swallow exceptions (see ``cfg.build``).

    Returns:
        The FunctionInfo, with ``graph`` set; also stored as ``anno.FUNCTION_INFO`` on
        ``func_node``.
    """
    enabled = gc.isenabled()
    gc.disable()  # thousands of short-lived containers: the cyclic GC would run several times
    try:
        info = activity.analyze(func_node)
        graph = info.graph = cfg.build(func_node, with_suppress)
        liveness.analyze(graph, info)
        reaching_defs.analyze(graph, info)
    finally:
        if enabled:
            gc.enable()
    anno.set(func_node, anno.FUNCTION_INFO, info)
    return info
