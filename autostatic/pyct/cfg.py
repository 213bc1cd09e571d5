"""Statement-level control-flow graph of one function.

A :class:`Node` is a simple statement or one step of a compound statement. ``kind`` says which:

=============== ====================== ==================================================
kind            ``node.ast``           what runs
=============== ====================== ==================================================
``stmt``        the statement          a simple statement (a nested def/class is one)
``test``        If / While             the test
``iter``        For                    ``iter(...)`` of the iterable, once
``step``        For                    ``next()`` and binding the target, every iteration
``with``        With                   the context expressions, ``__enter__``, ``as`` targets
``with_exit``   With                   ``__exit__`` (on every way out of the body)
``handler``     ExceptHandler          matching the exception type, binding ``as e``
``handler_exit`` ExceptHandler         the implicit ``del e`` when the handler ends
``subject``     Match                  the subject
``case``        match_case             the pattern and the guard
``entry``       the function           binding the parameters
``exit``        the function           leaving the function (normally or by ``return``)
=============== ====================== ==================================================

Edges: ``next``/``prev`` hold all successors/predecessors. ``partial`` (None or a set) holds
the successors that are reached when a node is left *part-way*: an exception raised inside it,
a ``case`` whose pattern or guard fails, a ``for`` step whose iterator is exhausted (the target
is not bound). Dataflow treats such an edge as carrying the state before *or* after the node.

Exceptions: every node inside a ``try`` body has a partial edge to every handler of that
``try`` (and onwards if no handler is bare). A ``finally`` block gets two copies of its nodes:
one entered by falling through and by ``break``/``continue``/``return`` (it leaves towards
each of them that occurred; merging those paths is conservative, hence sound), and one entered
by exceptions, which only re-raises. ``except E as e`` ends with a ``handler_exit`` node, split
the same way. ``with`` bodies are modelled like a try/finally with one ``with_exit`` node, which
may also fall through after an exception (``__exit__`` may suppress it; ``build(...,
with_suppress=False)`` splits it like a ``finally`` instead). Exceptions leaving the function
have no edges: nothing after them is analyzed.

``Graph.stmts`` maps every statement of the function (not of nested functions), every
``ExceptHandler`` and every ``match_case`` to a :class:`StmtInfo`: its first node, the edges
entering it, the edges by which it completes normally, and the nodes control goes to next.
A statement of a ``finally`` block has more StmtInfos (``alt``) for its other copies.
"""

from __future__ import annotations

from collections.abc import Callable

import gast

from autostatic.pyct import anno
from autostatic.pyct.scope import EMPTY_SCOPE, Scope, param_names, unbind_scope

Edge = tuple["Node", bool]  # (predecessor, partial)


class Node:
    """One CFG node; see the module docstring for ``kind`` and the edges."""

    __slots__ = ("index", "ast", "kind", "scope", "next", "prev", "partial")

    def __init__(self, index: int, ast: gast.AST, kind: str, scope: Scope) -> None:
        self.index = index
        self.ast = ast
        self.kind = kind
        self.scope = scope
        self.next: list[Node] = []
        self.prev: list[Node] = []
        self.partial: set[Node] | None = None

    def __repr__(self) -> str:
        where = self.ast.pattern if type(self.ast) is gast.match_case else self.ast
        line = getattr(where, "lineno", "?")
        return f"<{self.index}:{self.kind} {type(self.ast).__name__}@{line}>"


class StmtInfo:
    """Where a statement sits in the graph.

    Attributes:
        first: the statement's first node (None only for an empty construct).
        entry: edges from the code before the statement into ``first``.
        exits: edges by which the statement completes normally (a jump statement has none).
        follow: nodes control goes to after the statement completes or jumps; for a ``break``
            that is the code after the loop (or a ``finally`` on the way).
    """

    __slots__ = ("first", "entry", "exits", "follow", "alt")

    def __init__(self, entry: list[Edge]) -> None:
        self.first: Node | None = None
        self.entry = entry
        self.exits: list[Edge] = []
        self.follow: list[Node] = []
        self.alt: list[StmtInfo] | None = None  # more copies (in `finally` blocks)

    def copies(self) -> list[StmtInfo]:
        """This info and the ``alt`` ones."""
        return [self] if self.alt is None else [self, *self.alt]

    def add_copy(self, other: StmtInfo) -> None:
        if self.alt is None:
            self.alt = [other]
        else:
            self.alt.append(other)


