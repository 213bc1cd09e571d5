"""Markers users put on their code; importing this module never loads the converter."""

from __future__ import annotations

from collections.abc import Callable


def not_to_static(fn: Callable) -> Callable:
    """Decorator: leave ``fn`` unconverted (``convert`` returns it as it is)."""
    target = fn
    while hasattr(target, "__func__"):  # bound methods, staticmethod, classmethod
        target = target.__func__
    target.__autostatic_not_to_static__ = True
    return fn
