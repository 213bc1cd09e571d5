"""``Layer._helper``: Paddle 1.x's ``LayerHelper``, with which older layers build their ops
by Paddle op type while a program is built:

    out = self._helper.create_variable_for_type_inference(dtype="float32")
    self._helper.append_op(type="linear_chain_crf", inputs={"Emission": [x], ...},
                           outputs={"LogLikelihood": out, ...}, attrs={"is_test": False})

Each output variable is a placeholder until ``append_op`` computes the op with the runtime's
function of that type and makes the placeholder stand for the result. The op types below are
those Paddle's model code appends this way; another type is a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LayerHelper"]


def _one(slots: dict, name: str) -> Any:
    value = slots.get(name)
    if isinstance(value, (list, tuple)):
        return value[0] if value else None
    return value


def _crf(inputs: dict, attrs: dict) -> dict:
    from autostatic_runtime.nn.functional.crf import linear_chain_crf

    outs = linear_chain_crf(_one(inputs, "Emission"), _one(inputs, "Transition"),
                            _one(inputs, "Label"), _one(inputs, "Length"))  # fmt: skip
    return dict(zip(("Alpha", "EmissionExps", "TransitionExps", "LogLikelihood"), outs))


def _decode(inputs: dict, attrs: dict) -> dict:
    from autostatic_runtime.nn.functional.crf import crf_decoding

    path = crf_decoding(_one(inputs, "Emission"), _one(inputs, "Transition"),
                        _one(inputs, "Label"), _one(inputs, "Length"))  # fmt: skip
    return {"ViterbiPath": path}


_OPS: dict[str, Callable[[dict, dict], dict]] = {"linear_chain_crf": _crf, "crf_decoding": _decode}


class LayerHelper:
    """Paddle's ``LayerHelper`` for one layer (``layer._helper``)."""

    def __init__(self, layer: Any):
        self.layer = layer

    def create_variable_for_type_inference(self, dtype: Any, stop_gradient: bool = False) -> Any:
        """A placeholder for an op's output; ``append_op`` gives it its value."""
        from autostatic_runtime.static.builder import default_main_program
        from autostatic_runtime.static.program import Variable

        program = default_main_program()
        block = program.current_block()
        return Variable(block, program.unique_name("tmp"), (), dtype, False, stop_gradient)

    def append_op(self, type: str, inputs: dict | None = None, outputs: dict | None = None,
                  attrs: dict | None = None, **kwargs: Any) -> None:  # fmt: skip
        """Compute op ``type`` (Paddle's slot names) and bind its results to ``outputs``."""
        from autostatic_runtime.errors import StaticBuildError, user_location
        from autostatic_runtime.static.program import Variable

        build = _OPS.get(type)
        if build is None:
            raise StaticBuildError(
                f"{self.layer.__class__.__name__}._helper.append_op(type={type!r}): this op type "
                f"cannot be appended by name (these can: {', '.join(sorted(_OPS))}); call the "
                "runtime's function for it instead",
                user_location(),
            )
        results = build(inputs or {}, attrs or {})
        for slot, targets in (outputs or {}).items():
            target = targets[0] if isinstance(targets, (list, tuple)) else targets
            if slot in results and isinstance(target, Variable):
                target._replace(results[slot])
