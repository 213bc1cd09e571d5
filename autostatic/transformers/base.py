"""What every transformer shares: the conversion context and helpers over gast nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gast

from autostatic.pyct import anno
from autostatic.pyct.naming import Namer
from autostatic.pyct.nodes import _fields as _FIELDS
from autostatic.pyct.nodes import child_nodes, node_fields, walk
from autostatic.pyct.templates import LOAD, _at, constant, name, replace


@dataclass
class Context:
    """One function's conversion: names, file, the runtime alias, analysis results."""

    namer: Namer
    filename: str
    jst: str  # the module alias of autostatic_runtime.convert_ops in generated code
    sym: str  # the global bound to the Variable class (the symbolic-value check)
    census: Any = None  # pyct Census of the function (what its source holds)
    info: Any = None  # pyct FunctionInfo
    notes: list = field(default_factory=list)
    jump_flags: set = field(default_factory=set)  # flags the lowering passes set on a jump
    temporaries: set = field(default_factory=set)  # walrus temporaries: set, then read at once
    qualname: str | None = None  # the function's ``__qualname__``
    source_hash: str | None = None  # hex ``source_hash`` of its file (keys nested functions)


class Transformer(gast.NodeTransformer):
    """Base class: ``transform(node, ctx)`` runs the pass on a function node.

    Passes with ``needs_analysis = False`` rewrite statements before the dataflow analysis
    runs (the lowering passes); the others read its annotations.
    """

    needs_analysis = True
    statements_only = False  # True: visit statement blocks only, never expressions (faster)

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.protected = 0  # depth of try/with blocks around the current statement
        self.function: gast.AST | None = None  # the user function being visited
        self._captured: tuple | None = None  # what its closures use (computed lazily)

    _dispatch: dict = {}  # node class -> the function visiting it (one dict per subclass)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def visit(self, node: gast.AST):
        """``visit_<Class>`` or ``generic_visit``, looked up once per class (kept as plain
        functions: bound methods kept on the instance would make a reference cycle)."""
        function = self._dispatch.get(node.__class__)
        if function is None:
            function = self._visitor(node.__class__)
        return function(self, node)

    @classmethod
    def _visitor(cls, kind: type):
        """The function visiting ``kind`` (``visit``'s lookup, remembered in ``_dispatch``)."""
        function = getattr(cls, "visit_" + kind.__name__, cls.generic_visit)
        if kind is gast.FunctionDef:
            function = _unless_lazy(function)
        cls._dispatch[kind] = function
        return function

    def generic_visit(self, node: gast.AST) -> gast.AST:
        if not self.statements_only:
            return self._visit_fields(node)
        kind = node.__class__
        fields = _BLOCK_FIELDS.get(kind)
        if fields is None:
            fields = _block_fields(kind)
        for block_name in fields:
            block = node.__dict__.get(block_name)
            if type(block) is not list:
                continue
            out = []
            for stmt in block:
                result = self.visit(stmt)
                if isinstance(result, list):
                    out.extend(result)
                elif result is not None:
                    out.append(result)
            setattr(node, block_name, out)
        return node

    def _visit_fields(self, node: gast.AST) -> gast.AST:
        """``NodeTransformer.generic_visit``, without its generators (the passes' hot loop),
        over the fields that may hold nodes (not ``ctx``: no pass rewrites a context)."""
        fields = _FIELDS.get(node.__class__)
        if fields is None:
            fields = node_fields(node.__class__)
        values = node.__dict__  # (gast's classes have no defaults for fields)
        dispatch = self._dispatch  # (``visit`` inline: a call less per node)
        for name_ in fields:
            old = values.get(name_)
            if type(old) is list:
                new_values = []
                changed = False
                for value in old:
                    if isinstance(value, gast.AST):
                        function = dispatch.get(value.__class__)
                        if function is None:
                            function = self._visitor(value.__class__)
                        new = function(self, value)
                        if new is not value:
                            changed = True
                            if new is None:
                                continue
                            if not isinstance(new, gast.AST):
                                new_values.extend(new)
                                continue
                        new_values.append(new)
                    else:
                        new_values.append(value)
                if changed:
                    old[:] = new_values
            elif isinstance(old, gast.AST):
                function = dispatch.get(old.__class__)
                if function is None:
                    function = self._visitor(old.__class__)
                new = function(self, old)
                if new is None:
                    delattr(node, name_)
                elif new is not old:
                    setattr(node, name_, new)
        return node

    @classmethod
    def transform(cls, node: gast.AST, ctx: Context) -> gast.AST:
        return cls(ctx).visit(node)

    def visit_Constant(self, node: gast.Constant) -> gast.Constant:
        return node  # nothing under it (and not ``ast.NodeVisitor``'s compatibility shim)

    def visit_Name(self, node: gast.Name) -> gast.AST:
        return node if node.annotation is None else self.generic_visit(node)  # (a parameter's)

    @classmethod
    def has_work(cls, census) -> bool:
        """Whether the function (its ``Census``) holds anything this pass rewrites."""
        return True

    def visit_FunctionDef(self, node: gast.FunctionDef):
        """Nested functions are converted too, with their own analysis."""
        info = anno.get(node, anno.FUNCTION_INFO, None)
        saved = self.ctx.info, self.protected, self.function, self._captured
        if info is not None:
            self.ctx.info = info
        if not anno.get(node, anno.GENERATED, False):
            self.protected, self.function, self._captured = 0, node, None
        try:
            self.generic_visit(node)
        finally:
            self.ctx.info, self.protected, self.function, self._captured = saved
        return node

    @property
    def captured(self) -> tuple[set[str], set[str]]:
        """(names the current function's closures use, names they rebind): see
        ``captured_names``."""
        census = self.ctx.census
        if census is not None and not census.closures:
            return (set(), set())
        if self._captured is None and self.function is not None:
            self._captured = anno.get(self.function, anno.CAPTURED, None)
            if self._captured is None:  # user closures do not change between passes
                self._captured = captured_names(self.function)
                anno.set(self.function, anno.CAPTURED, self._captured)
        return self._captured or (set(), set())

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Try(self, node: gast.AST):
        self.protected += 1
        try:
            self.generic_visit(node)
        finally:
            self.protected -= 1
        return node

    visit_TryStar = visit_With = visit_AsyncWith = visit_Try

    # -- helpers ---------------------------------------------------------------------------
    def temporary(self, prefix: str) -> str:
        """A new name for a value an expression binds (``:=``) and reads right away: never
        a branch output or a loop variable."""
        tmp = self.ctx.namer.new(prefix)
        self.ctx.temporaries.add(tmp)
        return tmp

    def jst(self, attr: str) -> gast.Attribute:
        return _node(gast.Attribute, value=name(self.ctx.jst), attr=attr, ctx=LOAD)

    def jst_call(self, function: str, args: list, origin: gast.AST) -> gast.Expr:
        """``_jst.function(args...)`` as a statement at ``origin``'s first line: what the
        template ``jst.function(...)`` makes, without copying ``args`` (fresh nodes, or names
        given as ``str``)."""
        line = getattr(origin, "lineno", None)
        if line is None:
            origin, at = None, _at(None)
        else:
            col = getattr(origin, "col_offset", 0)
            at = {"lineno": line, "col_offset": col, "end_lineno": line, "end_col_offset": col}
        args = [name(a, at=origin) if type(a) is str else _located(a, at) for a in args]
        func = _node(gast.Attribute, value=name(self.ctx.jst, at=origin), attr=function, ctx=LOAD)
        call = _node(gast.Call, func=func, args=args, keywords=[])
        expr = _node(gast.Expr, value=call)
        for node in (func, call, expr):
            node.__dict__.update(at)
        return expr

    def is_symbolic(self, value: gast.expr, negate: bool = False) -> gast.Compare:
        """``value.__class__ is <Variable>``: the ~20 ns test that picks the path."""
        cls = _node(gast.Attribute, value=value, attr="__class__", ctx=LOAD)
        op = _node(gast.IsNot if negate else gast.Is)
        return _node(gast.Compare, left=cls, ops=[op], comparators=[name(self.ctx.sym)])

    def location(self, node: gast.AST) -> gast.Constant:
        """``(file, line, '')``: one constant (a tuple of constants is one node)."""
        return constant((self.ctx.filename, node.lineno, ""))

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

    def blocked(
        self, node: gast.AST, jumps: list, modified: set[str], what: str, hints: tuple[str, str]
    ) -> list | None:
        """Statements raising a clear error when ``node``'s symbolic path is impossible (a
        jump left in ``jumps``, or an attribute or undeclared non-local among ``modified``),
        else None. ``what`` names the statement ("an 'if'"); ``hints`` end the jump and assign
        errors."""
        census = self.ctx.census
        jump = find_jump(jumps, statements_only=census is not None and not census.yields)
        if jump is not None:
            kind = type(jump).__name__.lower()
            return self.unsupported(
                f"'{kind}' inside {what} whose condition is a tensor is not supported yet "
                f"(line {jump.lineno}){hints[0]}",
                node,
            )
        attrs = sorted(modified - bare(modified))
        outer = sorted(
            m for m in bare(modified) if not self.is_local(m) and not self.is_declared(m)
        )
        if attrs or outer:
            return self.unsupported(
                f"assigning '{(attrs or outer)[0]}' inside {what} whose condition is a tensor "
                f"is not supported yet; {hints[1]}",
                node,
            )
        return None

    def unbind(self, names: list[str], origin: gast.AST) -> list[gast.stmt]:
        """``if x is _jst.UNDEFINED: del x`` for each name: a shared functional form leaves
        a variable unbound exactly where the user's code would."""
        stmts = []
        for n in names:
            stmts += replace("if v is jst.UNDEFINED:\n    del v", origin, v=n, jst=self.ctx.jst)
        return stmts

    def rebound_by_calls(self, stmts: list) -> set[str] | frozenset[str]:
        """Locals a closure rebinds (``nonlocal``) that a call in ``stmts`` may change: a
        branch or loop body that calls such a closure outputs them too."""
        census = self.ctx.census
        if census is not None and not census.closures:
            return _NONE
        rebound = {n for n in self.captured[1] if self.is_local(n)}
        if not rebound:
            return _NONE
        for stmt in stmts:
            if any(isinstance(n, gast.Call) for n in walk(stmt)):
                return rebound
        return _NONE

    def bound_value(self, symbol: str, default: gast.expr) -> gast.expr | None:
        """``jst.builtins.locals().get('symbol', default)``: the local's value, or ``default``
        where it is unbound (one expression instead of a ``try``/``except NameError``). None
        for a name declared ``global``, which ``locals()`` does not hold."""
        info = self.ctx.info
        if info is not None and symbol in info.globals:
            return None
        snapshot = _node(gast.Call,
            func=_node(gast.Attribute, value=self.jst("builtins"), attr="locals", ctx=LOAD),
            args=[],
            keywords=[],
        )
        get = _node(gast.Attribute, value=snapshot, attr="get", ctx=LOAD)
        return _node(gast.Call, func=get, args=[constant(symbol), default], keywords=[])

    def is_local(self, symbol: str) -> bool:
        info = self.ctx.info
        return symbol in info.locals and symbol not in info.globals and symbol not in info.nonlocals

    def is_declared(self, symbol: str) -> bool:
        """Whether ``symbol`` is declared ``global`` or ``nonlocal`` in the function: a tensor
        ``if`` or loop that assigns it carries it as a local (its functions take and give
        it), and the assignment after the op sets the module's (or enclosing) variable."""
        info = self.ctx.info
        return info is not None and (symbol in info.globals or symbol in info.nonlocals)


