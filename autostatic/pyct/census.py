"""What a function's source holds, found in one walk before any pass runs.

The converter takes its fresh names from ``names``, and a pass with nothing to rewrite is
skipped: no chained comparison, no ``.shape``, no call of a converted builtin, no closure
whose captured names matter; without ``yield``/``await`` the walks for returns and jumps
look at statements only.
The lowering passes that run first add only flags, loops and ``if``\\s, never any of these,
so the census stays true for the passes after them.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from autostatic.pyct.nodes import walk

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
    item_stores: bool = True  # a subscript stored or deleted (``d[k] = v``, ``del x[i]``)

    @classmethod
    def of(cls, fn: gast.AST) -> Census:
        names: set = set()
        attrs: set = set()
        bound: set = set()
        chained = closures = yields = item_stores = False
        for node in walk(fn):
            kind = node.__class__
            if kind is gast.Name:  # (the most common node: neither a closure nor a def)
                names.add(node.id)
                if node.ctx.__class__ is not gast.Load:
                    bound.add(node.id)
                continue
            if kind is gast.Attribute:
                attrs.add(node.attr)
                continue
            if kind is gast.Constant:
                continue
            if kind is gast.Subscript:
                item_stores = item_stores or node.ctx.__class__ is not gast.Load
                continue
            if kind is gast.Compare:
                chained = chained or len(node.ops) > 1
            elif kind is gast.Yield or kind is gast.YieldFrom or kind is gast.Await:
                yields = True
            elif kind is gast.alias:
                local = node.asname or node.name
                names.update((node.name, local))
                bound.add(local.partition(".")[0])
            elif kind is gast.Global or kind is gast.Nonlocal:
                bound.update(node.names)
            elif kind in (gast.MatchAs, gast.MatchStar) and node.name:
                names.add(node.name)
                bound.add(node.name)
            elif kind is gast.MatchMapping and node.rest:
                names.add(node.rest)
                bound.add(node.rest)
            if isinstance(node, _CLOSURES) and node is not fn:
                closures = True
            if isinstance(node, _DEFS):
                names.add(node.name)
                bound.add(node.name)
        return cls(names, attrs, bound, chained, closures, yields, item_stores)
