"""What every transformer shares: the conversion context and helpers over gast nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gast

from autostatic.pyct import anno
from autostatic.pyct.naming import Namer
from autostatic.pyct.templates import constant, name, replace


@dataclass
class Context:
    """One function's conversion: names, file, the runtime alias, analysis results."""

    namer: Namer
    filename: str
    jst: str  # the module alias of autostatic_runtime.convert_ops in generated code
    sym: str  # the global bound to the Variable class (the symbolic-value check)
    info: Any = None  # pyct FunctionInfo
    notes: list = field(default_factory=list)
    jump_flags: set = field(default_factory=set)  # flags the lowering passes set on a jump


class Transformer(gast.NodeTransformer):
    """Base class: ``transform(node, ctx)`` runs the pass on a function node.

    Passes with ``needs_analysis = False`` rewrite statements before the dataflow analysis
    runs (the lowering passes); the others read its annotations.
    """

    needs_analysis = True

    def __init__(self, ctx: Context):
        self.ctx = ctx

    @classmethod
    def transform(cls, node: gast.AST, ctx: Context) -> gast.AST:
        return cls(ctx).visit(node)

    def visit_FunctionDef(self, node: gast.FunctionDef):
        """Nested functions are converted too, with their own analysis."""
        info = anno.get(node, anno.FUNCTION_INFO, None)
        saved = self.ctx.info
        if info is not None:
            self.ctx.info = info
        try:
            self.generic_visit(node)
        finally:
            self.ctx.info = saved
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- helpers ---------------------------------------------------------------------------
    def jst(self, attr: str) -> gast.Attribute:
        return gast.Attribute(value=name(self.ctx.jst), attr=attr, ctx=gast.Load())

    def is_symbolic(self, value: gast.expr, negate: bool = False) -> gast.Compare:
        """``value.__class__ is <Variable>``: the ~20 ns test that picks the path."""
        cls = gast.Attribute(value=value, attr="__class__", ctx=gast.Load())
        op = gast.IsNot() if negate else gast.Is()
        return gast.Compare(left=cls, ops=[op], comparators=[name(self.ctx.sym)])

    def location(self, node: gast.AST) -> gast.Tuple:
        """``(file, line, '')`` as a constant tuple expression."""
        return gast.Tuple(
            elts=[constant(self.ctx.filename), constant(node.lineno), constant("")], ctx=gast.Load()
        )

    def unsupported(self, what: str, node: gast.AST) -> list[gast.stmt]:
        """Statements that raise a clear error when the symbolic path reaches ``node``."""
        return replace(
            "raise jst.unsupported(message, where)",
            node,
            jst=name(self.ctx.jst),
            message=constant(what),
            where=self.location(node),
        )

    def jumps(self, stmts: list) -> bool:
        """Whether ``stmts`` end in a lowered ``return``/``break``/``continue`` (they set a
        jump flag at their top level): outputs they leave unset are never read after."""
        return any(
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in self.ctx.jump_flags
            and isinstance(s.value, gast.Constant)
            and s.value.value is True
            for s in stmts
        )

    def is_local(self, symbol: str) -> bool:
        info = self.ctx.info
        return symbol in info.locals and symbol not in info.globals and symbol not in info.nonlocals


def scope_of(node: gast.AST, key: str):
    return anno.get(node, key, None)


def names_in(scope: Any, kind: str) -> set[str]:
    return set(getattr(scope, kind, ())) if scope is not None else set()


def bare(symbols: set[str]) -> set[str]:
    """Plain variable names (no ``a.b`` attribute chains)."""
    return {s for s in symbols if "." not in s}


def clone(node: Any) -> Any:
    """A deep copy of AST nodes (or lists of them); annotations are shared, not copied."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = node.__class__.__new__(node.__class__)
    for name_ in node._fields:
        setattr(new, name_, clone(getattr(node, name_, None)))
    for attr in node._attributes:
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    annotations = node.__dict__.get("_as_anno")
    if annotations is not None:
        new.__dict__["_as_anno"] = dict(annotations)
    return new


_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_EXITS = (gast.Return, gast.Yield, gast.YieldFrom, gast.Await)


def find_jump(stmts: list) -> gast.AST | None:
    """The first node in ``stmts`` that leaves them early: ``return``/``yield``/``await``
    anywhere, or a ``break``/``continue`` not inside a loop of their own (nested function
    bodies excluded)."""

    def visit(node: gast.AST, loop_depth: int) -> gast.AST | None:
        if isinstance(node, _SCOPES):
            return None
        if isinstance(node, _EXITS):
            return node
        if isinstance(node, (gast.Break, gast.Continue)) and loop_depth == 0:
            return node
        is_loop = isinstance(node, (gast.While, gast.For, gast.AsyncFor))
        orelse = {id(s) for s in node.orelse} if is_loop else ()
        for child in gast.iter_child_nodes(node):
            depth = loop_depth + 1 if is_loop and id(child) not in orelse else loop_depth
            found = visit(child, depth)
            if found is not None:
                return found
        return None

    for stmt in stmts:
        found = visit(stmt, 0)
        if found is not None:
            return found
    return None
