"""Which mode ops run in: dynamic (eager, the default) or static (ops append to a Program).

The mode belongs to a thread: ``enable_static``/``static_guard`` (and so a trace) switch the
calling thread only, and eager code in other threads keeps computing eagerly. Two flags keep
the eager path as fast as before:

- ``_static[0]``: process-wide, True while *any* thread is in static mode (a plain list read);
- ``_local.static``: True in a thread that is in static mode.

Hot paths test the process-wide flag first and the thread-local one only when it is set
(``static_here``). Listeners (``on_switch``) hear the process-wide flag.
"""

from __future__ import annotations

import threading

import autostatic_switch

__all__ = ["in_dynamic_mode", "set_static", "static_here", "on_switch"]


class _ThreadState(threading.local):
    static = False  # class default: a new thread starts eager


_local = _ThreadState()
_static = [False]  # True while at least one thread is in static mode
_count = [0]  # threads in static mode
_lock = threading.Lock()
_listeners: list = []  # called with the process-wide flag on every switch


def _follow(any_static: bool) -> None:
    """The flag a marked module's entry checks read (``autostatic_switch``: it loads nothing,
    so the hook's modules import without the runtime) follows the process-wide flag."""
    autostatic_switch.tracing = any_static or autostatic_switch.FORCE_CONVERTED


_listeners.append(_follow)


def on_switch(listener) -> None:
    """Call ``listener(any_static)`` whenever the process-wide flag may change (and once now)."""
    _listeners.append(listener)
    listener(_static[0])


def static_here() -> bool:
    """True when the calling thread is in static mode (building a program)."""
    return _static[0] and _local.static


def in_dynamic_mode() -> bool:
    """True in eager mode (Paddle's ``paddle.in_dynamic_mode``), for the calling thread."""
    return not (_static[0] and _local.static)


def set_static(flag: bool) -> bool:
    """Switch the calling thread's mode (``rt.enable_static``/``rt.disable_static``).

    Returns the process-wide flag afterwards (True while any thread is static).
    """
    flag = bool(flag)
    with _lock:
        if flag != _local.static:
            _local.static = flag
            _count[0] += 1 if flag else -1
        _static[0] = _count[0] > 0
        for listener in _listeners:
            listener(_static[0])
        return _static[0]
