"""Lowerings of tensor creation and shape queries.

Creation ops whose attributes fix the whole value (``arange(1, 10, 2)``, ``eye(3)``,
``rt.to_tensor([...])``) become ONNX constants computed by the op's own NumPy kernel.
"""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from autostatic.onnx.graph import onnx_dtype
from autostatic.onnx.lowerings import lowers
from autostatic_runtime import dtypes
from autostatic_runtime.backends import get_backend
from autostatic_runtime.ops.registry import OPS


@lowers("assign_value", "arange", "linspace", "eye", "create_array")
def _folded(g, op):
    xp = get_backend("numpy").xp
    value = OPS[op.type].kernel(xp, **op.attrs)
    g.node("Identity", [g.const(value, op.outputs[0].dtype)], outputs=[g.out(0)])


def _of_shape(g, shape: str, value, dtype, out: str) -> None:
    """``full(shape, value, dtype)`` for an int64 shape tensor."""
    fill = numpy_helper.from_array(np.asarray([value], dtype=np.dtype(str(dtype))))
    g.node("ConstantOfShape", [shape], outputs=[out], value=fill)


@lowers("fill_constant")
def _fill_constant(g, op):
    """A ConstantOfShape (the file holds one value, not the whole tensor)."""
    dt = dtypes.convert_dtype(op.attrs["dtype"])
    _of_shape(g, g.ints(op.attrs["shape"]), op.attrs["value"], dt, g.out(0))


@lowers("full_like")
def _full_like(g, op):
    dt = dtypes.convert_dtype(op.attrs["dtype"])
    _of_shape(g, g.node("Shape", [g.x(op, 0)]), op.attrs["value"], dt, g.out(0))


@lowers("fill_constant_dynamic")
def _fill_dynamic(g, op):
    dt = dtypes.convert_dtype(op.attrs["dtype"])
    shape = g.x(op, 0, dtypes.int64)
    _of_shape(g, shape, op.attrs["value"], dt, g.out(0))


@lowers("shape")
def _shape(g, op):
    g.node("Cast", [g.node("Shape", [g.x(op, 0)])], outputs=[g.out(0)], to=onnx_dtype("int32"))


@lowers("size")
def _size(g, op):
    g.node("Size", [g.x(op, 0)], outputs=[g.out(0)])


@lowers("range")
def _range(g, op):
    dt = op.outputs[0].dtype
    ends = [g.node("Reshape", [g.x(op, i, dt), g.ints([])]) for i in range(3)]
    g.node("Range", ends, outputs=[g.out(0)])
