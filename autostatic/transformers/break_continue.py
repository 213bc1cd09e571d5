"""``break``/``continue`` in ``while`` loops become flags, so they can sit under a tensor ``if``.

Before::

    while i < n:
        if x[i] > 0:
            break
        i += 1
    else:
        found = False

After (the converted body; the original body is untouched)::

    __break_0 = False
    while not __break_0 and i < n:
        if x[i] > 0:
            __break_0 = True
        if not __break_0:
            i += 1
    if not __break_0:
        found = False

An ``if c: A; continue`` at the top of a loop body (``A`` jumping nowhere) becomes ``if c: A
else: <the rest of the body>`` (``if not c: <the rest>`` when ``A`` is nothing), so it needs
no flag; any other ``continue`` sets a flag reset at the top of each iteration. Statements
after one that may jump run under ``if not <flags>``; the test is not evaluated once the
loop has broken, and the ``else`` runs only when it did not, as in Python. A ``for`` gets
``if not <flag>:`` around its body and ``if <flag> is True: break`` after it; the control-
flow pass takes the guard off again (``for_loops._unguard``): a Python ``for`` hands its
other items to the runtime once a tensor ``break`` set the flag, and a symbolic one stops at
the flag.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.nodes import walk
from autostatic.pyct.templates import constant, copy_location, name, replace
from autostatic.transformers.base import _SCOPES, Transformer, _node, blocks_of


def _flags_of(test: gast.expr) -> set:
    """The flags a guard's ``not flag`` / ``not (a or b)`` tests."""
    operand = test.operand if type(test) is gast.UnaryOp else None
    if type(operand) is gast.Name:
        return {operand.id}
    if type(operand) is gast.BoolOp:
        return {v.id for v in operand.values if type(v) is gast.Name}
    return set()


def _own_jumps(stmt: gast.AST) -> set[type]:
    """The kinds of ``break``/``continue`` in ``stmt`` that leave the enclosing loop."""
    found: set[type] = set()
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.Break, gast.Continue)):
            found.add(type(node))
            continue
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, (gast.While, gast.For, gast.AsyncFor)):
            stack.extend(node.orelse)  # their bodies' jumps are their own
            continue
        stack.extend(blocks_of(node))  # jumps are statements
    return found


def _jumps_as_else(stmts: list) -> list:
    """A loop body with each ``if c: A; continue`` of its own block (``A`` jumping nowhere)
    as ``if c: A else: <the rest of the body>``, or ``if not c: <the rest>`` for an ``A``
    of nothing: the same statements run, and no flag is needed for those ``continue``s. An
    ``if c: A; break`` keeps its ``break`` and takes the rest as its ``else`` too: one ``if``
    instead of the ``if not <flag>:`` guard. The branches of an ``if`` that ends the body end
    the iteration too: the same holds in them."""
    for i, stmt in enumerate(stmts):
        if (
            type(stmt) is gast.If
            and _ends_in_own_jump(stmt.body)
            and not any(_own_jumps(s) for s in stmt.body[:-1])
        ):
            rest = _jumps_as_else(stmt.orelse + stmts[i + 1 :])
            if type(stmt.body[-1]) is gast.Break:
                if not rest:
                    break
                stmt.orelse = rest
            elif len(stmt.body) == 1 and not stmt.orelse and rest:
                test = _node(gast.UnaryOp, op=_node(gast.Not), operand=stmt.test)
                test = copy_location(test, stmt)
                stmt = copy_location(_node(gast.If, test=test, body=rest, orelse=[]), stmt)
            else:
                pass_ = copy_location(_node(gast.Pass), stmt.body[-1])
                stmt.body, stmt.orelse = stmt.body[:-1] or [pass_], rest
            return stmts[:i] + [stmt]
    last = stmts[-1] if stmts else None
    if type(last) is gast.If:  # its branches end the iteration too
        last.body = _jumps_as_else(last.body)
        last.orelse = _jumps_as_else(last.orelse)
    return stmts


def _ends_in_own_jump(body: list) -> bool:
    """A ``continue``, or a ``break`` the user wrote (the return lowering's are checked
    after the loops they leave, see ``_breaks_on``)."""
    last = body[-1]
    if type(last) is gast.Break:
        return anno.get(last, anno.RETURN_BREAK, None) is None
    return type(last) is gast.Continue


def _return_flag(body: list) -> str | None:
    """The return flag when every ``break`` leaving this loop was made by the return
    lowering (``return`` in the loop, or ``if returned: break`` after an inner loop)."""
    flags = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Break):
            flags.add(anno.get(node, anno.RETURN_BREAK, None))
            continue
        if isinstance(node, _SCOPES) or isinstance(node, gast.expr):
            continue
        if isinstance(node, (gast.While, gast.For, gast.AsyncFor)):
            stack.extend(node.orelse)  # their bodies' jumps are their own
            continue
        stack.extend(blocks_of(node))
    if len(flags) == 1 and None not in flags:
        return flags.pop()
    return None


