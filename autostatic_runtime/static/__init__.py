"""Static programs (Paddle 2.x ``paddle.static``): build, run, differentiate, serialize.

rt.enable_static()
main, startup = rt.static.Program(), rt.static.Program()
with rt.static.program_guard(main, startup):
    x = rt.static.data("x", [None, 16], "float32")
    y = rt.nn.Linear(16, 1)(x)
exe = rt.static.Executor()
exe.run(startup)
(out,) = exe.run(main, feed={"x": batch}, fetch_list=[y])
"""

from autostatic_runtime.metric import accuracy
from autostatic_runtime.ops.debugging import Print
from autostatic_runtime.static import inference_model as io  # paddle.static.io
from autostatic_runtime.static import nn
from autostatic_runtime.static.backward import append_backward, gradients
from autostatic_runtime.static.builder import (
    data,
    default_main_program,
    default_startup_program,
    name_scope,
    program_guard,
)
from autostatic_runtime.static.executor import Executor, Scope, global_scope, scope_guard
from autostatic_runtime.static.inference_model import load_inference_model, save_inference_model
from autostatic_runtime.static.input_spec import InputSpec
from autostatic_runtime.static.program import Block, Operator, Parameter, Program, Variable
from autostatic_runtime.tensor import STATIC_HOOKS as _HOOKS


def _set_value_from_variable(tensor, value) -> None:
    """``tensor.set_value(variable)`` while building: the program writes the tensor."""
    from autostatic_runtime.static.builder import capture

    capture(default_main_program(), tensor).set_value(value)


def create_global_var(
    shape, value, dtype, persistable=False, force_cpu=False, name=None
):  # fmt: skip
    """A tensor of ``shape`` filled with ``value`` (Paddle's ``paddle.static.create_global_var``):
    an eager tensor, or in a program being built a variable its ops write (``rt.assign(v,
    var)``) like any other. ``force_cpu`` is accepted and ignored (one device per program)."""
    from autostatic_runtime.creation import full

    out = full(shape, value, dtype)
    out.persistable = bool(persistable)
    return out


# The core (tensor, autograd, dispatch, backends) never imports this package; it reaches
# static mode through these hooks (dispatch's slot is set by builder.py).
_HOOKS["set_value"] = _set_value_from_variable
_HOOKS["gradients"] = gradients

__all__ = [
    "Program", "Block", "Operator", "Variable", "Parameter", "program_guard", "data",
    "default_main_program", "default_startup_program", "name_scope", "Executor", "Scope",
    "global_scope", "scope_guard", "InputSpec", "append_backward", "gradients", "nn", "Print",
    "accuracy", "save_inference_model", "load_inference_model", "create_global_var", "io",
]  # fmt: skip
