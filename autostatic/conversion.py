"""Convert one function: parse, analyze, transform, compile at the user's lines, rebuild.

The converted function has the original's name, docstring, defaults, globals and closure
cells; its code is compiled with the original file name and line numbers (tracebacks show
the user's lines) and ``__wrapped__`` points at the original (``inspect.getsource`` returns
the original source). Converted code objects are cached per original code object.
"""

from __future__ import annotations

import ast
import copy
import functools
import logging
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import gast

import autostatic_runtime.convert_ops as convert_ops
from autostatic import pyct
from autostatic.pyct import parser, templates
from autostatic.pyct.naming import Namer
from autostatic.transformers import PIPELINE
from autostatic.transformers.base import Context, clone
from autostatic.verbosity import _settings, set_code_level, set_verbosity  # noqa: F401
from autostatic_runtime.static.program import Variable

log = logging.getLogger("autostatic")
_FUTURE_FLAGS = 0x1000000 | 0x2000000 | 0x4000000 | 0x8000000  # __future__ compiler flags


@dataclass
class Converted:
    """The result of converting one code object."""

    code: types.CodeType
    node: gast.AST  # the converted function (``source`` unparses it on demand)
    jst: str  # the global name the runtime module is bound to
    sym: str  # the global name the Variable class is bound to
    stages: list  # transformer names, in order

    @functools.cached_property
    def source(self) -> str:
        """The converted function as readable source."""
        return _unparse(self.node)


_cache: weakref.WeakKeyDictionary | dict = {}


def _unparse(node: gast.AST) -> str:
    return ast.unparse(gast.gast_to_ast(node))


def convert_code(fn: types.FunctionType) -> Converted:
    """Convert ``fn``'s code (cached per code object)."""
    found = _cache.get(fn.__code__)
    if found is not None:
        return found
    src = parser.parse_function(fn)
    node = src.node
    if isinstance(node, gast.Lambda):
        node = _lambda_as_def(node)
    taken = set(fn.__globals__)
    if fn.__globals__.get("_jst") is convert_ops:  # reuse the module's alias
        taken.discard("_jst")
    if fn.__globals__.get("_jst_Variable") is Variable:
        taken.discard("_jst_Variable")
    namer = Namer.for_function(node, taken)
    jst = namer.reserve("_jst")
    sym = namer.reserve("_jst_Variable")
    node, stages = transform_function(node, namer, src.filename, jst, sym, fn.__qualname__)
    node.decorator_list = []
    code = _compile(node, fn, src.filename)
    converted = Converted(code=code, node=node, jst=jst, sym=sym, stages=stages)
    _cache[fn.__code__] = converted
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
) -> tuple[gast.FunctionDef, list]:
    """Convert one function node; returns the new node and the transformer names run.

    The new function runs its original body unless a static program is being built
    (``_jst.tracing and _jst.traces_here()``: this thread traces); only then does the
    converted body run::

        def f(x):
            \"""doc\"""
            if _jst.tracing and _jst.traces_here():
                <converted body>      # dual path: exact on Python values, ops on Variables
            else:
                <original body>       # eager calls pay one attribute test

    ``namer`` must know every name of the enclosing module (or function globals); ``jst``
    and ``sym`` are the global names bound to ``convert_ops`` and ``Variable``. With
    ``passes``, only the first ``passes`` transformers run and no switch is added (for
    showing the code after each stage).
    """
    original = _without_declarations(clone(node.body))
    ctx = Context(namer=namer, filename=filename, jst=jst, sym=sym)
    stages = []
    level = _settings["code_level"]
    for i, transformer in enumerate(PIPELINE[:passes], start=1):
        if transformer.needs_analysis and ctx.info is None:  # after the lowering passes
            ctx.info = _analyze(node)
        node = transformer.transform(node, ctx)
        if level and (i == level or level >= len(PIPELINE) and i == len(PIPELINE)):
            print(f"# autostatic: {qualname or node.name} after {transformer.__name__}")
            print(_unparse(node))
        stages.append(transformer.__name__)
    if passes is not None:
        return node, stages
    docstring = _docstring(original)
    converted = node.body
    if docstring and _docstring(converted):  # lowering passes may insert statements before it
        converted = converted[1:]
    switch = gast.If(
        test=templates.replace_expr("jst.tracing and jst.traces_here()", node, jst=jst),
        body=converted,
        orelse=original[1:] if docstring else original,
    )
    node.body = docstring + [gast.copy_location(switch, node)]
    return node, stages


class _DropDeclarations(gast.NodeTransformer):
    """Removes ``global``/``nonlocal`` of this scope (the converted copy, first, keeps them)."""

    def visit_Global(self, node):
        return gast.copy_location(gast.Pass(), node)

    visit_Nonlocal = visit_Global

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip


def _without_declarations(body: list) -> list:
    drop = _DropDeclarations()
    return [drop.visit(stmt) for stmt in body]


def _analyze(node: gast.FunctionDef):
    info = pyct.analyze(node)
    for sub in gast.walk(node):  # nested functions get their own analysis
        if sub is not node and isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef)):
            pyct.analyze(sub)
    return info


def _docstring(body: list) -> list:
    first = body[0] if body else None
    if (
        isinstance(first, gast.Expr)
        and isinstance(first.value, gast.Constant)
        and isinstance(first.value.value, str)
    ):
        return [first]
    return []


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


def _compile(node: gast.FunctionDef, fn: types.FunctionType, filename: str) -> types.CodeType:
    """Compile ``node`` so its free variables are exactly ``fn``'s, and return its code.

    The function is compiled under a name nothing else uses: under its own name, its branch
    functions would read a recursive call's name from the factory, not the module."""
    freevars = fn.__code__.co_freevars
    node = copy.copy(node)
    node.name = "__autostatic_converted__"
    inner: list = [node]
    if "__class__" in freevars:  # zero-argument super(): define it in a class body
        inner = [
            gast.ClassDef(
                name="__autostatic_class__",
                bases=[],
                keywords=[],
                body=inner,
                decorator_list=[],
                type_params=[],
            )
        ]
    params = [
        gast.Name(id=v, ctx=gast.Param(), annotation=None, type_comment=None)
        for v in freevars
        if v != "__class__"
    ]
    factory = gast.FunctionDef(
        name="__autostatic_factory__",
        args=gast.arguments(
            args=params,
            posonlyargs=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=inner,
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    module = gast.Module(body=[factory], type_ignores=[])
    tree = gast.gast_to_ast(module)
    ast.fix_missing_locations(tree)
    flags = fn.__code__.co_flags & _FUTURE_FLAGS
    module_code = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    return _find_code(module_code, node.name)


def _find_code(code: types.CodeType, name: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_name != "__autostatic_factory__":
                return const
            found = _find_code(const, name)
            if found is not None:
                return found
    return None


def rebuild(fn: types.FunctionType, converted: Converted) -> types.FunctionType:
    """A function running ``converted.code`` with ``fn``'s globals, closure and metadata."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(cells[v] for v in converted.code.co_freevars)
    code = converted.code.replace(co_name=fn.__code__.co_name, co_qualname=fn.__code__.co_qualname)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(new, fn)
    new.__autostatic_original__ = fn
    for alias, value in ((converted.jst, convert_ops), (converted.sym, Variable)):
        if fn.__globals__.setdefault(alias, value) is not value:
            raise RuntimeError(f"global name {alias!r} is taken in {fn.__module__}")
    return new


def convert_function(fn: Callable) -> Callable:
    """The converted form of a plain Python function (see ``autostatic.convert``)."""
    return rebuild(fn, convert_code(fn))