class Graph:
    """The CFG of one function: ``entry``, ``exit``, ``nodes`` and ``stmts``."""

    def __init__(self, func: gast.AST) -> None:
        self.func = func
        self.nodes: list[Node] = []
        self.stmts: dict[gast.AST, StmtInfo] = {}
        self.entry: Node = None  # type: ignore[assignment]
        self.exit: Node = None  # type: ignore[assignment]
        self._by_ast: dict[int, list[Node]] | None = None
        self._adjacency: tuple | None = None

    def adjacency(self) -> tuple[list, list, list, list]:
        """Edges as node indices: (succ, partial_succ, pred, partial_pred) per node.

        ``succ``/``pred`` hold the normal edges; the partial lists are None when empty.
        """
        if self._adjacency is None:
            nodes = self.nodes
            succ: list[list[int]] = [[] for _ in nodes]
            psucc: list[list[int] | None] = [None] * len(nodes)
            pred: list[list[int]] = [[] for _ in nodes]
            ppred: list[list[int] | None] = [None] * len(nodes)
            for n in nodes:
                i = n.index
                part = n.partial
                for s in n.next:
                    j = s.index
                    if part and s in part:
                        if psucc[i] is None:
                            psucc[i] = [j]
                        else:
                            psucc[i].append(j)
                        if ppred[j] is None:
                            ppred[j] = [i]
                        else:
                            ppred[j].append(i)
                    else:
                        succ[i].append(j)
                        pred[j].append(i)
            self._adjacency = (succ, psucc, pred, ppred)
        return self._adjacency

    def nodes_of(self, ast_node: gast.AST) -> list[Node]:
        """The nodes standing for ``ast_node`` (a statement, a loop, a handler ...)."""
        if self._by_ast is None:
            self._by_ast = {}
            for n in self.nodes:
                self._by_ast.setdefault(id(n.ast), []).append(n)
        return self._by_ast.get(id(ast_node), [])

    def node_of(self, ast_node: gast.AST, kind: str | None = None) -> Node:
        """The single node (of ``kind``, if given) standing for ``ast_node``."""
        found = [n for n in self.nodes_of(ast_node) if kind is None or n.kind == kind]
        if len(found) != 1:
            raise KeyError(f"{len(found)} nodes of kind {kind!r} for {ast_node!r}")
        return found[0]

    def release(self) -> None:
        """Unlink the nodes (their edges point both ways: reference cycles), so the graph and
        the statements it holds are freed without the cyclic garbage collector."""
        for n in self.nodes:
            n.next = n.prev = n.partial = None
        self.nodes = []
        self.stmts = {}
        self._by_ast = self._adjacency = None

    def __repr__(self) -> str:
        lines = [f"Graph({getattr(self.func, 'name', '<lambda>')})"]
        for n in self.nodes:
            succ = ", ".join(
                f"{s.index}{'~' if n.partial and s in n.partial else ''}" for s in n.next
            )
            lines.append(f"  {n!r} -> {succ}")
        return "\n".join(lines)


class _Pending:
    """Dangling edges waiting for their target, and the statements that complete by them."""

    __slots__ = ("edges", "stmts")

    def __init__(self, edges: list[Edge], stmts: list[StmtInfo]) -> None:
        self.edges = edges
        self.stmts = stmts

    def merge(self, other: _Pending) -> _Pending:
        return _Pending(self.edges + other.edges, self.stmts + other.stmts)


def _of(node: Node, partial: bool = False) -> _Pending:
    return _Pending([(node, partial)], [])


def _none() -> _Pending:
    return _Pending([], [])


class _Loop:
    __slots__ = ("header", "breaks")

    def __init__(self, header: Node) -> None:
        self.header = header
        self.breaks = _none()