def _breaks_on(stmt: gast.stmt, flag: str) -> bool:
    """``break`` made by the return lowering, or its ``if <flag>: break`` after a loop."""
    if isinstance(stmt, gast.If) and len(stmt.body) == 1 and not stmt.orelse:
        test = stmt.test
        if isinstance(test, gast.Name) and test.id == flag:
            stmt = stmt.body[0]
    return isinstance(stmt, gast.Break) and anno.get(stmt, anno.RETURN_BREAK, None) == flag


def _binds_in_test(node: gast.While) -> bool:
    """A ``:=`` in the test, and no jump in the ``else`` (it would change loops below)."""
    if not any(isinstance(n, gast.NamedExpr) for n in walk(node.test)):
        return False
    jumps = (gast.Break, gast.Continue)
    return not any(isinstance(n, jumps) for s in node.orelse for n in walk(s))


def _test_in_body(node: gast.While) -> gast.While:
    """``while (v := f()) > c: body else: orelse`` as ``while True: if not ((v := f()) > c):
    orelse; break`` then ``body``: the test runs in the body, where its bindings are loop
    variables like any other assignment."""
    test = _node(gast.UnaryOp, op=_node(gast.Not), operand=node.test)
    leave = replace("if test:\n    orelse\n    break", node, test=test, orelse=node.orelse)
    true = constant(True)
    loop = _node(gast.While, test=true, body=leave + node.body, orelse=[])
    return copy_location(loop, node)