def shallow(node: gast.AST) -> gast.AST:
    """``copy.copy(node)`` (the same fields and annotations), without the copy protocol."""
    kind = node.__class__
    new = kind.__new__(kind)
    new.__dict__.update(node.__dict__)
    return new


def _node(kind: type, **fields) -> gast.AST:
    """``kind(**fields)`` without gast's generic constructor (``fields``, a new dict, is the
    node's dict)."""
    node = kind.__new__(kind)
    node.__dict__ = fields
    return node


def _located(node: gast.AST, at: dict) -> gast.AST:
    """``node``, given the location ``at`` when it has none."""
    values = node.__dict__
    if at and values.get("lineno") is None and "lineno" in node._attributes:
        values.update(at)
    return node


def scope_of(node: gast.AST, key: str):
    return anno.get(node, key, None)


def names_in(scope: Any, kind: str) -> frozenset[str]:
    """The symbols of ``kind`` in ``scope`` (its own frozenset: not a copy)."""
    return getattr(scope, kind, _NONE) if scope is not None else _NONE


_NONE: frozenset = frozenset()


def stored_names(stmts: list) -> set[str]:
    """The names ``stmts`` bind or delete in their own function (assignment and loop targets,
    ``:=``, ``del``...; nested functions, lambdas and classes aside)."""
    found = set()
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            if type(node) is not gast.Lambda:
                found.add(node.name)  # (a def binds its name)
            continue
        kind = type(node)
        if kind is gast.Name:
            if type(node.ctx) is not gast.Load:
                found.add(node.id)
            continue
        if kind is gast.alias:
            found.add(node.asname or node.name.partition(".")[0])
        elif kind in (gast.MatchAs, gast.MatchStar) and node.name:
            found.add(node.name)
        elif kind is gast.MatchMapping and node.rest:
            found.add(node.rest)
        for name_ in node._fields:
            value = getattr(node, name_, None)
            if type(value) is list:
                stack.extend(v for v in value if isinstance(v, gast.AST))
            elif isinstance(value, gast.AST):
                stack.append(value)
    return found


