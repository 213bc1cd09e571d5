"""Early ``return``: one exit per function, so a ``return`` can sit in a tensor-dependent branch.

Before::

    def f(x):
        if x.mean() > 0:
            return x * 2
        y = x - 1
        return y

After (the converted body; the original body is untouched)::

    def f(x):
        __do_return_0 = False
        __retval_1 = _jst.UNDEFINED
        if x.mean() > 0:
            __retval_1 = x * 2
            __do_return_0 = True
        if not __do_return_0:
            y = x - 1
            __retval_1 = y
            __do_return_0 = True
        return __retval_1

Statements after one that may return run under ``if not <flag>``, up to the next one that may
return: its own guard follows at the same level (a flat sequence of guards, not a nested
chain, so the symbolic form of each is a small ``cond``); inside a loop a
``return`` also ``break``s (and after an inner loop that returned, ``if <flag>: break``
leaves the outer one too), so the
``if``/``while`` transformers that run later see only assignments and ``break``. Falling off
the end is ``return None``. A ``return`` in a ``finally`` block has a flag of its own, and
the ``try`` is wrapped so that it discards the exception in flight, as Python's does
(``_return_in_finally``). Applied only to functions with a ``return`` below their top level,
and not to generators or coroutines.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.templates import constant, copy_location, name, replace
from autostatic.transformers.base import _SCOPES, Transformer, _node, blocks_of

RETURN_FLAG = "do_return"
RETURN_VALUE = "retval"  # generated names start with "__retval" (see convert_ops.RETURN_VALUE)
_LOOPS = (gast.While, gast.For)


def _walk_own(node: gast.AST):
    """Nodes of ``node`` that belong to its function (nested scopes skipped)."""
    stack = [] if isinstance(node, _SCOPES) else [node]
    while stack:
        current = stack.pop()
        yield current
        for field in current._fields:
            value = getattr(current, field, None)
            if type(value) is list:
                stack.extend(
                    v for v in value if isinstance(v, gast.AST) and not isinstance(v, _SCOPES)
                )
            elif isinstance(value, gast.AST) and not isinstance(value, _SCOPES):
                stack.append(value)


def _own_statements(node: gast.AST):
    """The statements of ``node`` (itself included) that belong to its function: its blocks,
    nested scopes skipped (a ``return`` is always one of them)."""
    stack = [] if isinstance(node, _SCOPES) else [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(s for s in blocks_of(current) if not isinstance(s, _SCOPES))


def _has_return(node: gast.AST) -> bool:
    return any(type(n) is gast.Return for n in _own_statements(node))


def _returns_in(stmts: list) -> dict:
    """``{id(s): (s, _has_return(s))}`` for ``stmts`` and every statement of their blocks
    (nested scopes skipped), in one walk: children before parents (asking each statement on
    its own walks an ``elif`` chain once per link)."""
    order = []
    stack = [s for s in stmts if not isinstance(s, _SCOPES)]
    while stack:
        node = stack.pop()
        inner = [s for s in blocks_of(node) if not isinstance(s, _SCOPES)]
        order.append((node, inner))
        stack += inner
    facts: dict = {}
    for node, inner in reversed(order):  # (a parent comes before its children in ``order``)
        found = type(node) is gast.Return
        if not found:
            for s in inner:
                if facts[id(s)][1]:
                    found = True
                    break
        facts[id(node)] = (node, found)
    return facts


def _needs_lowering(fn: gast.FunctionDef, yields: bool = True) -> bool:
    """A ``return`` below the top level, in a function that is not a generator or coroutine
    (one walk over the function; over its statements only when it has no ``yield``
    anywhere)."""
    if isinstance(fn, gast.AsyncFunctionDef):
        return False
    nested = False
    walk_own = _walk_own if yields else _own_statements
    for stmt in fn.body:
        for node in walk_own(stmt):
            kind = type(node)
            if kind is gast.Yield or kind is gast.YieldFrom:
                return False
            if kind is gast.Return and node is not stmt:
                nested = True
    return nested


def _exits(stmts: list, memo: dict | None = None) -> bool:
    """Whether ``stmts`` never fall through: they end in ``return``/``raise``, or in an
    ``if`` both of whose branches never fall through. ``memo``: the answers for ``if``s
    (``{id: (node, answer)}``; an ``elif`` chain is walked once, not once per link)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return True
    if not isinstance(last, gast.If):
        return False
    known = memo.get(id(last)) if memo is not None else None
    if known is not None and known[0] is last:
        return known[1]
    answer = _exits(last.body, memo) and _exits(last.orelse, memo)
    if memo is not None:
        memo[id(last)] = (last, answer)
    return answer


