"""Paddle 2.x functions built from other ops: ``index_sample``, ``scatter_nd``, ``meshgrid``,
``strided_slice``, ``clone``, ``rank``, ``is_empty``, ``tolist``. Gradients come from the ops
they use; each works eagerly and while tracing."""

from __future__ import annotations

from typing import Any

from autostatic_runtime.errors import ShapeError, user_location
from autostatic_runtime.ops.registry import normalize_axis
from autostatic_runtime.tensor import TensorLike

__all__ = [
    "index_sample", "scatter_nd", "meshgrid", "strided_slice", "clone", "rank", "is_empty",
    "tolist",
]  # fmt: skip


def _rt():
    import autostatic_runtime as rt

    return rt


def _err(name: str, message: str) -> ShapeError:
    return ShapeError(name, message, user_location())


def index_sample(x: Any, index: Any):
    """``out[i, j] = x[i, index[i, j]]`` for 2-D ``x`` [N, C] and int ``index`` [N, K] (the
    per-row gather of beam search)."""
    if x.ndim != 2 or index.ndim != 2:
        raise _err(
            "index_sample",
            f"x {list(x.shape)} and index {list(index.shape)} must both be 2-D ([N, C], [N, K])",
        )
    n, m = x.shape[0], index.shape[0]
    if n >= 0 and m >= 0 and n != m:
        raise _err("index_sample", f"x has {n} rows but index has {m}; give one row each")
    return _rt().take_along_axis(x, index, axis=1)


def scatter_nd(index: Any, updates: Any, shape: Any, name: str | None = None):
    """Zeros of ``shape`` with ``updates`` added at the k-tuples of ``index`` (duplicates
    accumulate); ``shape`` may hold traced dims."""
    rt = _rt()
    return rt.scatter_nd_add(rt.zeros(shape, updates.dtype), index, updates)


def meshgrid(*args: Any, **kwargs: Any) -> list:
    """Grids from 1-D tensors (``indexing='ij'``): output ``i`` repeats ``args[i]`` along
    every other axis. Takes tensors as arguments or one list of them."""
    rt = _rt()
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    if not tensors or not all(isinstance(t, TensorLike) and t.ndim == 1 for t in tensors):
        raise _err("meshgrid", "expects 1-D tensors")
    sizes = [t.shape[0] if t.shape[0] >= 0 else rt.shape(t)[0] for t in tensors]
    n = len(tensors)
    out = []
    for i, t in enumerate(tensors):
        lifted = rt.reshape(t, [-1 if j == i else 1 for j in range(n)])
        out.append(rt.expand(lifted, sizes))
    return out


def strided_slice(x: Any, axes: Any, starts: Any, ends: Any, strides: Any,
                  name: str | None = None):  # fmt: skip
    """``x[starts[i]:ends[i]:strides[i]]`` along each of ``axes`` (Paddle's
    ``strided_slice``); bounds past a dim are clipped."""
    from autostatic_runtime.ops.manipulation import _ints

    axes, starts, ends, strides = (_ints(v) for v in (axes, starts, ends, strides))
    if not len(axes) == len(starts) == len(ends) == len(strides):
        raise _err("strided_slice", "axes, starts, ends and strides need one entry each")
    key = [slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, strides):
        if st == 0:
            raise _err("strided_slice", "a stride must not be 0")
        a = normalize_axis(a, x.ndim, "strided_slice")
        d = x.shape[a]
        key[a] = slice(*slice(s, e, st).indices(d)) if d >= 0 else slice(s, e, st)
        if d >= 0 and key[a].stop < 0:  # a negative stride running to the start
            key[a] = slice(key[a].start, None, key[a].step)
    return x[tuple(key)]


def clone(x: Any, name: str | None = None):
    """A copy of ``x`` that gradients flow through (Paddle's ``paddle.clone``)."""
    return _rt().assign(x)


def rank(input: Any):
    """The number of dims of ``input`` as a 0-D int32 tensor."""
    return _rt().full([], input.ndim, "int32")


def is_empty(x: Any, name: str | None = None):
    """A bool tensor: True when ``x`` has no elements."""
    return _rt().numel(x) == 0


def tolist(x: Any) -> list:
    """The values of an eager tensor as nested Python lists."""
    return x.tolist()
