"""The converter's public API: ``convert``, ``to_code``, ``not_to_static`` and settings."""

from __future__ import annotations

import functools
import inspect
import textwrap
import types
from typing import Any

from autostatic import callables, lazy
from autostatic.markers import not_to_static
from autostatic.verbosity import set_code_level, set_verbosity  # noqa: F401  (no gast)

callables.install()

_GENERATORS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

__all__ = ["convert", "to_code", "not_to_static", "set_code_level", "set_verbosity"]


def convert(fn: Any) -> Any:
    """The converted form of ``fn``: same behaviour on Python values and eager tensors, and
    ``cond``/``while`` ops where a condition is a symbolic tensor.

    ``fn`` is compiled again from its source with an entry check: eager calls run its body as
    written (same frames, file and lines); while a program is traced (or with
    ``AUTOSTATIC_FORCE_CONVERTED=1``) calls run its tracing function, converted on the first
    such call. Nothing is written into ``fn``'s module. Generator and ``async`` functions are
    returned as they are (they run as written, also while tracing).

    Accepts functions, nested functions, lambdas, bound methods, ``staticmethod`` and
    ``classmethod`` objects and ``functools.partial``; returns ``fn`` itself for callables
    without Python source (builtins) and for functions marked ``@not_to_static``.
    """
    if isinstance(fn, staticmethod):
        return staticmethod(convert(fn.__func__))
    if isinstance(fn, classmethod):
        return classmethod(convert(fn.__func__))
    if isinstance(fn, functools.partial):
        return functools.partial(convert(fn.func), *fn.args, **(fn.keywords or {}))
    if inspect.ismethod(fn):
        return types.MethodType(convert(fn.__func__), fn.__self__)
    if not inspect.isfunction(fn):
        call = getattr(type(fn), "__call__", None)  # noqa: B004  (the method, not callability)
        if not isinstance(fn, type) and inspect.isfunction(call):
            return types.MethodType(convert(call), fn)
        return fn
    if (
        getattr(fn, "__autostatic_not_to_static__", False)
        or getattr(fn, "__autostatic_original__", None) is not None
        or lazy.is_entry_checked(fn)  # the hook's: converted already
        or fn.__code__.co_flags & _GENERATORS  # run as written, as the hook leaves them
    ):
        return fn
    return lazy.entry_function(fn)


def to_code(fn: Any) -> str:
    """The source of ``fn``'s tracing function (its converted body) as a string; for a
    function marked ``@not_to_static``, which is traced as written, its own source."""
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    if inspect.ismethod(fn):
        fn = fn.__func__
    if getattr(fn, "__autostatic_not_to_static__", False):
        return textwrap.dedent(inspect.getsource(fn))
    return lazy.tracing_source(fn)
