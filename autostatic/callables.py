"""Which callables ``convert_call`` converts while tracing, and the cache of their results.

Converted code calls ``_jst.convert_call(f)(*args)`` while a static program is being built,
so a tensor-dependent ``if`` inside a helper, a method or a sublayer's ``forward`` becomes a
``cond`` op too. User functions, methods, callable objects and ``Layer.forward`` are
converted once and cached; builtins, classes, the standard library, numpy, autostatic and
autostatic_runtime are returned as they are, and so is anything that cannot be converted
(no source): it still runs, as Python. ``warnings.warn``, ``sys._getframe``,
``inspect.stack`` and ``inspect.currentframe`` become ``autostatic_runtime.frames``' forms,
which count the frames the eager program has.
"""

from __future__ import annotations

import functools
import logging
import sys
import types
from collections.abc import Callable
from typing import Any

import autostatic_runtime.convert_ops as convert_ops
from autostatic.hook.entry import SOURCE
from autostatic_runtime.frames import REPLACEMENTS
from autostatic_runtime.nn.layer.layers import Layer

log = logging.getLogger("autostatic")

#: Top-level packages whose functions are never converted.
SKIPPED_PACKAGES = frozenset(sys.stdlib_module_names) | {
    "autostatic", "autostatic_runtime", "autostatic_switch", "numpy", "cupy", "gast", "google",
    "array_api_compat", "array_api_strict", "hypothesis", "pytest", "_pytest", "pluggy", "scipy",
}  # fmt: skip

_CONVERTED = "__autostatic_converted__"  # attribute of the original holding its result


def convert_callable(fn: Any) -> Any:
    """The form of ``fn`` to call while tracing (see the module docstring)."""
    kind = type(fn)
    if kind is types.FunctionType:
        return _function(fn)
    if kind is types.BuiltinFunctionType or kind is type:  # a builtin under another name
        return _BUILTINS.get(fn, fn)  # (fn = range; fn(n)), warnings.warn, sys._getframe
    if kind is types.MethodType:
        func = _function(fn.__func__)
        return fn if func is fn.__func__ else types.MethodType(func, fn.__self__)
    if isinstance(fn, Layer):
        forward = convert_callable(fn.forward)
        if type(fn).__call__ is not Layer.__call__ or forward is fn.forward:
            return fn
        return functools.partial(fn._call_with, forward)
    if isinstance(fn, (type, functools.partial)) or not callable(fn):
        return fn
    call = getattr(kind, "__call__", None)  # noqa: B004  (the method, not callability)
    if type(call) is types.FunctionType:
        converted = _function(call)
        return fn if converted is call else types.MethodType(converted, fn)
    return fn


def _called_as(convert: Callable, builtin: Any) -> Callable:
    """``convert(builtin, *args)`` as a function of ``args`` (``convert_range``'s form)."""
    return functools.partial(convert, builtin)


#: builtins converted code calls through another name (``fn = len`` then ``fn(x)``): the
#: forms the converter gives a call of the name itself (``len(x)`` is ``convert_len(x)``)
_BUILTINS = {
    **REPLACEMENTS,
    range: _called_as(convert_ops.convert_range, range),
    enumerate: _called_as(convert_ops.convert_enumerate, enumerate),
    zip: _called_as(convert_ops.convert_zip, zip),
    len: convert_ops.convert_len,
    int: convert_ops.convert_int,
    float: convert_ops.convert_float,
    bool: convert_ops.convert_bool,
    max: convert_ops.convert_max,
    min: convert_ops.convert_min,
    print: convert_ops.convert_print,
    isinstance: convert_ops.convert_isinstance,
}


def _function(fn: types.FunctionType) -> types.FunctionType:
    """The converted ``fn``, remembered on ``fn`` itself (the pair is freed together)."""
    found = fn.__dict__.get(_CONVERTED)
    if found is not None:
        return found
    result = REPLACEMENTS.get(fn, fn)  # inspect.stack, inspect.currentframe
    if result is fn and _wanted(fn):
        from autostatic.api import convert

        try:
            result = convert(fn)
        except Exception as exc:  # no source, or a construct conversion rejects: run as is
            log.info("autostatic: %s runs unconverted: %s", fn.__qualname__, exc)
    fn.__dict__[_CONVERTED] = result
    return result


def _wanted(fn: types.FunctionType) -> bool:
    if getattr(fn, "__autostatic_not_to_static__", False):
        return False
    if getattr(fn, "__autostatic_original__", None) is not None:
        return False
    from autostatic.lazy import is_entry_checked

    if is_entry_checked(fn):  # the hook's: its entry check finds its tracing function
        return False
    if convert_ops.FORCE_CONVERTED and _hook_converted(fn):
        return False  # the hook made it its tracing function already
    module = fn.__module__ or ""
    return module.partition(".")[0] not in SKIPPED_PACKAGES


def _hook_converted(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s module was compiled by the hook (it sets ``__autostatic_source__``;
    a module that merely imports the runtime's ``convert_ops`` is not)."""
    return isinstance(fn.__globals__.get(SOURCE), str)


def install() -> Callable:
    """Make ``_jst.convert_call`` convert (done when ``autostatic`` is imported)."""
    convert_ops._call_converter[0] = convert_callable
    return convert_callable
