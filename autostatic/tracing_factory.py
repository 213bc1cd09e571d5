"""Compile a converted function into a *factory* of its tracing function.

``tracing_node`` converts a function node (``conversion.transform_function``) into its
tracing function; ``tracing_factory`` compiles that at the user's file and lines inside a
factory that closes over the user function's free variables and takes the runtime module and
the ``Variable`` class as parameters, so nothing is written into the user's module.

A factory's code, for ``def f(x): ...`` in class ``Net`` with free variables ``w``::

    class Net:                                   # names mangle as in the user's class
        def __autostatic_outer__(w):             # only makes ``w`` a free variable
            def __autostatic_factory__(_jst, _jst_Variable):
                def f(x):                        # the tracing function, at the user's lines
                    <converted body>
                return f
    # tracing_factory returns the code of __autostatic_factory__ (co_freevars: w, __class__...)
"""

from __future__ import annotations

import ast
import types

import gast

from autostatic.conversion import converting, transform_function
from autostatic.pyct.census import Census
from autostatic.pyct.naming import Namer
from autostatic.pyct.to_gast import as_ast
from autostatic.transformers.base import clone

__all__ = ["tracing_factory", "tracing_node"]

FACTORY = "__autostatic_factory__"
TRACING = "__autostatic_tracing__"
_OUTER = "__autostatic_outer__"


def tracing_node(
    node: gast.FunctionDef,
    *,
    filename: str,
    qualname: str,
    taken: set[str],
    passes: int | None = None,
    copy: bool = True,
    census: Census | None = None,
    source_hash: str | None = None,
    names: tuple[str, str] | None = None,
) -> tuple[gast.FunctionDef, str, str]:
    """The tracing function of ``node`` as a new node (``node`` is not changed), and the names
    its code gives the runtime module and the ``Variable`` class (``jst``, ``sym``).

    The tracing function has ``node``'s signature (no decorators) and the converted body. With
    ``passes``, the body after the first ``passes`` transformers. ``copy=False``: convert
    ``node`` itself (a tree nobody else holds), changing it. ``census``: ``Census.of(node)``
    when the caller has it. ``source_hash``: of the file, for the nested functions' entry
    checks (``transform_function``). ``names``: (``jst``, ``sym``) to use instead of the ones
    picked (a module's own aliases, not in ``taken``); the other names are the same either way.
    """
    if copy:
        node = clone(node)
    if isinstance(node, gast.Lambda):
        from autostatic.conversion import _lambda_as_def

        node = _lambda_as_def(node)
        census = None  # (the def's own census: its name is new)
    census = census or Census.of(node)
    namer = Namer.for_function(census, set(taken))
    jst = namer.reserve("_jst")
    sym = namer.reserve("_jst_Variable")
    if names is not None:
        jst, sym = names
    new, _ = transform_function(
        node, namer, filename, jst, sym, qualname, passes, census, source_hash
    )
    new.decorator_list = []
    return new, jst, sym


def _bare_signature(fdef: gast.FunctionDef) -> None:
    """No defaults, annotations or decorators: the caller of a tracing function passes every
    argument, and they must not be evaluated again when it is built."""
    fdef.decorator_list = []
    fdef.returns = None
    args = fdef.args
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None


class _HiddenLocals(ast.NodeTransformer):
    def __init__(self, hidden: tuple):
        self.hidden = hidden

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in ("locals", "vars")
            and not node.args
            and not node.keywords
        ):
            items = ast.Call(
                func=ast.Attribute(value=node, attr="items", ctx=ast.Load()), args=[], keywords=[]
            )
            k, v = ast.Name(id="k", ctx=ast.Store()), ast.Name(id="v", ctx=ast.Store())
            new = ast.DictComp(
                key=ast.Name(id="k", ctx=ast.Load()),
                value=ast.Name(id="v", ctx=ast.Load()),
                generators=[
                    ast.comprehension(
                        target=ast.Tuple(elts=[k, v], ctx=ast.Store()),
                        iter=items,
                        ifs=[
                            ast.Compare(
                                left=ast.Name(id="k", ctx=ast.Load()),
                                ops=[ast.NotIn()],
                                comparators=[ast.Constant(self.hidden)],
                            )
                        ],
                        is_async=0,
                    )
                ],
            )
            return _located(new, node)
        return node

    def visit_FunctionDef(self, node):  # nested functions: only those that use the names
        return self.generic_visit(node)


def _located(new: ast.AST, origin: ast.AST) -> ast.AST:
    """``new`` and its nodes without a location at ``origin``'s (the tree is compiled as it
    is: ``ast.fix_missing_locations`` does not run)."""
    at = {a: getattr(origin, a) for a in ("lineno", "col_offset", "end_lineno", "end_col_offset")}
    for sub in ast.walk(new):
        if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
            for attr, value in at.items():
                setattr(sub, attr, value)
    return new


def _generated_names(fdef: ast.FunctionDef, user: set) -> list[str]:
    """The names the converter bound in ``fdef`` (flags, predicates, branch functions): those
    not among the ``user`` function's names (the converter picks names free of them)."""
    found = set()
    for sub in ast.walk(fdef):
        if type(sub) is ast.Name and type(sub.ctx) is ast.Store and sub.id not in user:
            found.add(sub.id)
        elif type(sub) is ast.FunctionDef and sub is not fdef and sub.name not in user:
            found.add(sub.name)
    return sorted(found)