class _Handlers:
    """A ``try`` body with except clauses: collects the nodes that may raise.

    ``reraise`` holds the statements ending a re-raising copy (of a ``finally`` block or an
    ``except ... as e`` cleanup): the exception goes on from where they complete.
    """

    __slots__ = ("raisers", "reraise")

    def __init__(self) -> None:
        self.raisers: list[Node] = []
        self.reraise: list[StmtInfo] = []


class _Cleanup(_Handlers):
    """Code run on every way out of a block: ``finally``, ``__exit__``, ``del e``."""

    __slots__ = ("jumps",)

    def __init__(self) -> None:
        super().__init__()
        self.jumps: dict[str, _Pending] = {}


def _always_true(test: gast.expr) -> bool:
    return type(test) is gast.Constant and bool(test.value)


def _irrefutable(case: gast.match_case) -> bool:
    p = case.pattern
    while type(p) is gast.MatchAs and p.pattern is not None:
        p = p.pattern
    return case.guard is None and type(p) is gast.MatchAs


class _Builder:
    def __init__(self, func: gast.AST, with_suppress: bool) -> None:
        self.with_suppress = with_suppress
        self.graph = Graph(func)
        self.nodes = self.graph.nodes
        self.infos = self.graph.stmts
        self.frames: list[object] = []  # _Loop / _Handlers / _Cleanup, innermost last
        self.exc: list[_Handlers] = []  # the frames exceptions go to, innermost last

    # ---- plumbing -----------------------------------------------------------------------------

    def node(self, ast: gast.AST, kind: str, scope: Scope) -> Node:
        n = Node(len(self.nodes), ast, kind, scope)
        self.nodes.append(n)
        if self.exc:
            self.exc[-1].raisers.append(n)
        return n

    @staticmethod
    def edge(a: Node, b: Node, partial: bool) -> None:
        if b in a.next:
            if not partial:
                return
        else:
            a.next.append(b)
            b.prev.append(a)
        if partial:
            if a.partial is None:
                a.partial = {b}
            else:
                a.partial.add(b)

    def connect(self, pending: _Pending, target: Node) -> None:
        edge = self.edge
        for a, partial in pending.edges:
            edge(a, target, partial)
        for info in pending.stmts:
            info.follow.append(target)

    def jump(self, kind: str, pending: _Pending) -> None:
        """Route a break/continue/return from the current position."""
        for frame in reversed(self.frames):
            t = type(frame)
            if t is _Loop and kind != "return":
                if kind == "break":
                    frame.breaks = frame.breaks.merge(pending)
                else:
                    self.connect(pending, frame.header)
                return
            if t is _Cleanup:
                prev = frame.jumps.get(kind)
                frame.jumps[kind] = pending if prev is None else prev.merge(pending)
                return
        self.connect(pending, self.graph.exit)

    def propagate(self, frame: _Handlers) -> None:
        """Exceptions not handled by ``frame`` go on to the enclosing handler or cleanup."""
        if self.exc:
            self.exc[-1].raisers.extend(frame.raisers)
            self.exc[-1].reraise.extend(frame.reraise)

    def info(self, s: gast.AST, entry: list[Edge]) -> StmtInfo:
        info = StmtInfo(entry)
        prev = self.infos.get(s)
        if prev is None:
            self.infos[s] = info
        else:  # a `finally` block built again (for exceptions)
            prev.add_copy(info)
        return info

    def finish(
        self,
        frame: _Cleanup,
        normal: _Pending,
        build: Callable[[_Pending], _Pending],
        split: bool,
    ) -> _Pending:
        """Build the cleanup code run on every way out of a block; re-issue the jumps.

        With ``split``, exceptions enter a second copy, which only re-raises (its nodes are
        raisers of the enclosing frame); without, one copy that may also fall through.
        """
        raised = _Pending([(r, True) for r in frame.raisers], list(frame.reraise))
        entries = normal
        for p in frame.jumps.values():
            entries = entries.merge(p)
        if not split:
            entries = entries.merge(raised)
        out = _none()
        if entries.edges:
            end = build(entries)
            for kind in frame.jumps:
                self.jump(kind, _Pending(list(end.edges), list(end.stmts)))
            if normal.edges or not split:
                out = end
        if split and raised.edges:
            end = build(raised)
            if self.exc:  # it re-raises from where it ends
                self.exc[-1].reraise.extend(end.stmts)
        return out

    # ---- statements ---------------------------------------------------------------------------

    def block(self, stmts: list[gast.stmt], pending: _Pending) -> _Pending:
        infos, nodes, exc = self.infos, self.nodes, self.exc
        for s in stmts:
            t = type(s)
            if t in _BUILD or t in _JUMPS:
                pending = self.stmt(s, pending)
                continue
            # an ordinary simple statement: `stmt` + `simple`, inlined (the common case)
            info = StmtInfo(pending.edges)
            if s in infos:
                infos[s].add_copy(info)
            else:
                infos[s] = info
            n = info.first = Node(len(nodes), s, "stmt", s.__dict__[_ANNO][anno.SCOPE])
            nodes.append(n)
            if exc:
                exc[-1].raisers.append(n)
            self.connect(pending, n)
            pending = _Pending([(n, False)], [info])
            info.exits = pending.edges
        return pending

    def stmt(self, s: gast.AST, pending: _Pending) -> _Pending:
        info = self.info(s, pending.edges)
        start = len(self.nodes)
        out = _BUILD.get(type(s), _Builder.simple)(self, s, pending, info)
        if len(self.nodes) > start:
            info.first = self.nodes[start]
        info.exits = out.edges
        if out.edges:  # (a statement that never completes has no follow)
            out.stmts.append(info)
        return out

    def simple(self, s: gast.stmt, pending: _Pending, info: StmtInfo) -> _Pending:
        n = self.node(s, "stmt", anno.get(s, anno.SCOPE))
        self.connect(pending, n)
        kind = _JUMPS.get(type(s))
        if kind is None:
            return _of(n)
        if kind != "raise":  # a raise has only its partial edges to the handlers
            self.jump(kind, _Pending([(n, False)], [info]))
        return _none()

    def if_(self, s: gast.If, pending: _Pending, info: StmtInfo) -> _Pending:
        test = self.node(s, "test", anno.get(s, anno.TEST_SCOPE))
        self.connect(pending, test)
        body = self.block(s.body, _of(test))
        orelse = self.block(s.orelse, _of(test)) if s.orelse else _of(test)
        return body.merge(orelse)

    def while_(self, s: gast.While, pending: _Pending, info: StmtInfo) -> _Pending:
        test = self.node(s, "test", anno.get(s, anno.TEST_SCOPE))
        self.connect(pending, test)
        return self.loop(s, test, _none() if _always_true(s.test) else _of(test))

    def for_(self, s: gast.For, pending: _Pending, info: StmtInfo) -> _Pending:
        it = self.node(s, "iter", anno.get(s, anno.ITER_SCOPE))
        self.connect(pending, it)
        step = self.node(s, "step", anno.get(s, anno.TARGET_SCOPE))
        self.edge(it, step, False)
        return self.loop(s, step, _of(step, partial=True))

    def loop(self, s: gast.While | gast.For, header: Node, done: _Pending) -> _Pending:
        frame = _Loop(header)
        self.frames.append(frame)
        body = self.block(s.body, _of(header))
        self.connect(body, header)
        self.frames.pop()
        if s.orelse:
            done = self.block(s.orelse, done)
        return done.merge(frame.breaks)

    def with_(self, s: gast.With, pending: _Pending, info: StmtInfo) -> _Pending:
        enter = self.node(s, "with", anno.get(s, anno.ITEMS_SCOPE))
        self.connect(pending, enter)
        frame = _Cleanup()
        self.frames.append(frame)
        self.exc.append(frame)
        body = self.block(s.body, _of(enter))
        self.frames.pop()
        self.exc.pop()

        def build(entries: _Pending) -> _Pending:
            exit_ = self.node(s, "with_exit", EMPTY_SCOPE)
            self.connect(entries, exit_)
            return _of(exit_)

        return self.finish(frame, body, build, split=not self.with_suppress)

    def try_(self, s: gast.Try, pending: _Pending, info: StmtInfo) -> _Pending:
        cleanup = _Cleanup() if s.finalbody else None
        if cleanup is not None:
            self.frames.append(cleanup)
            self.exc.append(cleanup)
        handlers = _Handlers()
        if s.handlers:
            self.frames.append(handlers)
            self.exc.append(handlers)
        out = self.block(s.body, pending)
        if s.handlers:
            self.frames.pop()
            self.exc.pop()
        if s.orelse:
            out = self.block(s.orelse, out)
        for h in s.handlers:
            out = out.merge(self.handler(h, handlers))
        if not any(h.type is None for h in s.handlers):
            self.propagate(handlers)
        if cleanup is None:
            return out
        self.frames.pop()
        self.exc.pop()
        return self.finish(cleanup, out, lambda e: self.block(s.finalbody, e), split=True)

    def handler(self, h: gast.ExceptHandler, frame: _Handlers) -> _Pending:
        entry = [(r, True) for r in frame.raisers]
        info = self.info(h, entry)
        n = info.first = self.node(h, "handler", anno.get(h, anno.PATTERN_SCOPE))
        self.connect(_Pending(entry, frame.reraise), n)
        if h.name is None:
            out = self.block(h.body, _of(n))
        else:
            frame = _Cleanup()
            self.frames.append(frame)
            self.exc.append(frame)
            body = self.block(h.body, _of(n))
            self.frames.pop()
            self.exc.pop()

            def build(entries: _Pending) -> _Pending:
                unbind = self.node(h, "handler_exit", unbind_scope(h))
                self.connect(entries, unbind)
                return _of(unbind)

            out = self.finish(frame, body, build, split=True)
        info.exits = out.edges
        if out.edges:  # (a statement that never completes has no follow)
            out.stmts.append(info)
        return out

    def match(self, s: gast.Match, pending: _Pending, info: StmtInfo) -> _Pending:
        subject = self.node(s, "subject", anno.get(s, anno.SUBJECT_SCOPE))
        self.connect(pending, subject)
        nxt = _of(subject)
        out = _none()
        for case in s.cases:
            ci = self.info(case, nxt.edges)
            n = ci.first = self.node(case, "case", anno.get(case, anno.PATTERN_SCOPE))
            self.connect(nxt, n)
            body = self.block(case.body, _of(n))
            ci.exits = body.edges
            if body.edges:
                body.stmts.append(ci)
            out = out.merge(body)
            nxt = _none() if _irrefutable(case) else _of(n, partial=True)
        return out.merge(nxt)


