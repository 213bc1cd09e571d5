"""What a trace raises when the XLA compiler cannot (yet) take a block."""

from __future__ import annotations

from typing import Any


class NeedsKey(Exception):
    """The block draws random numbers: trace it again with a key argument."""


class Unlowerable(Exception):
    """``op`` cannot run inside one XLA computation, for ``reason``."""

    def __init__(self, op: Any, reason: str):
        super().__init__(reason)
        self.op, self.reason = op, reason
