"""Activity analysis: which symbols each statement reads, modifies and deletes.

Every statement gets a :class:`Scope` under ``anno.SCOPE``; compound statements also get the
scopes of their parts (``TEST_SCOPE``, ``BODY_SCOPE``, ``ORELSE_SCOPE``, ``ITER_SCOPE``,
``TARGET_SCOPE``, ``ITEMS_SCOPE``, ``HANDLERS_SCOPE``, ``FINALLY_SCOPE``, ``SUBJECT_SCOPE``;
``ExceptHandler`` and ``match_case`` nodes get ``SCOPE``, ``BODY_SCOPE``, ``PATTERN_SCOPE``)::

    self.w[i] += x.t        read {self, self.w, i, x, x.t}   modified {self.w}
    del y                   read {y}   deleted {y}
    z = [v for v in (w := s)]   read {s}   modified/bound {z, w}   (v stays in the comprehension)
    def g(a=d): return a + e    read {d, e}   modified/bound {g}    (free variables are read here)

Symbols are strings (see :mod:`symbols`). Python's scoping rules are followed: comprehension
variables do not leak, a walrus binds in the enclosing function (PEP 572), nested functions and
classes read their free variables at the definition point, ``global``/``nonlocal`` names are
recorded on the :class:`FunctionInfo` (a Scope still lists them; ``locals`` does not).
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.scope import (  # noqa: F401 - Scope and FunctionInfo are re-exported
    EMPTY_SCOPE,
    FunctionInfo,
    Scope,
    param_names,
    unbind_scope,
    union,
)
from autostatic.pyct.symbols import base_name, base_symbol

_EMPTY: frozenset[str] = frozenset()
_ANNO = anno._ATTR

_Name, _Attribute, _Subscript = gast.Name, gast.Attribute, gast.Subscript
_Load, _Store, _Del = gast.Load, gast.Store, gast.Del
_Constant = gast.Constant
_LOCALS_BUILTINS = frozenset({"locals", "vars", "dir", "super"})


class _Acc:
    """Mutable accumulator for one Scope."""

    __slots__ = ("read", "modified", "deleted", "bound", "cond")

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.modified: set[str] = set()
        self.deleted: set[str] = set()
        self.bound: set[str] = set()
        self.cond: set[str] = set()

    def scope(self) -> Scope:
        if not (self.read or self.modified or self.deleted):
            return EMPTY_SCOPE
        e = _EMPTY
        return Scope(
            frozenset(self.read) if self.read else e,
            frozenset(self.modified) if self.modified else e,
            frozenset(self.deleted) if self.deleted else e,
            frozenset(self.bound) if self.bound else e,
            frozenset(self.cond) if self.cond else e,
        )


def _free(read: frozenset[str] | set[str], local: set[str] | frozenset[str]) -> set[str]:
    return {s for s in read if base_name(s) not in local}


class _Walker:
    """Computes the Scopes of one function (or class) body, annotating its statements."""

    def __init__(self, in_class: bool = False) -> None:
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.declared: set[str] = set()  # made local by a bare annotation `x: int`
        self.captured: set[str] = set()  # symbols read by closures created here
        self.has_yield = False
        self.has_await = False
        self.uses_locals = False
        self.in_class = in_class
        self.cond = 0  # > 0 while walking code that may not run (walrus is conditional)
        self.builtin_tests: list = []  # ifs on ``isinstance(...)`` and the like (``analyze``)

    # ---- statements ---------------------------------------------------------------------------

    def block(self, stmts: list[gast.stmt]) -> Scope:
        if len(stmts) == 1:
            return self.stmt(stmts[0])
        return union([self.stmt(s) for s in stmts])

    def stmt(self, node: gast.stmt) -> Scope:
        scope = _STMT.get(type(node), _Walker._simple)(self, node)
        d = node.__dict__
        a = d.get(_ANNO)
        if a is None:
            d[_ANNO] = {anno.SCOPE: scope}
        else:
            a[anno.SCOPE] = scope
        return scope

    def _simple(self, node: gast.stmt) -> Scope:
        acc = _Acc()
        for f in _children(type(node)):
            self._field(getattr(node, f), acc)
        return acc.scope()

    def _nothing(self, node: gast.stmt) -> Scope:
        return EMPTY_SCOPE

    def _expr_stmt(self, node: gast.Expr) -> Scope:
        acc = _Acc()
        self.expr(node.value, acc)
        return acc.scope()

    def _assign(self, node: gast.Assign) -> Scope:
        acc = _Acc()
        self.expr(node.value, acc)
        for t in node.targets:
            self.expr(t, acc)
        return acc.scope()

    def _aug_assign(self, node: gast.AugAssign) -> Scope:
        acc = _Acc()
        self.expr(node.value, acc)
        t = node.target
        if type(t) is _Name:
            acc.read.add(t.id)
            self._bind(t.id, acc)
        elif type(t) is _Attribute:
            sym = self._load_chain(t, acc)
            if sym is not None:
                acc.modified.add(sym)
            else:
                self._mutates(t.value, acc)
        else:
            self.expr(t, acc)  # subscript store: reads base and index, modifies the base
        return acc.scope()

    def _ann_assign(self, node: gast.AnnAssign) -> Scope:
        acc = _Acc()
        if self.in_class:
            self.expr(node.annotation, acc)  # evaluated in class bodies, not in functions
        t = node.target
        if node.value is not None:
            self.expr(node.value, acc)
            self.expr(t, acc)
        elif type(t) is _Name:
            self.declared.add(t.id)
        else:
            self.expr(t.value, acc)  # `a.b: int` evaluates `a` but assigns nothing
        return acc.scope()

    def _assert(self, node: gast.Assert) -> Scope:
        acc = _Acc()
        self.cond += 1  # stripped under -O: a walrus in it may not bind
        self.expr(node.test, acc)
        if node.msg is not None:
            self.expr(node.msg, acc)
        self.cond -= 1
        return acc.scope()

    def _import(self, node: gast.Import | gast.ImportFrom) -> Scope:
        acc = _Acc()
        for a in node.names:
            if a.asname is not None:
                self._bind(a.asname, acc)
            elif a.name != "*":
                self._bind(a.name.partition(".")[0], acc)
        return acc.scope()

    def _global(self, node: gast.Global) -> Scope:
        self.globals.update(node.names)
        return EMPTY_SCOPE

    def _nonlocal(self, node: gast.Nonlocal) -> Scope:
        self.nonlocals.update(node.names)
        return EMPTY_SCOPE

    def _if(self, node: gast.If | gast.While) -> Scope:
        if type(node) is gast.If and python_bool(node.test, BOOL_BUILTINS):
            if python_bool(node.test):
                anno.set(node, anno.PYTHON_IF, True)
            else:  # (once the function's own names are known: ``analyze``)
                self.builtin_tests.append(node)
        acc = _Acc()
        self.expr(node.test, acc)
        test = acc.scope()
        body = self.block(node.body)
        orelse = self.block(node.orelse) if node.orelse else EMPTY_SCOPE
        anno.set(node, anno.TEST_SCOPE, test)
        anno.set(node, anno.BODY_SCOPE, body)
        anno.set(node, anno.ORELSE_SCOPE, orelse)
        return union([test, body, orelse])

    def _for(self, node: gast.For | gast.AsyncFor) -> Scope:
        if type(node) is gast.AsyncFor:
            self.has_await = True
        acc = _Acc()
        self.expr(node.iter, acc)
        it = acc.scope()
        acc = _Acc()
        self.expr(node.target, acc)
        target = acc.scope()
        body = self.block(node.body)
        orelse = self.block(node.orelse) if node.orelse else EMPTY_SCOPE
        anno.set(node, anno.ITER_SCOPE, it)
        anno.set(node, anno.TARGET_SCOPE, target)
        anno.set(node, anno.BODY_SCOPE, body)
        anno.set(node, anno.ORELSE_SCOPE, orelse)
        return union([it, target, body, orelse])

    def _with(self, node: gast.With | gast.AsyncWith) -> Scope:
        if type(node) is gast.AsyncWith:
            self.has_await = True
        acc = _Acc()
        for item in node.items:
            self.expr(item.context_expr, acc)
            if item.optional_vars is not None:
                self.expr(item.optional_vars, acc)
        items = acc.scope()
        body = self.block(node.body)
        anno.set(node, anno.ITEMS_SCOPE, items)
        anno.set(node, anno.BODY_SCOPE, body)
        return union([items, body])

    def _try(self, node: gast.Try) -> Scope:
        body = self.block(node.body)
        handlers = union([self._handler(h) for h in node.handlers])
        orelse = self.block(node.orelse) if node.orelse else EMPTY_SCOPE
        final = self.block(node.finalbody) if node.finalbody else EMPTY_SCOPE
        anno.set(node, anno.BODY_SCOPE, body)
        anno.set(node, anno.HANDLERS_SCOPE, handlers)
        anno.set(node, anno.ORELSE_SCOPE, orelse)
        anno.set(node, anno.FINALLY_SCOPE, final)
        return union([body, handlers, orelse, final])

    def _handler(self, node: gast.ExceptHandler) -> Scope:
        acc = _Acc()
        if node.type is not None:
            self.expr(node.type, acc)
        if node.name is not None:
            self.expr(node.name, acc)  # a Store Name in gast
        head = acc.scope()
        body = self.block(node.body)
        scope = union([head, body, unbind_scope(node)])
        anno.set(node, anno.PATTERN_SCOPE, head)
        anno.set(node, anno.BODY_SCOPE, body)
        anno.set(node, anno.SCOPE, scope)
        return scope

    def _match(self, node: gast.Match) -> Scope:
        acc = _Acc()
        self.expr(node.subject, acc)
        subject = acc.scope()
        anno.set(node, anno.SUBJECT_SCOPE, subject)
        parts = [subject]
        for case in node.cases:
            acc = _Acc()
            self._pattern(case.pattern, acc)
            if case.guard is not None:
                self.expr(case.guard, acc)
            pattern = acc.scope()
            body = self.block(case.body)
            scope = union([pattern, body])
            anno.set(case, anno.PATTERN_SCOPE, pattern)
            anno.set(case, anno.BODY_SCOPE, body)
            anno.set(case, anno.SCOPE, scope)
            parts.append(scope)
        return union(parts)

    def _pattern(self, p: gast.pattern, acc: _Acc) -> None:
        t = type(p)
        if t is gast.MatchValue:
            self.expr(p.value, acc)
        elif t is gast.MatchAs or t is gast.MatchStar:
            if getattr(p, "pattern", None) is not None:
                self._pattern(p.pattern, acc)
            if p.name is not None:
                self._bind(p.name, acc)
        elif t is gast.MatchMapping:
            for k in p.keys:
                self.expr(k, acc)
            for sub in p.patterns:
                self._pattern(sub, acc)
            if p.rest is not None:
                self._bind(p.rest, acc)
        elif t is gast.MatchClass:
            self.expr(p.cls, acc)
            for sub in p.patterns + p.kwd_patterns:
                self._pattern(sub, acc)
        elif t is gast.MatchSequence or t is gast.MatchOr:
            for sub in p.patterns:
                self._pattern(sub, acc)

    def _funcdef(self, node: gast.FunctionDef) -> Scope:
        acc = _Acc()
        for d in node.decorator_list:
            self.expr(d, acc)
        self._signature(node.args, acc)
        if node.returns is not None:
            self.expr(node.returns, acc)
        inner = _Walker()
        body = inner.block(node.body)
        local = set(param_names(node.args)) | body.bound | inner.declared
        local -= inner.nonlocals
        local |= inner.globals  # not ours either: exclude from the free variables
        free = _free(body.read, local) | inner.nonlocals
        anno.set(node, anno.BODY_SCOPE, body)
        acc.read |= free
        self.captured |= free
        self._bind(node.name, acc)
        return acc.scope()

    def _classdef(self, node: gast.ClassDef) -> Scope:
        acc = _Acc()
        for e in node.decorator_list + node.bases:
            self.expr(e, acc)
        for k in node.keywords:
            self.expr(k.value, acc)
        inner = _Walker(in_class=True)
        bound: set[str] = set()
        free: set[str] = set()
        scopes = []
        for s in node.body:  # a name read before the class body binds it is an outer read
            sc = inner.stmt(s)
            scopes.append(sc)
            free |= _free(sc.read, bound)
            bound |= sc.bound
        free |= inner.captured  # methods skip the class scope
        anno.set(node, anno.BODY_SCOPE, union(scopes))
        acc.read |= free
        self.captured |= inner.captured
        self._bind(node.name, acc)
        return acc.scope()

    def _signature(self, args: gast.arguments, acc: _Acc) -> None:
        """Reads at definition time: defaults and annotations."""
        for d in args.defaults:
            self.expr(d, acc)
        for d in args.kw_defaults:
            if d is not None:
                self.expr(d, acc)
        for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
            if a is not None and a.annotation is not None:
                self.expr(a.annotation, acc)

    # ---- expressions --------------------------------------------------------------------------

    def _bind(self, name: str, acc: _Acc) -> None:
        acc.bound.add(name)
        acc.modified.add(name)
        if self.cond:
            acc.cond.add(name)

    def _field(self, v: object, acc: _Acc) -> None:
        if v is None:
            return
        if type(v) is list:
            for c in v:
                if c is not None:
                    self.expr(c, acc)
        else:
            self.expr(v, acc)

    def expr(self, node: gast.expr, acc: _Acc) -> None:
        """Accumulate the activity of ``node`` (Load, Store or Del context) into ``acc``."""
        t = type(node)
        if t is _Name:
            ctx = type(node.ctx)
            if ctx is _Load:
                acc.read.add(node.id)
            elif ctx is _Store:
                self._bind(node.id, acc)
            elif ctx is _Del:
                acc.read.add(node.id)
                acc.deleted.add(node.id)
            return
        if t is _Constant:
            return
        if t is _Attribute:
            self._attribute(node, acc)
            return
        handler = _EXPR.get(t)
        if handler is not None:
            handler(self, node, acc)
            return
        for f in _children(t):
            v = getattr(node, f)
            if v is None:
                continue
            if type(v) is list:
                for c in v:
                    if c is not None:
                        self.expr(c, acc)
            else:
                self.expr(v, acc)

    def _load_chain(self, node: gast.expr, acc: _Acc) -> str | None:
        """Read ``node`` and return its symbol (None if it is not a name/attribute chain)."""
        t = type(node)
        if t is _Name:
            acc.read.add(node.id)
            return node.id
        if t is _Attribute:
            base = self._load_chain(node.value, acc)
            if base is None:
                return None
            sym = f"{base}.{node.attr}"
            acc.read.add(sym)
            return sym
        self.expr(node, acc)
        return None

    def _mutates(self, obj: gast.expr, acc: _Acc) -> None:
        sym = base_symbol(obj)
        if sym is not None:
            acc.modified.add(sym)

    def _attribute(self, node: gast.Attribute, acc: _Acc) -> None:
        ctx = type(node.ctx)
        if ctx is _Load:
            self._load_chain(node, acc)
            return
        base = self._load_chain(node.value, acc)
        if base is None:
            self._mutates(node.value, acc)  # `a[i].x = v` mutates a
            return
        sym = f"{base}.{node.attr}"
        if ctx is _Store:
            acc.modified.add(sym)
        else:
            acc.read.add(sym)
            acc.deleted.add(sym)

    def _subscript(self, node: gast.Subscript, acc: _Acc) -> None:
        self.expr(node.value, acc)
        self.expr(node.slice, acc)
        if type(node.ctx) is not _Load:
            self._mutates(node.value, acc)

    def _binop(self, node: gast.BinOp, acc: _Acc) -> None:
        self.expr(node.left, acc)
        self.expr(node.right, acc)

    def _compare(self, node: gast.Compare, acc: _Acc) -> None:
        self.expr(node.left, acc)
        for c in node.comparators:
            self.expr(c, acc)

    def _unary(self, node: gast.UnaryOp, acc: _Acc) -> None:
        self.expr(node.operand, acc)

    def _elts(self, node: gast.Tuple | gast.List | gast.Set, acc: _Acc) -> None:
        for e in node.elts:
            self.expr(e, acc)

    def _named(self, node: gast.NamedExpr, acc: _Acc) -> None:
        self.expr(node.value, acc)
        self._bind(node.target.id, acc)

    def _boolop(self, node: gast.BoolOp, acc: _Acc) -> None:
        values = node.values
        self.expr(values[0], acc)
        self.cond += 1
        for v in values[1:]:
            self.expr(v, acc)
        self.cond -= 1

    def _ifexp(self, node: gast.IfExp, acc: _Acc) -> None:
        self.expr(node.test, acc)
        self.cond += 1
        self.expr(node.body, acc)
        self.expr(node.orelse, acc)
        self.cond -= 1

    def _call(self, node: gast.Call, acc: _Acc) -> None:
        f = node.func
        if type(f) is _Name:
            acc.read.add(f.id)
            fid = f.id
            if fid in _LOCALS_BUILTINS:
                if not node.args and not node.keywords:
                    self.uses_locals = True
            elif fid == "exec" or fid == "eval":
                self.uses_locals = True
        else:
            self.expr(f, acc)
        for a in node.args:
            self.expr(a, acc)
        for k in node.keywords:
            self.expr(k.value, acc)

    def _yield(self, node: gast.Yield | gast.YieldFrom, acc: _Acc) -> None:
        self.has_yield = True
        if node.value is not None:
            self.expr(node.value, acc)

    def _await(self, node: gast.Await, acc: _Acc) -> None:
        self.has_await = True
        self.expr(node.value, acc)

    def _lambda(self, node: gast.Lambda, acc: _Acc) -> None:
        self._signature(node.args, acc)
        inner = _Walker()
        sub = _Acc()
        inner.expr(node.body, sub)
        free = _free(sub.read, set(param_names(node.args)) | sub.bound)
        acc.read |= free
        self.captured |= free

    def _comprehension(self, node: gast.expr, acc: _Acc) -> None:
        gens = node.generators
        self.expr(gens[0].iter, acc)  # the first iterable is evaluated outside
        sub = _Acc()
        own: set[str] = set()
        self.cond += 1
        for i, g in enumerate(gens):
            self._comp_target(g.target, sub, own)
            if i:
                self.expr(g.iter, sub)
            for c in g.ifs:
                self.expr(c, sub)
            if g.is_async:
                self.has_await = True
        t = type(node)
        if t is gast.DictComp:
            self.expr(node.key, sub)
            self.expr(node.value, sub)
        else:
            self.expr(node.elt, sub)
        self.cond -= 1
        read = _free(sub.read, own)
        acc.read |= read
        acc.modified |= _free(sub.modified, own)
        acc.deleted |= sub.deleted
        acc.bound |= sub.bound  # walrus targets: bound in the enclosing function
        acc.cond |= sub.bound
        if t is gast.GeneratorExp:
            self.captured |= read  # evaluated lazily, like a closure

    def _comp_target(self, node: gast.expr, acc: _Acc, own: set[str]) -> None:
        t = type(node)
        if t is _Name:
            own.add(node.id)
        elif t is gast.Tuple or t is gast.List:
            for e in node.elts:
                self._comp_target(e, acc, own)
        elif t is gast.Starred:
            self._comp_target(node.value, acc, own)
        else:
            self.expr(node, acc)


_SKIP_FIELDS = frozenset(
    {"ctx", "op", "ops", "type_comment", "conversion", "kind", "is_async", "level", "attr"}
    | {"id", "name", "names", "module", "arg", "simple", "type_params", "kwd_attrs"}
)
_CHILDREN: dict[type, tuple[str, ...]] = {}


def _children(t: type) -> tuple[str, ...]:
    fields = _CHILDREN.get(t)
    if fields is None:
        fields = _CHILDREN[t] = tuple(f for f in t._fields if f not in _SKIP_FIELDS)
    return fields


_STMT = {
    gast.Expr: _Walker._expr_stmt,
    gast.Assign: _Walker._assign,
    gast.AugAssign: _Walker._aug_assign,
    gast.AnnAssign: _Walker._ann_assign,
    gast.Return: _Walker._simple,
    gast.Delete: _Walker._simple,
    gast.Raise: _Walker._simple,
    gast.Assert: _Walker._assert,
    gast.Pass: _Walker._nothing,
    gast.Break: _Walker._nothing,
    gast.Continue: _Walker._nothing,
    gast.Import: _Walker._import,
    gast.ImportFrom: _Walker._import,
    gast.Global: _Walker._global,
    gast.Nonlocal: _Walker._nonlocal,
    gast.If: _Walker._if,
    gast.While: _Walker._if,
    gast.For: _Walker._for,
    gast.AsyncFor: _Walker._for,
    gast.With: _Walker._with,
    gast.AsyncWith: _Walker._with,
    gast.Try: _Walker._try,
    gast.TryStar: _Walker._try,
    gast.Match: _Walker._match,
    gast.FunctionDef: _Walker._funcdef,
    gast.AsyncFunctionDef: _Walker._funcdef,
    gast.ClassDef: _Walker._classdef,
}

_EXPR = {
    _Subscript: _Walker._subscript,
    gast.BinOp: _Walker._binop,
    gast.Compare: _Walker._compare,
    gast.UnaryOp: _Walker._unary,
    gast.Tuple: _Walker._elts,
    gast.List: _Walker._elts,
    gast.Set: _Walker._elts,
    gast.NamedExpr: _Walker._named,
    gast.BoolOp: _Walker._boolop,
    gast.IfExp: _Walker._ifexp,
    gast.Call: _Walker._call,
    gast.Yield: _Walker._yield,
    gast.YieldFrom: _Walker._yield,
    gast.Await: _Walker._await,
    gast.Lambda: _Walker._lambda,
    gast.ListComp: _Walker._comprehension,
    gast.SetComp: _Walker._comprehension,
    gast.DictComp: _Walker._comprehension,
    gast.GeneratorExp: _Walker._comprehension,
}


def analyze(node: gast.AST) -> FunctionInfo:
    """Annotate every statement of a function (not of nested ones) with its Scopes.

    Nested function and class bodies are walked too (for their free variables), and their
    statements get ``SCOPE`` annotations, but they get no FunctionInfo of their own: call
    ``analyze`` on them for that.

    Args:
        node: a FunctionDef, AsyncFunctionDef or Lambda.

    Returns:
        The FunctionInfo (without ``graph``).
    """
    walker = _Walker()
    params = param_names(node.args)
    if type(node) is gast.Lambda:
        acc = _Acc()
        walker.expr(node.body, acc)
        body = acc.scope()
    else:
        body = walker.block(node.body)
    anno.set(node, anno.BODY_SCOPE, body)
    info = FunctionInfo(node, params, walker, body)
    if walker.builtin_tests:  # ``isinstance`` and the like: the builtins, unless bound here
        own = info.locals | info.globals | info.nonlocals
        if own.isdisjoint(BOOL_BUILTINS):
            for stmt in walker.builtin_tests:
                anno.set(stmt, anno.PYTHON_IF, True)
    return info


_PYTHON_BOOL_OPS = (gast.In, gast.NotIn, gast.Is, gast.IsNot)


#: builtins whose result is a Python bool (``isinstance`` of a symbolic tensor too)
BOOL_BUILTINS = frozenset({"isinstance", "issubclass", "hasattr", "callable"})


def python_bool(test: gast.expr, builtins: frozenset = frozenset()) -> bool:
    """Whether ``test`` is always a Python bool, whatever its operands are: ``in``/``is``
    comparisons (Python makes their result a bool), ``==``/``!=`` against a string or bytes
    constant (a tensor compared with one is a bool too), calls of the names in ``builtins``
    (when they are those builtins), and ``not``/``and``/``or`` of those. An ``if`` on one
    stays the user's statement: no branch functions."""
    kind = type(test)
    if kind is gast.Call:
        func = test.func
        return type(func) is gast.Name and func.id in builtins
    if kind is gast.Compare:
        if all(type(op) in _PYTHON_BOOL_OPS for op in test.ops):
            return True
        return len(test.ops) == 1 and type(test.ops[0]) in (gast.Eq, gast.NotEq) and any(
            type(side) is gast.Constant and type(side.value) in (str, bytes)
            for side in (test.left, test.comparators[0])
        )
    if kind is gast.BoolOp:
        return all(python_bool(v, builtins) for v in test.values)
    if kind is gast.UnaryOp and type(test.op) is gast.Not:
        return python_bool(test.operand, builtins)
    return False
