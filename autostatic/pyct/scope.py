"""Scopes (what code reads, modifies, deletes) and FunctionInfo (facts about a function).

The data side of the activity analysis (``activity.py`` computes them): a :class:`Scope` is
immutable and made of frozensets of symbols (see ``symbols.py``), so the later analyses and the
transformers can share them freely.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import gast

from autostatic.pyct.symbols import base_name

_EMPTY: frozenset[str] = frozenset()


class Scope:
    """Symbols a piece of code reads, modifies and deletes.

    Attributes:
        read: symbols whose value is used (``self.x`` read also reads ``self``; ``del x``
            reads ``x``, since it fails when ``x`` is unbound).
        modified: symbols whose binding or object is changed: bound names, assigned
            attributes, and the base symbol of a subscript store (``a[i] = v`` modifies ``a``).
        deleted: symbols removed by ``del`` (and ``e`` at the end of ``except E as e``).
        bound: the plain names (re)bound by a name-binding operation (a subset of modified).
        conditional: names in ``bound`` that may stay unbound even when the code completes
            (walrus under ``and``/``or``/``x if c else y``, in a comprehension, in ``assert``).
    """

    __slots__ = ("read", "modified", "deleted", "bound", "conditional")

    def __init__(
        self,
        read: frozenset[str] = _EMPTY,
        modified: frozenset[str] = _EMPTY,
        deleted: frozenset[str] = _EMPTY,
        bound: frozenset[str] = _EMPTY,
        conditional: frozenset[str] = _EMPTY,
    ) -> None:
        self.read = read
        self.modified = modified
        self.deleted = deleted
        self.bound = bound
        self.conditional = conditional

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scope) and all(
            getattr(self, f) == getattr(other, f) for f in self.__slots__
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [f"{f}={sorted(getattr(self, f))}" for f in self.__slots__ if getattr(self, f)]
        return f"Scope({', '.join(parts)})"


EMPTY_SCOPE = Scope()


def union(scopes: list[Scope]) -> Scope:
    """The Scope of several pieces of code together."""
    scopes = [s for s in scopes if s is not EMPTY_SCOPE]
    if len(scopes) <= 1:
        return scopes[0] if scopes else EMPTY_SCOPE
    u = _EMPTY.union
    return Scope(
        u(*map(_READ, scopes)),
        u(*map(_MODIFIED, scopes)),
        u(*map(_DELETED, scopes)),
        u(*map(_BOUND, scopes)),
        u(*map(_CONDITIONAL, scopes)),
    )


_READ, _MODIFIED, _DELETED, _BOUND, _CONDITIONAL = (
    attrgetter(f) for f in ("read", "modified", "deleted", "bound", "conditional")
)


class FunctionInfo:
    """Function-level facts from :func:`autostatic.pyct.analyze`.

    Attributes:
        node: the FunctionDef / AsyncFunctionDef / Lambda node.
        params: parameter names in signature order (``*args`` and ``**kw`` included).
        locals: every name local to the function: params and all names bound in the body
            (including ``x`` in a bare ``x: int``), minus globals and nonlocals.
        globals, nonlocals: names declared ``global`` / ``nonlocal`` in the function.
        free_vars: names read in the function (or by functions nested in it) but not local:
            globals, builtins, closure variables.
        cell_vars: locals captured by a nested def, lambda, class method or generator
            expression; they may be read at any later call, so liveness keeps them always live.
        has_yield, has_await: the function is a generator / awaits (nested functions aside).
        uses_locals_builtin: calls ``locals()``, ``vars()``, ``dir()`` or ``super()`` with no
            arguments, or ``exec``/``eval``: the frame's locals are observed by name.
        body_scope: the Scope of the whole body.
        always_live: symbols liveness treats as live everywhere (cell vars, globals,
            nonlocals, modified attribute chains: they are observable outside the function).
        graph: the cfg.Graph (set by analyze).
    """

    def __init__(self, node: gast.AST, params: tuple[str, ...], walker: Any, body: Scope):
        """``walker``: the activity walker of the body (its declarations, flags, captures)."""
        self.node = node
        self.name: str = getattr(node, "name", "<lambda>")
        self.params = params
        self.globals = frozenset(walker.globals)
        self.nonlocals = frozenset(walker.nonlocals)
        self.has_yield = walker.has_yield
        self.has_await = walker.has_await
        self.uses_locals_builtin = walker.uses_locals
        self.body_scope = body
        undeclared = self.globals | self.nonlocals
        self.locals = (frozenset(params) | body.bound | walker.declared) - undeclared
        read_names = {base_name(s) for s in body.read}
        self.free_vars = frozenset(read_names - self.locals)
        self.cell_vars = frozenset(base_name(s) for s in walker.captured) & self.locals
        composites = {s for s in body.modified | body.deleted if "." in s}
        observed = self.locals if self.uses_locals_builtin else frozenset()  # locals(), eval
        self.always_live = self.cell_vars | undeclared | composites | observed
        self.graph = None

    def __repr__(self) -> str:
        return f"FunctionInfo({self.name}, params={self.params}, locals={sorted(self.locals)})"


def unbind_scope(handler: gast.ExceptHandler) -> Scope:
    """What Python does when ``except E as e`` ends: ``e`` is deleted (without a read)."""
    if handler.name is None:
        return EMPTY_SCOPE
    return Scope(deleted=frozenset((handler.name.id,)))


def param_names(args: gast.arguments) -> tuple[str, ...]:
    """Parameter names of a signature, in order."""
    names = [a.id for a in args.posonlyargs]
    names += [a.id for a in args.args]
    if args.vararg is not None:
        names.append(args.vararg.id)
    names += [a.id for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append(args.kwarg.id)
    return tuple(names)
