"""How much autostatic tells you: ``set_verbosity`` and ``set_code_level`` (Paddle's names).

    autostatic.set_verbosity(1)    # print each retrace of a StaticFunction, with its reason
    autostatic.set_code_level(100) # print converted code (after transformer N; 100 = final)

Messages go straight to stderr, like Paddle's ``set_verbosity``: no logging set-up needed.
The environment variables ``AUTOSTATIC_VERBOSITY`` and ``AUTOSTATIC_CODE_LEVEL`` set the
starting levels. This module is small and imports nothing heavy, so setting a level never
loads the converter.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["set_verbosity", "set_code_level", "verbosity", "say"]


def _env_level(name: str) -> int:
    try:
        return int(os.environ.get(name, "0") or 0)
    except ValueError:
        return 0


_settings = {
    "code_level": _env_level("AUTOSTATIC_CODE_LEVEL"),
    "verbosity": _env_level("AUTOSTATIC_VERBOSITY"),
}


def set_code_level(level: int = 100) -> None:
    """Print the converted code after transformer ``level`` (0 = off; 100 = final code)."""
    _settings["code_level"] = int(level)


def set_verbosity(level: int = 0) -> None:
    """How much autostatic reports. 0: nothing. 1: each retrace of a StaticFunction and why
    (``autostatic: retracing f (trace 2): argument 'x' changed shape [3, 4] → [5, 4]: ...``),
    printed to stderr; the converter also logs each converted function on the ``autostatic``
    logger at INFO (shown once logging is configured). 2: also the reasons for fallbacks."""
    _settings["verbosity"] = int(level)
    logging.getLogger("autostatic").setLevel(logging.INFO if level else logging.WARNING)


def verbosity() -> int:
    """The current verbosity level."""
    return _settings["verbosity"]


def say(level: int, message: str) -> None:
    """Print ``autostatic: message`` to stderr when the verbosity is at least ``level``."""
    if _settings["verbosity"] >= level:
        print(f"autostatic: {message}", file=sys.stderr, flush=True)