def bare(symbols: set[str]) -> set[str]:
    """Plain variable names (no ``a.b`` attribute chains)."""
    return {s for s in symbols if "." not in s}


def clone(node: Any) -> Any:
    """A deep copy of AST nodes (or lists of them); annotations are shared, not copied.
    Context nodes (``Load``...) hold nothing and are shared too."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, _AST):
        return node
    return _clone(node)


def _clone(node: gast.AST) -> gast.AST:
    kind = node.__class__
    plan = _clones.get(kind)
    if plan is None:
        plan = _clones[kind] = _clone_plan(kind)
    fields, children, defaults = plan
    source = node.__dict__
    values = {f: source.get(f) for f in fields}  # each field, None when missing
    for name_ in children:  # (the fields that may hold nodes: copied deep)
        value = values[name_]
        if value.__class__ is list:
            values[name_] = [_clone(v) if isinstance(v, _AST) else v for v in value]
        elif isinstance(value, _AST) and not isinstance(value, _CONTEXT):
            values[name_] = _clone(value)
    for attr, default in defaults:
        value = source.get(attr, default)
        if value is not _MISSING:  # (many of gast's classes default the ends to None)
            values[attr] = value
    annotations = source.get("_as_anno")
    if annotations is not None:
        values["_as_anno"] = dict(annotations)
    new = kind.__new__(kind)
    new.__dict__ = values
    return new


_clones: dict = {}  # node class -> (fields, fields that may hold nodes, (attribute, default))


def _clone_plan(kind: type) -> tuple:
    children = tuple(f for f in kind._fields if f in node_fields(kind) or f == "ctx")
    defaults = tuple((a, getattr(kind, a, _MISSING)) for a in kind._attributes)
    return kind._fields, children, defaults


_AST, _CONTEXT = gast.AST, gast.expr_context
_MISSING = object()


_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
def _unless_lazy(visit):
    """``visit`` for a def, except a nested def kept as written (``anno.LAZY``)."""

    def visit_def(self, node):
        return node if anno.get(node, anno.LAZY, False) else visit(self, node)

    return visit_def


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # fields holding statements
_EXITS = (gast.Return, gast.Yield, gast.YieldFrom, gast.Await)
_CLOSURES = _SCOPES + (gast.GeneratorExp,)  # list/set/dict comprehensions run at once


def blocks_of(node: gast.AST) -> list:
    """The statements (and ``except``/``case`` clauses) directly in ``node``'s blocks."""
    kind = node.__class__
    fields = _BLOCK_FIELDS.get(kind)
    if fields is None:
        fields = _block_fields(kind)
    out = []
    if fields:
        values = node.__dict__
        for block_name in fields:
            block = values.get(block_name)
            if type(block) is list:
                out.extend(block)
    return out


