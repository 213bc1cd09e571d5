"""One namer per converted function: generated names never clash with the user's."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import gast

from autostatic.pyct.nodes import walk


class Namer:
    """Hands out ``prefix_N`` names unused by the function, its globals and each other."""

    def __init__(self, taken: Iterable[str] = ()):
        self.taken = set(taken)
        self._counter = itertools.count()

    @classmethod
    def for_function(cls, node: gast.AST, global_names: Iterable[str]) -> Namer:
        every = walk(node)
        names = {n.id for n in every if isinstance(n, gast.Name)}
        names |= {getattr(n, "name", "") for n in every}
        return cls(names | set(global_names))

    def new(self, prefix: str) -> str:
        while True:
            candidate = f"__{prefix}_{next(self._counter)}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def reserve(self, name: str) -> str:
        """``name`` itself if free, else a numbered variant."""
        if name not in self.taken:
            self.taken.add(name)
            return name
        return self.new(name.strip("_"))