def _absorb(stmt: gast.If, rest: list, memo: dict | None = None) -> list:
    """Move the statements after ``stmt`` into the branch that falls through when the other
    never does (``if c: return a`` then ``rest`` is ``if c: return a else: rest``): no flag
    test guards ``rest``, so an early return costs one converted statement, not two. Returns
    what is left after ``stmt`` (nothing, or ``rest`` when it cannot move)."""
    body_exits, else_exits = _exits(stmt.body, memo), _exits(stmt.orelse, memo)
    if memo is not None:
        memo.pop(id(stmt), None)  # its branches change now (it is not asked again)
    if body_exits and else_exits:
        return []  # unreachable
    if body_exits:
        stmt.orelse = stmt.orelse + rest
        return []
    if else_exits and stmt.orelse:
        stmt.body = stmt.body + rest
        return []
    return rest


def _never_ends(stmt: gast.stmt) -> bool:
    """A ``raise``, or a ``while True:`` with no ``break`` of its own (only a ``return`` or
    an exception leaves it): the function never falls off its end after it."""
    if type(stmt) is gast.Raise:
        return True
    if not (
        isinstance(stmt, gast.While)
        and isinstance(stmt.test, gast.Constant)
        and stmt.test.value is True
    ):
        return False
    from autostatic.transformers.break_continue import _own_jumps

    return not any(gast.Break in _own_jumps(s) for s in stmt.body)