_BLOCK_FIELDS: dict = {}  # node class -> those of _BLOCKS among its fields


def _block_fields(kind: type) -> tuple:
    fields = _BLOCK_FIELDS[kind] = tuple(f for f in _BLOCKS if f in kind._fields)
    return fields


def captured_names(fn: gast.AST) -> tuple[set[str], set[str]]:
    """(names used inside the nested scopes of ``fn`` that may run later -- functions,
    lambdas, classes, generator expressions --, the names they rebind in ``fn``: ``nonlocal``
    ones and ``:=`` targets). The converter's own generated functions do not count."""
    used: set[str] = set()
    rebound: set[str] = set()
    stack = [(fn, False)]  # (no recursive closure: it would be a reference cycle)
    while stack:
        node, inside = stack.pop()
        for child in child_nodes(node):
            scope = isinstance(child, _CLOSURES) and not anno.get(child, anno.GENERATED, False)
            if inside or scope:
                if isinstance(child, gast.Name):
                    used.add(child.id)
                elif isinstance(child, gast.Nonlocal):
                    rebound.update(child.names)
                elif isinstance(child, gast.NamedExpr) and isinstance(child.target, gast.Name):
                    rebound.add(child.target.id)
            stack.append((child, inside or scope))
    return used, rebound


def find_jump(stmts: list, statements_only: bool = False) -> gast.AST | None:
    """The first node in ``stmts`` that leaves them early: ``return``/``yield``/``await``
    anywhere, or a ``break``/``continue`` not inside a loop of their own (nested function
    bodies excluded). Each statement's answer is remembered on it (nested code is walked
    once). ``statements_only``: the function has no ``yield``/``await``, so only statements
    can jump (expressions are not walked)."""
    for stmt in stmts:
        found = _jumps_of(stmt, statements_only)[0]
        if found is not None:
            return found
    return None


