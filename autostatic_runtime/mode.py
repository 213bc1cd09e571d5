"""Which mode ops run in: dynamic (eager, the default) or static (ops append to a Program)."""

from __future__ import annotations

_static = [False]
_listeners: list = []  # called with the new flag on every switch


def on_switch(listener) -> None:
    """Call ``listener(flag)`` whenever the mode changes (and once now)."""
    _listeners.append(listener)
    listener(_static[0])


def in_dynamic_mode() -> bool:
    """True in eager mode (Paddle's ``paddle.in_dynamic_mode``)."""
    return not _static[0]


def set_static(flag: bool) -> None:
    """Switch modes (used by ``rt.enable_static``/``rt.disable_static``)."""
    _static[0] = bool(flag)
    for listener in _listeners:
        listener(_static[0])
