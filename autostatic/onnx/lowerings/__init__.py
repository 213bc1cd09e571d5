"""The lowering table: op type -> how it becomes ONNX nodes (one entry per op, one table).

Each family module registers its lowerings with ``@lowers("op", ...)``::

    @lowers("relu")
    def _relu(g, op):                        # g: the Graph being built (graph.py)
        g.node("Relu", [g.x(op, 0)], outputs=[g.out(0)])

``check(op, opset)`` (optional) returns why one particular use of the op cannot be exported
(batch norm in training mode, an opset too old), or None. An op type absent from
``LOWERINGS`` has no ONNX equivalent yet; ``UNSUPPORTED`` below says why for each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

__all__ = ["LOWERINGS", "Lowering", "lowers", "UNSUPPORTED"]


class Lowering(NamedTuple):
    lower: Callable
    check: Callable | None = None


LOWERINGS: dict[str, Lowering] = {}


def lowers(*op_types: str, check: Callable | None = None) -> Callable:
    """Register the decorated function as the lowering of ``op_types``."""

    def register(fn: Callable) -> Callable:
        for name in op_types:
            if name in LOWERINGS:
                raise TypeError(f"two ONNX lowerings of {name!r}")
            LOWERINGS[name] = Lowering(fn, check)
        return fn

    return register


def reason(op, opset: int) -> str | None:
    """Why ``op`` cannot be exported, or None when it can."""
    entry = LOWERINGS.get(op.type)
    if entry is None:
        if op.type in UNSUPPORTED:
            return UNSUPPORTED[op.type]
        return _GRAD if op.type.endswith("_grad") else "no ONNX lowering"  # e.g. while_grad
    return entry.check(op, opset) if entry.check is not None else None


_GRAD = "a gradient op (export the inference program)"
_RANDOM = "random numbers (ONNX Runtime's generator differs)"

#: Ops without a lowering, and why. tests/onnx checks this is exactly the set of ops that
#: have none, so a new op without a lowering is noticed (docs/deployment.md lists them).
_CRF = "no ONNX operator (a dynamic-programming recursion over the time steps)"

UNSUPPORTED: dict[str, str] = {
    **dict.fromkeys(
        [
            "array_pop_grad", "array_read_grad", "array_write_grad", "broadcast_reduced",
            "concat_grad", "conv2d_grad_filter", "conv2d_grad_input", "diagonal_grad",
            "linear_chain_crf_grad",
            "getitem_grad", "log_softmax_grad", "lookup_table_v2_grad", "max_pool2d_index_grad",
            "nll_loss_grad", "pad_dynamic_grad", "pad_grad", "pool2d_grad", "relu_grad",
            "repeat_interleave_grad", "slice_grad", "softmax_grad",
            "softmax_with_cross_entropy_grad", "sort_grad", "sort_grad_grad", "tile_grad",
            "trace_grad", "reduce_as",
        ],
        _GRAD,
    ),
    **dict.fromkeys(
        [
            "dropout", "gaussian_random", "gaussian_random_dynamic", "randint",
            "randint_dynamic", "randperm", "uniform_random", "uniform_random_dynamic",
        ],
        _RANDOM,
    ),
    "cholesky": "no ONNX operator",
    "inverse": "no ONNX operator",
    **dict.fromkeys(["crf_decoding", "linear_chain_crf"], _CRF),
    "yolo_loss_targets": "a training loss's target assignment (export the inference program)",
}  # fmt: skip


from autostatic.onnx.lowerings import (  # noqa: E402,F401  (registers the lowerings)
    control_flow,
    creation,
    elementwise,
    indexing,
    manipulation,
    nn,
    reduce,
    sequence,
)