class ReturnTransformer(Transformer):
    """Lowers early returns to flags (see the module docstring); runs before the analysis."""

    statements_only = True  # it rewrites statements only

    needs_analysis = False

    def visit_FunctionDef(self, node: gast.FunctionDef):
        census = self.ctx.census
        if census is None or census.closures:
            self.generic_visit(node)  # nested functions first, each on its own
        if census is None or census.yields or isinstance(node, gast.AsyncFunctionDef):
            if not _needs_lowering(node, census is None or census.yields):
                return node
            returns = _returns_in(node.body)
        else:  # statements only: one walk answers both
            returns = _returns_in(node.body)
            if not any(
                returns[id(s)][1]
                for s in node.body
                if type(s) is not gast.Return and not isinstance(s, _SCOPES)
            ):
                return node  # no return below the top level
        self.flag = self.ctx.namer.new(RETURN_FLAG)
        self.ctx.jump_flags.add(self.flag)
        self.value = self.ctx.namer.new(RETURN_VALUE)
        implicit = copy_location(_node(gast.Return, value=None), node.body[-1])
        ends = [] if _never_ends(node.body[-1]) else [implicit]
        returns[id(implicit)] = (implicit, True)
        self._returns = returns  # asked before each is lowered
        self._exit_memo = {}  # (an if is asked about only before it changes)
        body = self._block(node.body + ends, in_loop=False)
        self._returns, self._exit_memo = {}, {}
        head = replace(
            "flag = False\nvalue = jst.UNDEFINED",
            node.body[0],
            flag=self.flag,
            value=self.value,
            jst=self.ctx.jst,
        )
        tail = copy_location(_node(gast.Return, value=name(self.value)), node.body[-1])
        node.body = head + body + [tail]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _block(self, stmts: list, in_loop: bool) -> list:
        out = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Return):
                out += self._return(stmt, in_loop)
                return out  # the rest is unreachable
            if isinstance(stmt, _SCOPES) or not self._has_return(stmt):
                out.append(stmt)
                continue
            rest = stmts[i + 1 :]
            if isinstance(stmt, gast.If) and rest and not _absorb(stmt, rest, self._exit_memo):
                out.append(self._lower(stmt, in_loop))
                return out  # the rest moved into the branch that falls through
            # a return in an inner loop's body leaves only that loop: ``if flag: break`` after
            # it, unless one in its else breaks this loop too (the break lowering then guards
            # what follows and tests the flag with the loop's own test)
            inner = (
                isinstance(stmt, _LOOPS)
                and any(self._has_return(s) for s in stmt.body)
                and not any(self._has_return(s) for s in stmt.orelse)
            )
            out.append(self._lower(stmt, in_loop))
            if in_loop:  # a return below already breaks this loop, except from an inner loop
                if inner:
                    check = replace("if flag:\n    break", stmt, flag=self.flag)
                    anno.set(check[0].body[0], anno.RETURN_BREAK, self.flag)
                    out += check
                out += self._block(rest, in_loop) if rest else []
            elif rest:
                # the rest's own guards follow this one, not inside it: a flat sequence of
                # guards (each a small cond when the flag is symbolic), not a nested chain
                guarded = self._block(rest, in_loop)
                at = next((i for i, s in enumerate(guarded) if self._guards(s)), len(guarded))
                guard = replace(
                    "if not flag:\n    guarded", stmt, flag=self.flag, guarded=guarded[:at]
                )
                anno.set(guard[0], anno.JUMP_GUARD, True)
                out += guard + guarded[at:]
            return out
        return out

    def _guards(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` is an ``if not <this function's return flag>:`` guard."""
        return (
            anno.get(stmt, anno.JUMP_GUARD, False)
            and type(stmt.test) is gast.UnaryOp
            and type(stmt.test.operand) is gast.Name
            and stmt.test.operand.id == self.flag
        )

    _returns: dict = {}
    _exit_memo: dict = {}

    def _has_return(self, stmt: gast.stmt) -> bool:
        known = self._returns.get(id(stmt))
        if known is not None and known[0] is stmt:
            return known[1]
        return _has_return(stmt)  # a statement made since

    _outer_flags: tuple = ()  # in a finally block: the flags of the returns around it

    def _return(self, node: gast.Return, in_loop: bool) -> list:
        value = node.value
        if value is None:
            value = constant(None)
        stmts = replace(  # the value first: if it raises, the function has not returned
            "retval = value\nflag = True", node, flag=self.flag, retval=self.value, value=value
        )
        for outer in self._outer_flags:  # (a return in a finally block)
            stmts += replace("flag = True", node, flag=outer)
        if in_loop:
            leave = copy_location(_node(gast.Break), node)
            # the function's flag is set: the loop can break on it too
            anno.set(leave, anno.RETURN_BREAK, (*self._outer_flags, self.flag)[0])
            stmts.append(leave)
        return stmts

    def _return_in_finally(self, stmt: gast.Try, in_loop: bool) -> gast.stmt:
        """A ``return`` in a ``finally`` block replaces the value a ``return`` before it gave
        and discards the exception in flight. Its own flag guards the rest of the block (a
        ``return`` of the ``try`` body set the function's flag already) and, as for a
        ``break`` there, decides whether the exception goes on::

            try:
                returned = False
                <the try statement, its finally's returns setting returned and the flag>
            except BaseException:
                if jst.keeps_exception(returned, where):   # a Python if
                    raise
        """
        returned = self.ctx.namer.new("finally_returned")
        saved = self.flag, self._outer_flags
        self.flag, self._outer_flags = returned, (*self._outer_flags, saved[0])
        try:
            stmt.finalbody = self._block(stmt.finalbody, in_loop)
        finally:
            self.flag, self._outer_flags = saved
        from autostatic.transformers.break_continue import keeping_exceptions

        return keeping_exceptions(self, stmt, returned)

    def _lower(self, stmt: gast.stmt, in_loop: bool) -> gast.stmt:
        if isinstance(stmt, _LOOPS):
            stmt.body = self._block(stmt.body, True)
            stmt.orelse = self._block(stmt.orelse, in_loop)
        elif isinstance(stmt, gast.If):
            stmt.body = self._block(stmt.body, in_loop)
            stmt.orelse = self._block(stmt.orelse, in_loop)
        elif isinstance(stmt, (gast.With, gast.AsyncWith)):
            stmt.body = self._block(stmt.body, in_loop)
        elif isinstance(stmt, gast.Try):
            stmt.body = self._block(stmt.body, in_loop)
            stmt.orelse = self._block(stmt.orelse, in_loop)
            for handler in stmt.handlers:
                handler.body = self._block(handler.body, in_loop)
            if any(self._has_return(s) for s in stmt.finalbody):
                return self._return_in_finally(stmt, in_loop)
        elif isinstance(stmt, gast.Match):
            for case in stmt.cases:
                case.body = self._block(case.body, in_loop)
        return stmt
