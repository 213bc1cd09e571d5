"""User-facing runtime errors. Each names the op, what was wrong, and the user's call site."""

from __future__ import annotations

import os
import sys

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
_COMPILER_DIR = os.path.join(os.path.dirname(_RUNTIME_DIR), "autostatic")
_INTERNAL = (_RUNTIME_DIR + os.sep, _COMPILER_DIR + os.sep)


def is_internal_file(filename: str) -> bool:
    """True for autostatic's own files and generated code (frames hidden from users)."""
    return filename.startswith(_INTERNAL) or filename.startswith("<autostatic")


def user_frame(depth: int = 1):
    """The innermost stack frame that is not inside autostatic (the user's call site).

    Modules that wrap runtime calls on a user's behalf (test harnesses, generated helpers)
    opt out of being "the user" with a global ``__autostatic_internal__ = True``.
    """
    frame = sys._getframe(depth)
    while frame is not None and (
        is_internal_file(frame.f_code.co_filename) or "__autostatic_internal__" in frame.f_globals
    ):
        frame = frame.f_back
    return frame


def user_location(depth: int = 1) -> tuple[str, int, str] | None:
    """(file, line, function) of the user's call site, or None when there is none."""
    frame = user_frame(depth + 1)
    if frame is None:
        return None
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name


def format_location(loc: tuple[str, int, str] | None) -> str:
    if loc is None:
        return ""
    return f" at {loc[0]}:{loc[1]}"


class AutostaticError(Exception):
    """Base class of every error autostatic raises on purpose."""


class OpError(AutostaticError, ValueError):
    """An op was called with inputs it cannot take (shapes, dtypes, axes, devices)."""

    def __init__(self, op: str, message: str, location: tuple[str, int, str] | None = None):
        self.op = op
        self.detail = message
        self.location = location
        super().__init__(f"{op}: {message}{format_location(location)}")


class ShapeError(OpError):
    """Input shapes do not fit the op."""


class DTypeError(OpError, TypeError):
    """Input dtypes do not fit the op."""


class DeviceError(OpError):
    """Inputs live on different devices, or the device is unavailable."""


def fail(op: str, message: str, cls: type[OpError] = OpError) -> OpError:
    """Build an OpError located at the user's call site (raise the result)."""
    return cls(op, message, user_location(2))


class ProgramFormatError(AutostaticError, ValueError):
    """A serialized program or weights file is corrupt, truncated, or from a newer version."""


class StaticBuildError(AutostaticError):
    """A static program cannot be built as written (branches disagree, a loop var changes type)."""

    def __init__(self, message: str, location: tuple[str, int, str] | None = None):
        self.detail = message  # without the location
        self.location = location
        super().__init__(f"{message}{format_location(location)}")


class ExecutionError(AutostaticError):
    """An op failed while a static program ran; names the op and the user's line that built it."""

    def __init__(self, op_type: str, location: tuple[str, int, str] | None, cause: BaseException):
        self.op_type = op_type
        self.location = location
        super().__init__(
            f"{op_type} failed{format_location(location)}: {type(cause).__name__}: {cause}"
        )


class AssertionFailedError(ExecutionError, AssertionError):
    """An ``assert`` on a symbolic tensor (an ``assert`` op) failed when the program ran;
    names the user's file and line (also an ``AssertionError``, as Python's would be)."""

    def __init__(self, message: str, location: tuple[str, int, str] | None = None):
        self.op_type = "assert"
        self.location = location
        Exception.__init__(self, f"{message}{format_location(location)}")