_ANNO = anno._ATTR
_JUMPS = {
    gast.Return: "return",
    gast.Break: "break",
    gast.Continue: "continue",
    gast.Raise: "raise",
}
_BUILD = {
    gast.If: _Builder.if_,
    gast.While: _Builder.while_,
    gast.For: _Builder.for_,
    gast.AsyncFor: _Builder.for_,
    gast.With: _Builder.with_,
    gast.AsyncWith: _Builder.with_,
    gast.Try: _Builder.try_,
    gast.TryStar: _Builder.try_,
    gast.Match: _Builder.match,
}


def build(func: gast.AST, with_suppress: bool = True) -> Graph:
    """The CFG of ``func`` (FunctionDef, AsyncFunctionDef or Lambda).

    Needs the activity annotations (``SCOPE`` etc.): run ``activity.analyze`` first (or use
    ``autostatic.pyct.analyze``, which runs everything).

    Args:
        func: the function node.
        with_suppress: model that a ``with`` statement's ``__exit__`` may swallow an exception
            and continue after the ``with`` (true of ``contextlib.suppress``, not of most
            context managers). Sound when True; False is more precise for the usual case: a
            variable assigned in a ``with`` body is then definitely bound after it.
    """
    b = _Builder(func, with_suppress)
    params = frozenset(param_names(func.args))
    g = b.graph
    g.entry = b.node(func, "entry", Scope(modified=params, bound=params))
    g.exit = Node(-1, func, "exit", EMPTY_SCOPE)
    if type(func) is gast.Lambda:
        body = b.node(func.body, "stmt", anno.get(func, anno.BODY_SCOPE))
        b.edge(g.entry, body, False)
        b.edge(body, g.exit, False)
    else:
        b.connect(b.block(func.body, _of(g.entry)), g.exit)
    g.exit.index = len(b.nodes)
    b.nodes.append(g.exit)
    return g
