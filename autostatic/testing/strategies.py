"""Hypothesis strategies for tensors and for the arguments an ``input_spec`` describes.

    from autostatic.testing import tensors, input_specs_to_strategy

    tensors([None, 3])                           # float32 Tensors of shape [k, 3], k in 1..4
    tensors(InputSpec([2, None], "int64"))       # int64 Tensors of shape [2, k]
    input_specs_to_strategy([InputSpec([None, 3], name="x"), InputSpec([None], name="y")])
    # -> tuples (x, y) whose None dims at the same position share one size: x.shape[0] == y.shape[0]

Arrays come from ``hypothesis.extra.numpy``; elements default to small finite values (floats
in [-4, 4], ints in [-8, 8]) so that examples exercise control flow rather than overflow.

**Named dims.** ``None`` dimensions are drawn per example. By default a ``None`` at position
``i`` of every spec shares one size (the usual batch dimension). Pass ``dims=`` to say
otherwise: a mapping from an argument (its ``InputSpec`` name or its position) to one entry
per dimension, where a string names a size shared by every dimension with that name and
``None`` draws the dimension on its own::

    input_specs_to_strategy(specs, dims={"q": ("batch", "len"), "k": ("batch", "mem")})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autostatic_runtime.static.input_spec import InputSpec

__all__ = ["tensors", "arrays", "input_specs_to_strategy", "default_elements"]

MAX_SIDE = 4


def default_elements(dtype: Any) -> st.SearchStrategy:
    """Small finite values for ``dtype`` (what ``tensors`` draws unless given ``elements``)."""
    dt = np.dtype(str(dtype))
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -8
        return st.integers(lo, 8)
    if dt.kind == "f":
        width = min(dt.itemsize * 8, 64)
        return st.floats(-4, 4, width=width, allow_nan=False, allow_infinity=False)
    if dt.kind == "c":
        return st.complex_numbers(max_magnitude=4, allow_nan=False, allow_infinity=False)
    raise TypeError(f"tensors: no default elements for dtype {dt}; pass elements=")


def _spec(spec_or_shape: Any, dtype: Any) -> InputSpec:
    if isinstance(spec_or_shape, InputSpec):
        if dtype is not None and str(dtype) != str(spec_or_shape.dtype):
            return InputSpec(spec_or_shape.shape, dtype, spec_or_shape.name)
        return spec_or_shape
    return InputSpec(spec_or_shape, dtype or "float32")


def _shape(spec: InputSpec, names: Sequence | None, sizes: dict, draw, min_side, max_side):
    shape = []
    for i, d in enumerate(spec.shape):
        if d is not None:
            shape.append(d)
            continue
        name = names[i] if names is not None and i < len(names) else None
        if name is None:
            shape.append(draw(st.integers(min_side, max_side)))
        else:
            if name not in sizes:
                sizes[name] = draw(st.integers(min_side, max_side))
            shape.append(sizes[name])
    return tuple(shape)


def arrays(
    spec_or_shape: Any,
    dtype: Any = None,
    elements: st.SearchStrategy | None = None,
    min_side: int = 1,
    max_side: int = MAX_SIDE,
) -> st.SearchStrategy:
    """Like ``tensors`` but gives NumPy arrays."""
    spec = _spec(spec_or_shape, dtype)
    return _arrays_for(spec, None, {}, elements, min_side, max_side)


def _arrays_for(spec, names, sizes, elements, min_side, max_side) -> st.SearchStrategy:
    np_dtype = np.dtype(str(spec.dtype))
    elems = elements if elements is not None else default_elements(np_dtype)

    @st.composite
    def build(draw):
        shape = _shape(spec, names, sizes, draw, min_side, max_side)
        return draw(hnp.arrays(np_dtype, shape, elements=elems))

    return build()


def tensors(
    spec_or_shape: Any,
    dtype: Any = None,
    elements: st.SearchStrategy | None = None,
    min_side: int = 1,
    max_side: int = MAX_SIDE,
) -> st.SearchStrategy:
    """Eager Tensors matching an ``InputSpec`` or a shape (``None`` = any size).

    Args:
        spec_or_shape: an ``InputSpec``, or a shape such as ``[None, 3]``.
        dtype: the dtype (default: the spec's, or float32 for a shape).
        elements: a strategy for the values (default: ``default_elements(dtype)``).
        min_side, max_side: bounds of each ``None`` dimension.

    Returns:
        A strategy of ``autostatic_runtime.Tensor`` (``stop_gradient=True``).
    """
    import autostatic_runtime as rt

    return arrays(spec_or_shape, dtype, elements, min_side, max_side).map(rt.to_tensor)


def _names_for(specs: list, dims: Mapping | None) -> list:
    """Per spec, the dimension names (shared-size keys) of its None dims."""
    out = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, InputSpec):
            out.append(None)
            continue
        given = None
        if dims is not None:
            given = dims.get(spec.name) if spec.name in dims else dims.get(i)
        if given is not None:
            if len(given) != len(spec.shape):
                raise ValueError(
                    f"dims for {spec.name or i!r} has {len(given)} entries but {spec} has "
                    f"{len(spec.shape)} dimensions"
                )
            out.append(tuple(given))
        else:
            out.append(tuple(f"__dim{k}" for k in range(len(spec.shape))))
    return out


def input_specs_to_strategy(
    specs: Sequence[Any],
    dims: Mapping | None = None,
    elements: Mapping | st.SearchStrategy | None = None,
    min_side: int = 1,
    max_side: int = MAX_SIDE,
    as_numpy: bool = True,
) -> st.SearchStrategy:
    """A strategy of argument tuples for ``specs`` (the ``input_spec`` of a function).

    Args:
        specs: ``InputSpec``s, nested lists/tuples/dicts of them, or plain Python values
            (passed through unchanged).
        dims: named dimensions (see the module docstring); by default ``None`` dims at the
            same position share one size.
        elements: one strategy for every tensor, or a mapping from spec name (or position)
            to a strategy.
        min_side, max_side: bounds of each ``None`` dimension.
        as_numpy: give NumPy arrays (default) or eager Tensors.

    Returns:
        A strategy of tuples, one entry per spec.
    """
    specs = list(specs)
    names = _names_for(specs, dims)

    def elems_for(i, spec):
        if elements is None or isinstance(elements, st.SearchStrategy):
            return elements
        key = spec.name if spec.name in elements else i
        return elements.get(key)

    @st.composite
    def build(draw):
        sizes: dict = {}

        def one(spec, i, nm):
            if isinstance(spec, InputSpec):
                strategy = _arrays_for(spec, nm, sizes, elems_for(i, spec), min_side, max_side)
                value = draw(strategy)
                if as_numpy:
                    return value
                import autostatic_runtime as rt

                return rt.to_tensor(value)
            if isinstance(spec, (list, tuple)):
                return type(spec)(one(s, i, None) for s in spec)
            if isinstance(spec, dict):
                return {k: one(v, i, None) for k, v in spec.items()}
            return spec

        return tuple(one(s, i, nm) for i, (s, nm) in enumerate(zip(specs, names)))

    return build()
