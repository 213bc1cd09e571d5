"""Convert one function: parse, analyze, transform into its *tracing function*.

``transform_function`` runs the pipeline (``autostatic.transformers.PIPELINE``) on a
function node; ``autostatic.tracing_factory`` compiles the result at the user's file and
lines; ``autostatic.lazy`` builds it when tracing first reaches a function. ``convert_code``
converts a live function's source (for showing it and for benchmarks), cached per code
object.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import sys
import types
import weakref
from dataclasses import dataclass

import gast

from autostatic import pyct
from autostatic.pyct import anno, parser
from autostatic.pyct.census import Census
from autostatic.pyct.naming import Namer
from autostatic.pyct.nodes import child_nodes
from autostatic.pyct.to_gast import to_ast
from autostatic.pyct.unparse import unparse
from autostatic.transformers import PIPELINE
from autostatic.transformers.base import Context
from autostatic.verbosity import _settings, set_code_level, set_verbosity  # noqa: F401

log = logging.getLogger("autostatic")


@dataclass
class Converted:
    """The tracing function of one code object, as a node."""

    node: gast.AST  # the tracing function (``source`` unparses it on demand)
    jst: str  # the name the runtime module is bound to
    sym: str  # the name the Variable class is bound to
    stages: list  # transformer names, in order

    @functools.cached_property
    def source(self) -> str:
        """The tracing function as readable source."""
        return _unparse(self.node)


_cache: weakref.WeakKeyDictionary | dict = {}


def _unparse(node: gast.AST) -> str:
    with converting():
        return unparse(to_ast(node))


def convert_code(fn: types.FunctionType) -> Converted:
    """Convert ``fn``'s source into its tracing function's node (cached per code object)."""
    key = (fn.__code__, fn.__code__.co_filename)  # equal code objects of two files differ
    found = _cache.get(key)
    if found is not None:
        return found
    with converting():
        src = parser.parse_function(fn)
        node = src.node
        if isinstance(node, gast.Lambda):
            node = _lambda_as_def(node)
        census = Census.of(node)
        namer = Namer.for_function(census, set(fn.__globals__) | set(fn.__code__.co_freevars))
        jst = namer.reserve("_jst")
        sym = namer.reserve("_jst_Variable")
        node, stages = transform_function(
            node, namer, src.filename, jst, sym, fn.__qualname__, census=census
        )
    node.decorator_list = []
    converted = Converted(node=node, jst=jst, sym=sym, stages=stages)
    _cache[key] = converted
    if _settings["verbosity"]:
        log.info(
            "autostatic: converted %s (%s:%s)",
            fn.__qualname__,
            src.filename,
            fn.__code__.co_firstlineno,
        )
    return converted


def transform_function(
    node: gast.FunctionDef,
    namer: Namer,
    filename: str,
    jst: str = "_jst",
    sym: str = "_jst_Variable",
    qualname: str | None = None,
    passes: int | None = None,
    census: Census | None = None,
    source_hash: str | None = None,
) -> tuple[gast.FunctionDef, list]:
    """Convert one function node into its *tracing function*; returns the new node and the
    transformer names run. The node is changed in place.

    The tracing function runs the converted body: every ``if``/``while``/``for`` in dual form
    (the user's statement for Python values, an op for symbolic ones) and their branch
    functions defined once at its top. A converted function runs it only while a program is
    traced (its entry check; see ``autostatic.lazy``).

    ``namer`` must know every name of the enclosing module (or function globals); ``jst``
    and ``sym`` are the names bound to ``convert_ops`` and ``Variable``. With ``passes``, only
    the first ``passes`` transformers run (for showing the code after each stage).
    ``census`` is ``Census.of(node)`` when the caller has it already. ``source_hash`` (hex
    ``importlib.util.source_hash`` of the file ``node`` was parsed from): nested functions
    keep their bodies, converted on their own first trace (``transformers.nested_functions``);
    without it they are converted with ``node``.
    """
    with converting():
        census = census or Census.of(node)
        ctx = Context(
            namer=namer, filename=filename, jst=jst, sym=sym, census=census,
            qualname=qualname, source_hash=source_hash,
        )  # fmt: skip
        return _transform(node, ctx, qualname, passes)


@contextlib.contextmanager
def converting(limit: int = 20000):
    """Room for the recursive walks over deeply nested code (a chain of a few hundred early
    returns nests as deep as it is long), and no cyclic garbage collection meanwhile (a
    conversion makes thousands of short-lived nodes, sets and lists: the collector would run
    a dozen times and find almost nothing; it runs once afterwards instead). Both restored
    afterwards."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
        if collecting:
            gc.enable()


def _transform(node, ctx, qualname, passes):
    census = ctx.census
    stages = []
    analyzed = []
    level = _settings["code_level"]
    try:
        for i, transformer in enumerate(PIPELINE[:passes], start=1):
            if transformer.needs_analysis and ctx.info is None:  # after the lowering passes
                ctx.info = _analyze(node, census.closures, analyzed)
            if transformer.has_work(census):
                node = transformer.transform(node, ctx)
            if level and (i == level or level >= len(PIPELINE) and i == len(PIPELINE)):
                print(f"# autostatic: {qualname or node.name} after {transformer.__name__}")
                print(_unparse(node))
            stages.append(transformer.__name__)
    finally:
        _release(analyzed)
    return node, stages


def _analyze(node: gast.FunctionDef, nested: bool, analyzed: list):
    """The analysis of ``node``, and of its nested functions when it may have some (each
    analyzed function is added to ``analyzed``)."""
    info = pyct.analyze(node)
    analyzed.append(node)
    if not nested:
        return info
    for sub in _converted_defs(node):  # nested functions get their own analysis
        pyct.analyze(sub)
        analyzed.append(sub)
    return info


def _converted_defs(node: gast.FunctionDef) -> list:
    """The functions nested in ``node`` that are converted with it (not ``anno.LAZY``)."""
    found = []
    stack = child_nodes(node)
    while stack:
        sub = stack.pop()
        if isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef)):
            if anno.get(sub, anno.LAZY, False):
                continue
            found.append(sub)
        stack.extend(child_nodes(sub))
    return found


def _release(analyzed: list) -> None:
    """Drop the analyses of converted functions: the control-flow graph and the function's
    annotation are reference cycles (a node's ``next`` and ``prev``, the info and its node),
    which would leave the whole tree to the cyclic garbage collector; without them the tree
    is freed as soon as nobody holds it."""
    for node in analyzed:
        info = anno.get(node, anno.FUNCTION_INFO, None)
        if info is not None:
            if info.graph is not None:
                info.graph.release()
                info.graph = None
            anno.delete(node, anno.FUNCTION_INFO)


def _lambda_as_def(node: gast.Lambda) -> gast.FunctionDef:
    """``lambda args: expr`` as ``def __autostatic_lambda__(args): return expr``."""
    ret = gast.copy_location(gast.Return(value=node.body), node)
    fdef = gast.FunctionDef(
        name="__autostatic_lambda__",
        args=node.args,
        body=[ret],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return gast.copy_location(fdef, node)
