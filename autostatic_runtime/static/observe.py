"""Run-time observation of ``cond`` and ``while`` ops (branch coverage for tests).

The block compiler inlines ``cond``/``while`` as Python ``if``/``while`` statements. When an
observer is registered *while a block is compiled*, the generated code also reports which
branch each ``cond`` took and how many iterations each ``while`` ran::

    with observe(recorder):            # recorder.on_cond(op, taken), recorder.on_while(op, n)
        static_fn(x)                   # compiled (and run) inside: instrumented

Blocks compiled with no observer registered contain no extra code, so this costs nothing
when unused; an instrumented block whose observer has gone simply reports to nobody.
Gradient ops (``op_role == "backward"``) are never instrumented. ``autostatic.testing``
uses this to warn about branches its examples never took.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["observe", "active", "notify_cond", "notify_while"]

_observers: list[Any] = []


def active() -> bool:
    """True while some observer is registered (checked when a block is compiled)."""
    return bool(_observers)


@contextlib.contextmanager
def observe(observer: Any) -> Iterator[Any]:
    """Register ``observer`` (``on_cond(op, taken: bool)``, ``on_while(op, iterations: int)``)
    for the duration of the block."""
    _observers.append(observer)
    try:
        yield observer
    finally:
        _observers.remove(observer)


def notify_cond(op: Any, taken: bool) -> None:
    for obs in _observers:
        obs.on_cond(op, taken)


def notify_while(op: Any, iterations: int) -> None:
    for obs in _observers:
        obs.on_while(op, iterations)


def instrument(op: Any) -> bool:
    """Whether the compiler should instrument ``op`` now."""
    return bool(_observers) and op.attrs.get("op_role") != "backward"
