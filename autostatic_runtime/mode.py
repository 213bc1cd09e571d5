"""Which mode ops run in: dynamic (eager, the default) or static (ops append to a Program)."""

from __future__ import annotations

_static = [False]


def in_dynamic_mode() -> bool:
    """True in eager mode (Paddle's ``paddle.in_dynamic_mode``)."""
    return not _static[0]


def set_static(flag: bool) -> None:
    """Switch modes (used by ``rt.enable_static``/``rt.disable_static``)."""
    _static[0] = bool(flag)
