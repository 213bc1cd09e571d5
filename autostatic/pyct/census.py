"""What a function's source holds, found in one walk before any pass runs.

The converter takes its fresh names from ``names``, and a pass with nothing to rewrite is
skipped: no chained comparison, no ``.shape``, no ``assert``, no call of a converted builtin,
no closure whose captured names matter; without ``yield``/``await`` the walks for returns and jumps
look at statements only.
The lowering passes that run first add only flags, loops and ``if``\\s, never any of these,
so the census stays true for the passes after them.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from autostatic.pyct.nodes import node_fields

_CLOSURES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.GeneratorExp)
_DEFS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


@dataclass
class Census:
    names: set  # every name used or defined (Name ids, def/class/import/argument names)
    attrs: set  # every attribute name read or written (``x.shape`` gives "shape")
    bound: set  # every name bound anywhere in it, nested scopes included
    chained: bool  # a chained comparison (``a < b < c``)
    closures: bool  # a nested function, lambda, class or generator expression
    yields: bool  # a ``yield``, ``yield from`` or ``await`` (in it or a nested scope)
    item_stores: bool = True  # a subscript stored or deleted (``d[k] = v``, ``del x[i]``,
    #   ``d[k].a = v``)
    asserts: bool = True  # an ``assert`` statement

    @classmethod
    def of(cls, fn: gast.AST) -> Census:
        names: set = set()
        attrs: set = set()
        bound: set = set()
        chained = closures = yields = item_stores = asserts = False
        stack = [fn]  # one walk, in any order (the census is sets and flags)
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            kind = node.__class__
            known = _roles.get(kind)
            if known is None:
                known = _roles[kind] = _role(kind)
            role, fields = known
            values = node.__dict__
            if role is _NAME:  # (the most common node: neither a closure nor a def)
                names.add(values["id"])
                if values["ctx"].__class__ is not gast.Load:
                    bound.add(values["id"])
                if values.get("annotation") is not None:  # (a parameter's)
                    push(values["annotation"])
                continue
            if role is _OTHER:
                pass
            elif role is _ATTRIBUTE:
                attrs.add(values["attr"])
                if values["ctx"].__class__ is not gast.Load and not item_stores:
                    item_stores = _on_item(values["value"])  # d[k].a = v changes d
            elif role is _SUBSCRIPT:
                item_stores = item_stores or values["ctx"].__class__ is not gast.Load
            elif role is _COMPARE:
                chained = chained or len(values["ops"]) > 1
            elif role is _YIELD:
                yields = True
            elif role is _ASSERT:
                asserts = True
            elif role is _ALIAS:
                local = node.asname or node.name
                names.update((node.name, local))
                bound.add(local.partition(".")[0])
            elif role is _GLOBAL:
                bound.update(node.names)
            elif role is _MATCH_NAME:
                if node.name:
                    names.add(node.name)
                    bound.add(node.name)
            elif role is _MATCH_MAPPING:
                if node.rest:
                    names.add(node.rest)
                    bound.add(node.rest)
            elif role is _DEF or role is _CLOSURE:
                closures = closures or node is not fn
                if role is _DEF:
                    names.add(node.name)
                    bound.add(node.name)
            for field in fields:
                value = values.get(field)
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, _AST):
                            push(item)
                elif isinstance(value, _AST):
                    push(value)
        return cls(names, attrs, bound, chained, closures, yields, item_stores, asserts)


def _on_item(node: gast.expr) -> bool:
    while node.__class__ is gast.Attribute:
        node = node.value
    return node.__class__ is gast.Subscript


_AST = gast.AST
(_NAME, _OTHER, _ATTRIBUTE, _SUBSCRIPT, _COMPARE, _YIELD, _ASSERT, _ALIAS, _GLOBAL, _MATCH_NAME,
 _MATCH_MAPPING, _DEF, _CLOSURE) = range(13)  # fmt: skip
_ROLES = {
    gast.Name: _NAME, gast.Attribute: _ATTRIBUTE, gast.Subscript: _SUBSCRIPT,
    gast.Compare: _COMPARE, gast.Yield: _YIELD, gast.YieldFrom: _YIELD, gast.Await: _YIELD,
    gast.Assert: _ASSERT, gast.alias: _ALIAS, gast.Global: _GLOBAL, gast.Nonlocal: _GLOBAL,
    gast.MatchAs: _MATCH_NAME, gast.MatchStar: _MATCH_NAME, gast.MatchMapping: _MATCH_MAPPING,
}  # fmt: skip
_roles: dict = {}  # node class -> (its role, its fields that may hold nodes)


def _role(kind: type) -> tuple:
    role = _ROLES.get(kind)
    if role is None and issubclass(kind, _CLOSURES):
        role = _DEF if issubclass(kind, _DEFS) else _CLOSURE
    return _OTHER if role is None else role, node_fields(kind)
