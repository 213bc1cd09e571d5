"""Automatic mixed precision, Paddle's ``paddle.amp``.

    scaler = rt.amp.GradScaler(init_loss_scaling=1024)
    with rt.amp.auto_cast():                  # white-list ops in float16 on a GPU
        loss = model(x, label=y)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.minimize(opt, scaled)              # skipped when a gradient is inf/nan

- ``auto_cast`` / ``amp_guard`` (``autocast.py``): per-thread, nestable casts of each op's
  inputs, eager and while a program is traced (the casts are ``cast`` ops);
- ``GradScaler`` / ``AmpScaler`` (``grad_scaler.py``): dynamic loss scaling, also inside a
  training step compiled by ``autostatic.to_static``;
- ``decorate`` / ``amp_decorate`` (``decorate.py``): O2 parameters in float16 with float32
  master weights in the optimizers (``master.py``);
- ``is_float16_supported`` / ``is_bfloat16_supported``: whether a device computes in them.

On the CPU (NumPy) no dtype is supported: ``auto_cast`` warns and has no effect and
``decorate`` returns its arguments, as Paddle does on a place without low-precision kernels;
``GradScaler`` works everywhere.
"""

from __future__ import annotations

from autostatic_runtime.amp.autocast import (
    AmpWarning,
    amp_guard,
    auto_cast,
    is_bfloat16_supported,
    is_float16_supported,
)
from autostatic_runtime.amp.decorate import amp_decorate, decorate
from autostatic_runtime.amp.grad_scaler import AmpScaler, GradScaler
from autostatic_runtime.amp.lists import black_list, white_list

__all__ = [
    "auto_cast",
    "amp_guard",
    "decorate",
    "amp_decorate",
    "GradScaler",
    "AmpScaler",
    "AmpWarning",
    "is_float16_supported",
    "is_bfloat16_supported",
    "white_list",
    "black_list",
]