def _jumps_of(stmt: gast.AST, statements_only: bool = False) -> tuple:
    """(the first jump leaving ``stmt``, the first return/yield/await anywhere in it)."""
    values = stmt.__dict__
    if statements_only and stmt.__class__ not in _JUMPING:
        fields = _BLOCK_FIELDS.get(stmt.__class__)
        if fields is None:
            fields = _block_fields(stmt.__class__)
        if not fields:  # a simple statement that is no jump: nothing to walk or remember
            return _NO_JUMP
    known = values.get("_as_anno")
    known = known.get(anno.JUMPS) if known is not None else None
    if known is not None:
        return known
    found = [None, None]
    children = blocks_of if statements_only else child_nodes
    stack = [(stmt, 0)]  # depth-first, in source order (no recursive closure: no cycle)
    while stack:
        node, loop_depth = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if node is not stmt and isinstance(node, gast.stmt):
            jump, exit_ = _jumps_of(node, statements_only)
            mine = jump if loop_depth == 0 else exit_
            found[0] = found[0] or mine
            found[1] = found[1] or exit_
            continue
        if isinstance(node, _EXITS):
            found[0] = found[0] or node
            found[1] = found[1] or node
            continue
        if isinstance(node, (gast.Break, gast.Continue)) and loop_depth == 0:
            found[0] = found[0] or node
            continue
        is_loop = isinstance(node, (gast.While, gast.For, gast.AsyncFor))
        orelse = {id(s) for s in node.orelse} if is_loop else ()
        for child in reversed(children(node)):
            inner = is_loop and id(child) not in orelse
            stack.append((child, loop_depth + 1 if inner else loop_depth))
    result = tuple(found)
    if stmt not in result:  # a jump's own answer is itself: not kept (a reference cycle)
        anno.set(stmt, anno.JUMPS, result)
    return result


_JUMPING = {gast.Return, gast.Break, gast.Continue}  # statements that jump themselves
_NO_JUMP = (None, None)


def docstring(body: list) -> list:
    first = body[0] if body else None
    if (
        isinstance(first, gast.Expr)
        and isinstance(first.value, gast.Constant)
        and isinstance(first.value.value, str)
    ):
        return [first]
    return []
