"""A module whose own ``print`` and ``len`` shadow the builtins (see test_builtins.py)."""

from __future__ import annotations

from operator import neg as len  # noqa: A004  (on purpose: an import shadows the builtin)


def print(*args, **kwargs):  # noqa: A001  (on purpose: a module function shadows the builtin)
    return "mine"


def uses_shadows(items):
    return print(items), len(1), int(3.5)


def local_shadows(items):
    len = sum  # noqa: A001

    def print(*args):  # noqa: A001
        return args

    return len(items), print(int(2.5))
