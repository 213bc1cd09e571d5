"""One namer per converted function: generated names never clash with the user's."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from autostatic.pyct.census import Census


class Namer:
    """Hands out ``prefix_N`` names unused by the function, its globals and each other."""

    def __init__(self, taken: Iterable[str] = ()):
        self.taken = set(taken)
        self._counter = itertools.count()

    @classmethod
    def for_function(cls, census: Census, global_names: Iterable[str]) -> Namer:
        """A namer avoiding the names of a function (its ``Census``) and of its globals."""
        return cls(census.names | set(global_names))

    def new(self, prefix: str) -> str:
        while True:
            candidate = f"__{prefix}_{next(self._counter)}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def reserve(self, name: str) -> str:
        """``name`` itself if free, else a numbered variant ``name_1``... (never a ``__x``
        name: methods of a class in the function read it, and a class body mangles those)."""
        candidate, k = name, 0
        while candidate in self.taken:
            k += 1
            candidate = f"{name}_{k}"
        self.taken.add(candidate)
        return candidate