def _hide_from_locals(fdef: ast.FunctionDef, hidden: tuple) -> None:
    """``locals()``/``vars()`` in the tracing function must not list the factory's parameters
    (free variables of the tracing function): filter them out where they are called."""
    _HiddenLocals(hidden).visit(fdef)


def mangling_class(qualname: str) -> str | None:
    """The class whose name mangles ``__x`` in the function ``qualname`` (innermost), if any."""
    parts = qualname.split(".")[:-1]
    found = None
    for i, part in enumerate(parts):
        if part != "<locals>" and not (i + 1 < len(parts) and parts[i + 1] == "<locals>"):
            found = part
    return found


def factory_module(
    fdef: ast.FunctionDef, jst: str, sym: str, qualname: str, freevars: tuple[str, ...]
) -> ast.Module:
    """The module around ``fdef`` that makes ``freevars`` free and ``__x`` mangle as the user's.
    Every node of ``fdef`` must have its location (its own nodes are at line 1)."""

    def function(name, params, body):
        return ast.FunctionDef(
            name=name,
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=p, **_LINE_1) for p in params],
                vararg=None,
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=None,
                defaults=[],
            ),
            body=body,
            decorator_list=[],
            returns=None,
            type_params=[],
            **_LINE_1,
        )

    result = ast.Name(id=fdef.name, ctx=ast.Load(), **_LINE_1)
    inner = function(FACTORY, [jst, sym], [fdef, ast.Return(value=result, **_LINE_1)])
    outer: ast.stmt = function(_OUTER, [v for v in freevars if v != "__class__"], [inner])
    cls = mangling_class(qualname)
    if cls is not None or "__class__" in freevars:
        # outermost, so the class name is not a variable the function could close over (a
        # method naming its own class reads the module's global, as in the user's class)
        outer = ast.ClassDef(
            name=cls or "__autostatic_class__",
            bases=[],
            keywords=[],
            body=[outer],
            decorator_list=[],
            type_params=[],
            **_LINE_1,
        )
    return ast.Module(body=[outer], type_ignores=[])


#: where the factory module's own nodes are (``fdef`` is located already: the module is
#: compiled without ``ast.fix_missing_locations``, which would walk the whole tree)
_LINE_1 = {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 0}


def find_factory(code: types.CodeType) -> types.CodeType:
    """The code of ``__autostatic_factory__`` inside a compiled ``factory_module``."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == FACTORY:
                return const
            found = find_factory(const)
            if found is not None:
                return found
    return None


def compile_factory(
    fdef: ast.FunctionDef,
    jst: str,
    sym: str,
    *,
    filename: str,
    qualname: str,
    freevars: tuple[str, ...],
    flags: int,
) -> types.CodeType:
    """Compile ``fdef`` (an ``ast`` node) into a factory's code (see the module docstring)."""
    name = fdef.name
    fdef.name = TRACING  # its own name must stay the module's global inside its body
    module = factory_module(fdef, jst, sym, qualname, freevars)
    code = find_factory(compile(module, filename, "exec", flags=flags, dont_inherit=True))
    consts = tuple(
        c.replace(co_name=name, co_qualname=qualname)
        if isinstance(c, types.CodeType) and c.co_name == TRACING
        else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def tracing_factory(
    node: gast.FunctionDef,
    *,
    filename: str,
    qualname: str,
    freevars: tuple[str, ...],
    flags: int,
    taken: set[str],
    copy: bool = True,
    source_hash: str | None = None,
) -> types.CodeType:
    """Code of a factory function. Its co_freevars are a subset of ``freevars`` (map cells by
    name using ``code.co_freevars``); it takes two parameters (the convert_ops module and the
    Variable class) and returns the tracing function: the original's parameters (without
    defaults and annotations: its caller passes every argument),
    body = the converted (dual-path) body, compiled at the user's file and lines.
    ``copy=False``: convert ``node`` itself (a tree nobody else holds), using it up."""
    with converting():  # deeply nested code: gast -> ast and compile recurse too
        # the trees are made and dropped inside (freed before the collector runs again)
        fdef, jst, sym = tracing_tree(
            node, filename=filename, qualname=qualname, freevars=freevars, taken=taken,
            copy=copy, source_hash=source_hash,
        )  # fmt: skip
        return compile_factory(
            fdef, jst, sym, filename=filename, qualname=qualname, freevars=freevars, flags=flags
        )


def tracing_tree(
    node: gast.FunctionDef,
    *,
    filename: str,
    qualname: str,
    freevars: tuple[str, ...],
    taken: set[str],
    copy: bool = True,
    source_hash: str | None = None,
) -> tuple[ast.FunctionDef, str, str]:
    """The tracing function of ``node`` as ``ast`` (every node located: at the user's
    line, or at its parent's) and its names for the runtime module and ``Variable``."""
    census = Census.of(node)  # (a copy has the same)
    # whether the user's function names ``locals`` or ``vars`` (converted code calls neither
    # by name: found in the user's tree, not in the larger converted one)
    names_locals = "locals" in census.names or "vars" in census.names
    fdef, jst, sym = tracing_node(
        node, filename=filename, qualname=qualname, taken=set(taken) | set(freevars),
        copy=copy, census=census, source_hash=source_hash,
    )  # fmt: skip
    _bare_signature(fdef)
    tree = as_ast(fdef)  # (the converted gast tree is used up)
    if names_locals:
        _hide_from_locals(tree, (jst, sym, *_generated_names(tree, census.names)))
    return tree, jst, sym
