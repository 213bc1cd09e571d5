"""InputSpec: the shape (None for any size), dtype and name of a program input."""

from __future__ import annotations

from typing import Any

import numpy as np

from autostatic_runtime import dtypes

__all__ = ["InputSpec"]


class InputSpec:
    """Describes an input: ``InputSpec([None, 784], 'float32', 'image')``."""

    def __init__(
        self,
        shape: Any = None,
        dtype: Any = "float32",
        name: str | None = None,
        stop_gradient: bool = False,
    ):
        if shape is None:
            shape = ()
        if isinstance(shape, int):
            shape = (shape,)
        self.shape = tuple(None if d is None or d == -1 else int(d) for d in shape)
        self.dtype = dtypes.convert_dtype(dtype)
        self.name = name
        self.stop_gradient = stop_gradient

    @classmethod
    def from_tensor(cls, tensor: Any, name: str | None = None) -> InputSpec:
        """The spec of an existing tensor (all dims fixed)."""
        return cls(tuple(tensor.shape), tensor.dtype, name or getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, ndarray: np.ndarray, name: str | None = None) -> InputSpec:
        return cls(ndarray.shape, ndarray.dtype, name)

    def batch(self, batch_size: int | None) -> InputSpec:
        """A copy with a leading batch dimension."""
        return InputSpec((batch_size,) + self.shape, self.dtype, self.name)

    def unbatch(self) -> InputSpec:
        """A copy without the leading dimension."""
        if not self.shape:
            raise ValueError("unbatch() of a 0-D InputSpec")
        return InputSpec(self.shape[1:], self.dtype, self.name)

    def _key(self) -> tuple:
        return (self.shape, str(self.dtype), self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"InputSpec(shape={list(self.shape)}, dtype={self.dtype}, name={self.name})"
