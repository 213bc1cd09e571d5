"""Paddle's ``paddle.framework`` names that model code calls: ``in_dynamic_mode``, ``seed``,
``_current_expected_place`` and ``random._manual_program_seed`` (which sets the
``random_seed`` of the default main and startup programs, as Paddle's; eager random numbers
follow ``rt.seed``)."""

from __future__ import annotations

from types import SimpleNamespace

from autostatic_runtime.creation import seed
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.place import expected_place as _current_expected_place  # noqa: F401

__all__ = ["in_dynamic_mode", "seed", "random"]


def _manual_program_seed(value: int) -> None:
    from autostatic_runtime.static.builder import default_main_program, default_startup_program

    default_main_program().random_seed = int(value)
    default_startup_program().random_seed = int(value)


random = SimpleNamespace(_manual_program_seed=_manual_program_seed, seed=seed)
