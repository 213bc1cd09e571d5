"""The stack as the user's code sees it from a converted body: ``warnings.warn(stacklevel=n)``,
``sys._getframe(n)``, ``inspect.currentframe()`` and ``inspect.stack()``.

A converted function may run under frames the original never had: the runtime's own
(``convert_ifelse`` tracing a branch, ``convert_while_loop`` stepping a loop), the branch and
loop functions holding its statements (``__true_fn_1``, ``__loop_body_2``, their lambdas),
and, while tracing, the entry check of the original function that called its tracing body
(the same function twice). ``convert_call`` hands converted code the functions below instead
of those four: they count the frames the eager program has, so a deprecation warning is
attributed to the user's caller and ``sys._getframe(1)`` is the caller's frame::

    eager                      converted, while a tensor `if` is traced
    deep_warn   <- warn        deep_warn                     <- warn
    f           (stacklevel=2) __true_fn_1  (f's `if` branch: stands for f)
    g                          convert_ops / control_flow    (the runtime: not counted)
                               f, its tracing body and its entry check (f: counted once)
                               g ...

A branch function's frame stands for its function's (the same file and lines; its name is
the branch function's). Nothing here runs on the eager path: converted code calls these
only where it called the originals.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from autostatic_runtime.errors import is_internal_file

__all__ = ["warn", "getframe", "currentframe", "stack", "REPLACEMENTS"]

_HELPERS = ("__true_fn_", "__false_fn_", "__loop_body_", "__loop_cond_")


def _is_helper(frame: Any) -> bool:
    """A branch or loop function of converted code (a lambda the runtime called counts)."""
    name = frame.f_code.co_name
    if name.startswith(_HELPERS):
        return True
    back = frame.f_back
    return name == "<lambda>" and back is not None and is_internal_file(back.f_code.co_filename)


def _is_entry_of(frame: Any, code: Any) -> bool:
    """Whether ``frame`` is the entry check that called ``code``, the tracing body of the
    same function: another code object of the same file and name, stopped at its ``def``."""
    other = frame.f_code
    return (
        other is not code
        and other.co_name == code.co_name
        and other.co_filename == code.co_filename
        and frame.f_lineno == other.co_firstlineno
    )


def user_frames(frame: Any) -> Iterator[Any]:
    """The frames from ``frame`` outwards that the eager program has (see the module
    docstring)."""
    while frame is not None:
        if is_internal_file(frame.f_code.co_filename):
            frame = frame.f_back
            continue
        yield frame
        code = frame.f_code
        if _is_helper(frame):  # the runtime, outer branch functions, then their owner
            frame = frame.f_back
            while frame is not None and (
                is_internal_file(frame.f_code.co_filename) or _is_helper(frame)
            ):
                frame = frame.f_back
            if frame is None:
                return
            code = frame.f_code  # the owner: stood for by the branch function's frame
        frame = frame.f_back
        if frame is not None and _is_entry_of(frame, code):
            frame = frame.f_back


def _is_import_frame(frame: Any) -> bool:
    """Frames ``warnings`` skips when it counts a stacklevel (the import system's)."""
    name = frame.f_code.co_filename
    return "importlib" in name and "_bootstrap" in name


def warn(
    message: Any, category: Any = None, stacklevel: int = 1, source: Any = None, **more: Any
) -> None:
    """``warnings.warn``, its ``stacklevel`` counted over the eager program's frames."""
    me = sys._getframe(0)
    level = stacklevel + 1  # (past this function) when the stack is shorter than asked
    if stacklevel >= 1:
        for depth, frame in enumerate(user_frames(me.f_back), start=1):
            if depth == stacklevel:
                level = _raw_level(me, frame)
                break
    warnings.warn(message, category, level, source, **more)


def _raw_level(me: Any, target: Any) -> int:
    """The ``stacklevel`` for ``warnings.warn`` called in ``me`` that names ``target``."""
    level, frame = 1, me
    while frame is not None and frame is not target:
        frame = frame.f_back
        if frame is not None and not _is_import_frame(frame):
            level += 1
    return level


def getframe(depth: int = 0) -> Any:
    """``sys._getframe(depth)`` over the eager program's frames."""
    depth = int(depth)
    if depth < 0:
        return sys._getframe(depth)  # Python's own ValueError
    for n, frame in enumerate(user_frames(sys._getframe(1))):
        if n == depth:
            return frame
    raise ValueError("call stack is not deep enough")


def currentframe() -> Any:
    """``inspect.currentframe()``: the calling (user) frame."""
    return sys._getframe(1)


def stack(context: int = 1) -> list:
    """``inspect.stack(context)`` over the eager program's frames."""
    return [
        inspect.FrameInfo(frame, *inspect.getframeinfo(frame, context))
        for frame in user_frames(sys._getframe(1))
    ]


#: what ``convert_call`` gives converted code for each of these functions
REPLACEMENTS = {
    warnings.warn: warn,
    sys._getframe: getframe,
    inspect.currentframe: currentframe,
    inspect.stack: stack,
}
