"""Paddle's ``paddle.base`` (``paddle.fluid`` before 2.6) names that older dygraph code and
tests still use: ``base.dygraph.guard()`` (eager mode inside the block), ``to_variable``,
places and the static-program entry points. Each is the runtime's own object; ``rt.fluid``
is the same module."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from autostatic_runtime.creation import to_tensor
from autostatic_runtime.nn.layer.layers import Layer
from autostatic_runtime.nn.parameter import ParamAttr
from autostatic_runtime.place import CPUPlace, CUDAPlace, is_compiled_with_cuda
from autostatic_runtime.static import (
    Executor,
    Program,
    default_main_program,
    default_startup_program,
    program_guard,
)
from autostatic_runtime.static.builder import disable_static, enable_static, in_static_mode

__all__ = [
    "dygraph", "CPUPlace", "CUDAPlace", "is_compiled_with_cuda", "ParamAttr", "Program",
    "program_guard", "Executor", "default_main_program", "default_startup_program",
]  # fmt: skip


@contextlib.contextmanager
def guard(place: Any = None) -> Iterator[None]:
    """Eager (dygraph) mode inside the block, the previous mode restored after (Paddle's
    ``base.dygraph.guard``; ``place``: accepted, tensors go to the current device)."""
    was_static = in_static_mode()
    disable_static()
    try:
        yield
    finally:
        if was_static:
            enable_static()


def to_variable(value: Any, name: str | None = None, zero_copy: Any = None, dtype: Any = None):
    """A tensor of ``value`` (Paddle's ``base.dygraph.to_variable``: ``rt.to_tensor``)."""
    return to_tensor(value, dtype=dtype)


dygraph = SimpleNamespace(
    guard=guard,
    to_variable=to_variable,
    Layer=Layer,
    base=SimpleNamespace(to_variable=to_variable, guard=guard),
)
