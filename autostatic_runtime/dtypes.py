"""Data types: Paddle-style names, one canonical object per type, Paddle's promotion rules.

A ``DType`` is a ``str`` subclass (``rt.float32 == "float32"``), so it serializes as its
name, hashes like it, and compares equal to NumPy dtypes and type objects of the same name:

    >>> rt.float32 == "float32" == np.float32
    True
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DType",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "float16",
    "float32",
    "float64",
    "convert_dtype",
    "get_default_dtype",
    "set_default_dtype",
]


class DType(str):
    """A tensor element type, named as in Paddle (``float32``, ``int64``, ``bool``...)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"autostatic_runtime.{self}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str.__eq__(self, other)
        try:
            return str.__eq__(self, convert_dtype(other))
        except TypeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__

    @property
    def is_floating(self) -> bool:
        return self in _FLOATS

    @property
    def is_integer(self) -> bool:
        return self in _INTS

    @property
    def itemsize(self) -> int:
        return np.dtype(str(self)).itemsize


bool_ = DType("bool")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")

ALL = {d: d for d in (bool_, int8, int16, int32, int64, uint8, float16, float32, float64)}
_FLOATS = frozenset((float16, float32, float64))
_INTS = frozenset((int8, int16, int32, int64, uint8))
_ALIASES = {"float": float32, "int": int64, "double": float64, "half": float16, "bool_": bool_}
_default_float = [float32]


def convert_dtype(dtype: object) -> DType:
    """Return the canonical DType for a name, NumPy dtype, array-API dtype or Python type."""
    if type(dtype) is DType:
        return dtype
    if isinstance(dtype, str):
        found = ALL.get(dtype) or _ALIASES.get(dtype)
        if found is None:
            raise TypeError(f"unknown dtype {dtype!r}; use one of {sorted(ALL)}")
        return found
    if dtype is float:
        return _default_float[0]
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype).rsplit(".", 1)[-1]
    found = ALL.get(name)
    if found is None:
        raise TypeError(f"unsupported dtype {dtype!r}; use one of {sorted(ALL)}")
    return found


def get_default_dtype() -> DType:
    """The float dtype used for Python floats and for new float tensors (float32)."""
    return _default_float[0]


def set_default_dtype(dtype: object) -> None:
    """Set the default float dtype (``float16``, ``float32`` or ``float64``)."""
    d = convert_dtype(dtype)
    if d not in _FLOATS:
        raise TypeError(f"set_default_dtype only accepts float dtypes, got {d}")
    _default_float[0] = d


_KIND = {bool_: 0, uint8: 1, int8: 1, int16: 1, int32: 1, int64: 1}


def kind(dtype: DType) -> int:
    """0 for bool, 1 for integers, 2 for floats."""
    return _KIND.get(dtype, 2)


def promote(a: DType, b: DType) -> DType:
    """Paddle's promotion of two tensor dtypes.

    Within a kind the wider type wins (int32+int64 -> int64, float32+float64 -> float64);
    across kinds the float (or integer) operand's dtype wins, so int64+float32 -> float32
    and bool+int32 -> int32.
    """
    if a == b:
        return a
    ka, kb = kind(a), kind(b)
    if ka != kb:
        return a if ka > kb else b
    return convert_dtype(np.promote_types(str(a), str(b)))


def scalar_result(dtype: DType, value: object) -> DType:
    """The dtype of ``tensor <op> python_scalar``: the tensor's, unless the scalar's kind is
    higher."""
    if type(value) is float:
        return dtype if dtype in _FLOATS else _default_float[0]
    if type(value) is int and dtype is bool_:
        return int64
    return dtype


def weak_result(strong: DType, weak: DType) -> DType:
    """The dtype of ``tensor <op> weak`` where ``weak`` is the dtype of a *weak* symbolic
    value: one that stands for a Python number of the eager code (a ``range`` item, an
    ``enumerate`` counter, a Python int carried by a tensor loop, ``int(x)``, an unknown
    ``x.shape[0]``). Like the Python number, it takes the tensor's dtype unless its kind is
    higher (``int32 + i`` stays int32, ``int32 + 0.5`` is the default float)."""
    k = kind(weak)
    if k <= kind(strong):
        return strong
    return int64 if k == 1 else _default_float[0]