class BreakContinueTransformer(Transformer):
    """Lowers ``break``/``continue`` of ``while`` loops to flags (see the module docstring)."""

    statements_only = True  # it rewrites statements only

    needs_analysis = False

    finally_flags: tuple = ()  # flags of the finally blocks around the statement lowered

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_While(self, node: gast.While):
        if _binds_in_test(node):  # the test's := bindings must outlive the test
            node = _test_in_body(node)
        lowered = self._lowered_body(node)
        if lowered is None:
            return node
        brk, cont, body = lowered
        head = []
        if cont:
            body = replace("flag = False", node, flag=cont) + body
        if brk:
            head = [] if self.returned else replace("flag = False", node, flag=brk)
            node.test = replace("not flag and test", node, flag=brk, test=node.test)[0].value
        node.body = body
        tail = []
        if brk and node.orelse:
            tail = replace("if not flag:\n    orelse", node, flag=brk, orelse=node.orelse)
            node.orelse = []
        return head + [node] + tail

    def visit_For(self, node: gast.For):
        """The body under ``if not flag:``, then ``if flag is True: break`` (see above)."""
        lowered = self._lowered_body(node)
        if lowered is None:
            return node
        brk, cont, body = lowered
        if cont:
            body = replace("flag = False", node, flag=cont) + body
        head = tail = []
        if brk:
            guard = replace("if not flag:\n    body", node, flag=brk, body=body)
            anno.set(guard[0], anno.JUMP_GUARD, brk)  # the body's own guard: its flag
            check = replace("if flag is True:\n    break", node, flag=brk)
            anno.set(check[0], anno.BREAK_CHECK, brk)  # a for made a while drops it (below)
            body = guard + check
            head = [] if self.returned else replace("flag = False", node, flag=brk)
            if node.orelse:
                tail = replace("if not flag:\n    orelse", node, flag=brk, orelse=node.orelse)
                node.orelse = []
        node.body = body
        return head + [node] + tail

    def _lowered_body(self, node: gast.AST) -> tuple | None:
        """(break flag, continue flag, lowered body) of a loop with jumps of its own (inner
        loops lowered first), or None when it has none; a flag is None when unused. A loop
        whose only ``break``s leave it for a ``return`` breaks on the return flag itself
        (False whenever the loop runs, set before each of them), so it needs none of its own
        (``self.returned``: nothing to initialize)."""
        self.generic_visit(node)
        node.body = _jumps_as_else(node.body)
        kinds = set().union(*(_own_jumps(s) for s in node.body)) if node.body else set()
        if not kinds:
            return None
        returned = _return_flag(node.body) if gast.Break in kinds else None
        brk = returned or (self.ctx.namer.new("break") if gast.Break in kinds else None)
        cont = self.ctx.namer.new("continue") if gast.Continue in kinds else None
        self.flags = (brk, cont)
        self.returned = returned
        self.ctx.jump_flags.update(f for f in self.flags if f)
        return brk, cont, self._block(node.body)

    def _block(self, stmts: list) -> list:
        out = []
        for i, stmt in enumerate(stmts):
            if self.returned and _breaks_on(stmt, self.returned):  # set already
                # `if returned: break`, then the rest (after a bare `break` it is unreachable)
                rest = self._block(stmts[i + 1 :]) if isinstance(stmt, gast.If) else []
                if rest:
                    out += self._guard(rest, {gast.Break}, stmt)
                return out
            if isinstance(stmt, (gast.Break, gast.Continue)):
                flag = self.flags[0] if isinstance(stmt, gast.Break) else self.flags[1]
                out += replace("flag = True", stmt, flag=flag)
                for jumped in self.finally_flags:  # it leaves these finally blocks
                    out += replace("jumped = True", stmt, jumped=jumped)
                return out  # the rest of the block is unreachable
            kinds = _own_jumps(stmt)
            if not kinds:
                out.append(stmt)
                continue
            out.append(self._lower(stmt))
            rest = self._block(stmts[i + 1 :])
            if rest:  # (a rest of dropped `if returned: break` checks is nothing to guard)
                out += self._guard(rest, kinds, stmt)
            return out
        return out

    def _guard(self, stmts: list, kinds: set, origin: gast.AST) -> list:
        """``if not <flag>: stmts``: what runs only when no jump of ``kinds`` happened. The
        guards ``stmts`` ends with that test these flags too follow it instead of sitting in
        it (a flat sequence of small guards, not a nested chain)."""
        test = self._not_jumped(kinds, origin)
        flags = _flags_of(test)
        at = len(stmts)
        while at > 1 and anno.get(stmts[at - 1], anno.JUMP_GUARD, False) and (
            flags <= _flags_of(stmts[at - 1].test)
        ):
            at -= 1
        guarded = _node(gast.If, test=test, body=stmts[:at], orelse=[])
        anno.set(guarded, anno.JUMP_GUARD, True)
        return [copy_location(guarded, origin)] + stmts[at:]

    def _not_jumped(self, kinds: set, origin: gast.AST) -> gast.expr:
        flags = [f for f, k in zip(self.flags, (gast.Break, gast.Continue)) if k in kinds and f]
        test = (
            name(flags[0])
            if len(flags) == 1
            else _node(gast.BoolOp, op=_node(gast.Or), values=[name(f) for f in flags])
        )
        return copy_location(_node(gast.UnaryOp, op=_node(gast.Not), operand=test), origin)

    def _lower(self, stmt: gast.stmt) -> gast.stmt:
        if isinstance(stmt, (gast.While, gast.For, gast.AsyncFor)):
            stmt.orelse = self._block(stmt.orelse)  # a jump in a loop's else is ours
        elif isinstance(stmt, gast.If):
            stmt.body = self._block(stmt.body)
            stmt.orelse = self._block(stmt.orelse)
        elif isinstance(stmt, (gast.With, gast.AsyncWith)):
            stmt.body = self._block(stmt.body)
        elif isinstance(stmt, gast.Try):
            stmt.body = self._block(stmt.body)
            stmt.orelse = self._block(stmt.orelse)
            for handler in stmt.handlers:
                handler.body = self._block(handler.body)
            if any(_own_jumps(s) for s in stmt.finalbody):
                return self._jump_in_finally(stmt)
        elif isinstance(stmt, gast.Match):
            for case in stmt.cases:
                case.body = self._block(case.body)
        return stmt

    def _jump_in_finally(self, stmt: gast.Try) -> gast.stmt:
        """A ``break``/``continue`` in a ``finally`` block discards the exception in flight;
        its flag does not, so the statement is wrapped::

            try:
                jumped = False
                <the try statement, its finally setting jumped with the flag>
            except BaseException:
                if jst.keeps_exception(jumped, where):   # a Python if
                    raise
        """
        jumped = self.ctx.namer.new("finally_jumped")
        saved, self.finally_flags = self.finally_flags, (*self.finally_flags, jumped)
        try:
            stmt.finalbody = self._block(stmt.finalbody)
        finally:
            self.finally_flags = saved
        return keeping_exceptions(self, stmt, jumped)


def keeping_exceptions(self: Transformer, stmt: gast.Try, jumped: str) -> gast.Try:
    """``stmt`` (a ``try`` whose ``finally`` jumps: ``break``, ``continue``, ``return``)
    wrapped so that the exception in flight goes on unless the jump ran (it sets
    ``jumped``), as Python's jump discards it::

        try:
            jumped = False
            <stmt>
        except BaseException:
            if jst.keeps_exception(jumped, where):   # a Python if
                raise
    """
    template = (
        "try:\n    jumped = False\n    stmt\nexcept BaseException:\n"
        "    if jst.keeps_exception(jumped, where):\n        raise"
    )
    where = constant((self.ctx.filename, stmt.finalbody[0].lineno, ""))
    wrapper = replace(
        template, stmt, jumped=jumped, stmt=[stmt], jst=self.ctx.jst, where=where
    )[0]
    anno.set(wrapper.handlers[0].body[0], anno.PYTHON_IF, True)
    return wrapper
