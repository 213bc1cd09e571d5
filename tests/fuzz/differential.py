"""Run one generated function original vs converted (both bodies) and compare outcomes."""

from __future__ import annotations

import copy

import autostatic_runtime.convert_ops as convert_ops
from autostatic.hook.module_conversion import convert_module_source

FILENAME = "<fuzz>"


def load(source: str) -> tuple:
    """``(original f, converted f)`` from a module source defining ``f``."""
    plain: dict = {}
    exec(compile(source, FILENAME, "exec"), plain)
    code, result = convert_module_source(source, FILENAME)
    assert not result.failures, result.failures
    converted: dict = {}
    exec(code, converted)
    return plain["f"], converted["f"]


def outcome(fn, args: tuple):
    """``("ok", result, args after)`` or ``("raised", exception type)``, as comparable reprs."""
    args = copy.deepcopy(args)
    try:
        value = fn(*args)
    except Exception as exc:
        return ("raised", type(exc).__name__)
    return ("ok", repr(value), repr(args))


def check(source: str, inputs: list) -> None:
    """Original == converted on each args tuple of ``inputs``, with both converted bodies."""
    original, converted = load(source)
    saved = convert_ops.tracing
    try:
        for args in inputs:
            want = outcome(original, args)
            for tracing in (False, True):
                convert_ops.tracing = tracing
                got = outcome(converted, args)
                body = "converted (tracing)" if tracing else "original (eager)"
                assert got == want, f"{body} body differs on {args!r}:\n{source}\n{got} != {want}"
            convert_ops.tracing = saved
    finally:
        convert_ops.tracing = saved
