"""Errors raised by the pyct toolkit."""

from __future__ import annotations


class PyctError(Exception):
    """Base class of the toolkit's errors."""


class SourceUnavailableError(PyctError):
    """The source of a function cannot be found, so it cannot be converted.

    Raised for builtins and C functions, and for code created by ``exec``/``eval``, typed at
    the interactive prompt, or whose file changed since it was imported.
    """

    def __init__(self, fn: object, reason: str) -> None:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        self.fn = fn
        self.reason = reason
        super().__init__(f"cannot get the source of {name}: {reason}")
