"""``if``/``while``/``for``: each statement once as the user wrote it, once as a functional form.

Every convertible statement ``S`` gets:

- its *branch functions* (``true_fn``/``false_fn``, ``loop_cond``/``loop_body``), defined once
  at the top of the converted body (``hoisted``); their bodies hold the *functional forms* of
  the statements inside ``S``;
- a *dual form* ``D(S)`` where ``S`` appears in the user's code: one type test picks the
  functional call for a symbolic condition, else the user's own statement runs inline (its
  inner statements in dual form)::

      if (__pred_0 := x.mean() > 0).__class__ is _jst_Variable:
          (y,) = _jst.convert_ifelse(__pred_0, __true_fn_1, __false_fn_2, (x,), ('y',), where)
      elif __pred_0:
          y = relu(x)            # exactly the user's statement: frames, closures, del, try
      else:
          y = x - 1

- a *functional form* ``F(S)`` (just the call) where ``S`` sits inside another statement's
  branch function.

Each statement thus appears twice (inline, and in its parent's branch function) whatever
the nesting depth: converted code grows linearly with the source. The builders live in
``ifelse.py``, ``loops.py`` and ``for_loops.py``; this pass walks the blocks bottom-up and
hands each builder the dual and functional forms of the statement's blocks.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.templates import copy_location
from autostatic.transformers.base import (
    _BLOCK_FIELDS,
    _BLOCKS,
    Transformer,
    _block_fields,
    _node,
    docstring,
    shallow,
)
from autostatic.transformers.for_loops import build_for
from autostatic.transformers.ifelse import build_if
from autostatic.transformers.loops import build_while


class ControlFlowTransformer(Transformer):
    """Dual and functional forms of ``if``/``while``/``for`` (see the module docstring)."""

    statements_only = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.hoisted: list = []  # branch functions of the function being converted

    def visit_FunctionDef(self, node: gast.FunctionDef):
        if anno.get(node, anno.GENERATED, False) or anno.get(node, anno.LAZY, False):
            return node
        info = anno.get(node, anno.FUNCTION_INFO, None)
        saved = self.ctx.info, self.protected, self.function, self._captured, self.hoisted
        if info is not None:
            self.ctx.info = info
        self.protected, self.function, self._captured, self.hoisted = 0, node, None, []
        try:
            if info is not None and (info.globals or info.nonlocals):
                _declarations_first(node)
            dual, _ = self.block(node.body, functional=False)
            doc = docstring(dual)
            node.body = doc + self.hoisted + dual[len(doc) :]
        finally:
            self.ctx.info, self.protected, self.function, self._captured, self.hoisted = saved
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- blocks --------------------------------------------------------------------------
    def block(self, stmts: list, functional: bool = True) -> tuple[list, list]:
        """(dual form, functional form) of a block; the functional one only if asked."""
        dual, func = [], []
        for stmt in stmts:
            d, f = self.statement(stmt, functional)
            dual += d
            func += f
        if stmts and not dual:  # only dead flags: the Python statement needs a body
            dual = _pass(stmts)
        return dual, func

    def statement(self, stmt: gast.stmt, functional: bool) -> tuple[list, list]:
        kind = type(stmt)
        if kind in (gast.FunctionDef, gast.AsyncFunctionDef):
            self.visit_FunctionDef(stmt)
            return [stmt], [stmt]
        if kind is gast.ClassDef:
            self._class_body(stmt)
            return [stmt], [stmt]
        if kind is gast.If and not (
            anno.get(stmt, anno.PYTHON_IF, False) or anno.get(stmt, anno.BREAK_CHECK, None)
        ):
            return build_if(self, stmt)
        if kind is gast.While:
            return build_while(self, stmt)
        if kind is gast.For:
            return build_for(self, stmt)
        blocks = _BLOCK_FIELDS.get(kind)
        if blocks is None:
            blocks = _block_fields(kind)
        if not blocks:  # a simple statement
            if kind is gast.Assign and self._dead_flag(stmt):
                return [], []
            return [stmt], [stmt]
        return self._compound(stmt, functional)

    def _dead_flag(self, stmt: gast.Assign) -> bool:
        """Whether ``stmt`` sets a return/break/continue flag nothing reads afterwards (the
        early-return lowering moved the code it guarded into the other branch). Only a jump
        (``flag = True``): a flag's ``= False`` binds it, and the functional forms may pass
        it on where the analysis saw it bound even when Python never reads that value."""
        (target,) = stmt.targets if len(stmt.targets) == 1 else (None,)
        if type(target) is not gast.Name or target.id not in self.ctx.jump_flags:
            return False
        if not (type(stmt.value) is gast.Constant and stmt.value.value is True):
            return False
        live = anno.get(stmt, anno.LIVE_OUT, None)
        return live is not None and target.id not in live

    def _compound(self, stmt: gast.stmt, functional: bool) -> tuple[list, list]:
        """A statement with blocks that is not converted itself (try, with, a Python-only
        if, async for, match): its blocks in dual form, and a copy with functional ones."""
        protects = isinstance(stmt, (gast.Try, gast.TryStar, gast.With, gast.AsyncWith))
        self.protected += protects
        try:
            copy_ = shallow(stmt) if functional else None
            for field in _BLOCKS:
                block = getattr(stmt, field, None)
                if type(block) is not list:
                    continue
                if field in ("handlers", "cases"):
                    duals, funcs = [], []
                    for clause in block:
                        d_clause, f_clause = shallow(clause), shallow(clause)
                        d_clause.body, f_clause.body = self.block(clause.body, functional)
                        f_clause.body = f_clause.body or _pass(clause.body)  # never empty: a body
                        duals.append(d_clause)
                        funcs.append(f_clause)
                    setattr(stmt, field, duals)
                    if functional:
                        setattr(copy_, field, funcs)
                    continue
                d, f = self.block(block, functional)
                setattr(stmt, field, d if d or not block else _pass(block))  # dead flags
                if functional:
                    setattr(copy_, field, f if f or not block else _pass(block))  # dead flags
        finally:
            self.protected -= protects
        return [stmt], [copy_] if functional else []

    def _class_body(self, node: gast.ClassDef) -> None:
        for stmt in node.body:
            if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
                self.visit_FunctionDef(stmt)

    def hoist(self, fn: gast.FunctionDef | gast.Assign) -> str:
        """Define ``fn`` (a ``def``, or ``name = lambda ...``) once, at the top of the
        converted function; returns its name."""
        self.hoisted.append(fn)
        return fn.name if isinstance(fn, gast.FunctionDef) else fn.targets[0].id


def _declarations_first(node: gast.FunctionDef) -> None:
    """Move the function's ``global``/``nonlocal`` statements to the top of its body (after
    the docstring), as one of each: they hold for the whole function wherever written, and a
    branch or loop function that carries such a name takes it as a parameter, so it must
    not find the declaration copied into its body."""
    found: dict[type, list] = {gast.Global: [], gast.Nonlocal: []}

    def strip(block: list) -> list:
        kept = []
        for stmt in block:
            kind = type(stmt)
            if kind in found:
                found[kind] += [n for n in stmt.names if n not in found[kind]]
                continue
            if kind not in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
                for field in _BLOCKS:
                    inner = getattr(stmt, field, None)
                    if type(inner) is not list:
                        continue
                    if field in ("handlers", "cases"):
                        for clause in inner:
                            clause.body = strip(clause.body) or _pass(clause.body)
                    elif inner:
                        setattr(stmt, field, strip(inner) or _pass(inner))
            kept.append(stmt)
        return kept

    body = strip(node.body)
    decls = [
        copy_location(_node(kind, names=names), node.body[0])
        for kind, names in found.items()
        if names
    ]
    doc = docstring(body)
    node.body = doc + decls + (body[len(doc) :] or _pass(node.body))


def _pass(stmts: list) -> list:
    """``[pass]`` at the first statement's line (a block whose statements all went away)."""
    return [copy_location(_node(gast.Pass), stmts[0])]
