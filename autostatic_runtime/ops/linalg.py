"""Linear algebra: matmul and its variants, einsum, cross, kron, trace, inverse, cholesky.

``matmul`` follows NumPy exactly (1-D operands are promoted and the added dim removed,
batch dims broadcast); its gradients are matmuls with transpose flags, reduced over
broadcast batch dims. ``einsum`` differentiates by einsums with permuted equations.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.autograd import needs_grad
from autostatic_runtime.errors import DTypeError, ShapeError, user_location
from autostatic_runtime.ops.broadcast import reduce_as
from autostatic_runtime.ops.registry import Spec, broadcast, dtype_of, normalize_axis, op, shape_of
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "matmul", "mm", "bmm", "dot", "mv", "inner", "outer", "cross", "einsum", "kron", "trace",
    "inverse", "cholesky",
]  # fmt: skip


def _err(name: str, message: str) -> ShapeError:
    return ShapeError(name, message, user_location())


# ---- matmul ------------------------------------------------------------------------------


def _matmul_shape(xs: tuple, ys: tuple, tx: bool, ty: bool, name: str = "matmul") -> tuple:
    if not xs or not ys:
        raise _err(
            name,
            f"expects tensors of rank >= 1, got shapes {list(xs)} and {list(ys)}; "
            "use multiply for 0-D tensors",
        )
    xm = [1, xs[0]] if len(xs) == 1 else list(xs)
    ym = [ys[0], 1] if len(ys) == 1 else list(ys)
    if tx and len(xs) > 1:
        xm[-1], xm[-2] = xm[-2], xm[-1]
    if ty and len(ys) > 1:
        ym[-1], ym[-2] = ym[-2], ym[-1]
    k1, k2 = xm[-1], ym[-2]
    if k1 != k2 and k1 != -1 and k2 != -1:
        flags = " after transpose_x" if tx else ""
        flags += (" and" if flags else " after") + " transpose_y" if ty else ""
        raise _err(
            name, f"shapes {list(xs)} and {list(ys)} do not match (inner dims {k1} != {k2}{flags})"
        )
    try:
        batch = broadcast(tuple(xm[:-2]), tuple(ym[:-2]), op=name)
    except ShapeError:
        raise _err(
            name,
            f"batch dims of shapes {list(xs)} and {list(ys)} cannot be broadcast "
            f"({list(xm[:-2])} vs {list(ym[:-2])})",
        ) from None
    return batch + ((xm[-2],) if len(xs) > 1 else ()) + ((ym[-1],) if len(ys) > 1 else ())


@op("matmul_v2")
class Matmul:
    """NumPy ``matmul`` of ``x`` and ``y``, each optionally transposed in its last two dims."""

    fresh = True

    def infer(x, y, trans_x=False, trans_y=False):
        shape = _matmul_shape(shape_of(x), shape_of(y), trans_x, trans_y)
        return Spec(shape, dtypes.promote(dtype_of(x), dtype_of(y)))

    def kernel(xp, x, y, trans_x=False, trans_y=False):
        if trans_x and x.ndim > 1:
            x = xp.matrix_transpose(x)
        if trans_y and y.ndim > 1:
            y = xp.matrix_transpose(y)
        return xp.matmul(x, y)

    def grad(g, out, x, y, trans_x=False, trans_y=False):
        nx, ny = len(shape_of(x)), len(shape_of(y))
        if nx > 1 and ny > 1:
            return _matmul_grads(g, x, y, trans_x, trans_y)
        if nx == 1 and ny == 1:
            return g * y, g * x
        from autostatic_runtime.ops.manipulation import squeeze, unsqueeze

        xm = unsqueeze(x, 0) if nx == 1 else x
        ym = unsqueeze(y, -1) if ny == 1 else y
        gm = unsqueeze(g, -2) if nx == 1 else unsqueeze(g, -1)
        gx, gy = _matmul_grads(gm, xm, ym, trans_x and nx > 1, trans_y and ny > 1)
        if nx == 1 and gx is not None:  # (None: no gradient wanted, as for data)
            gx = squeeze(gx, 0)
        if ny == 1 and gy is not None:
            gy = squeeze(gy, -1)
        return gx, gy


def _matmul_grads(g, x, y, tx, ty):
    """Gradients of ``op(x) @ op(y)`` for operands of rank >= 2 (op: optional transpose)."""
    gx = gy = None
    if needs_grad(0):  # skip the costly product for an input that needs no gradient
        if tx:
            gx = reduce_as(Matmul(y, g, trans_x=ty, trans_y=True), x)
        else:
            gx = reduce_as(Matmul(g, y, trans_x=False, trans_y=not ty), x)
    if needs_grad(1):
        if ty:
            gy = reduce_as(Matmul(g, x, trans_x=True, trans_y=tx), y)
        else:
            gy = reduce_as(Matmul(x, g, trans_x=not tx, trans_y=False), y)
    return gx, gy


def _operands(x: Any, y: Any):
    """Tensors of one dtype (Paddle's promotion) for a binary linalg op."""
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.ops.elementwise import cast

    if not isinstance(x, TensorLike):
        x = to_tensor(x, dtype=y.dtype if isinstance(y, TensorLike) else None)
    if not isinstance(y, TensorLike):
        y = to_tensor(y, dtype=x.dtype)
    dx, dy = x.dtype, y.dtype
    if dx is not dy and dx != dy:
        d = dtypes.promote(dx, dy)
        x, y = (x if dx == d else cast(x, d)), (y if dy == d else cast(y, d))
    return x, y


def _call(name: str, x, y, tx: bool = False, ty: bool = False):
    try:
        if not (tx or ty):
            return Matmul(x, y)  # no attrs: the cheapest dispatch for the common case
        return Matmul(x, y, trans_x=tx, trans_y=ty)
    except ShapeError as e:  # name the public function the user called
        raise ShapeError(name, e.detail, e.location) from None


def matmul(
    x: Any, y: Any, transpose_x: bool = False, transpose_y: bool = False, name: str | None = None
):
    """Matrix product with NumPy's rules (1-D promotion, broadcast batch dims).

    ``transpose_x``/``transpose_y`` transpose the last two dims of an operand first (no-op
    for 1-D operands).
    """
    if type(x) is not Tensor or type(y) is not Tensor or x.dtype is not y.dtype:
        x, y = _operands(x, y)
    return _call("matmul", x, y, bool(transpose_x), bool(transpose_y))


def mm(input: Any, mat2: Any, name: str | None = None):
    """Matrix product (``matmul`` without transposes)."""
    return _call("mm", *_operands(input, mat2))


def bmm(x: Any, y: Any, name: str | None = None):
    """Batched matrix product of two 3-D tensors ``[b, m, k] @ [b, k, n]``."""
    x, y = _operands(x, y)
    if x.ndim != 3 or y.ndim != 3:
        raise _err(
            "bmm",
            f"expects two 3-D tensors, got shapes {x.shape} and {y.shape}; use "
            "matmul for other ranks",
        )
    if x.shape[0] != y.shape[0]:
        raise _err(
            "bmm",
            f"batch sizes differ: shapes {x.shape} and {y.shape} ({x.shape[0]} != {y.shape[0]})",
        )
    return _call("bmm", x, y)


def mv(x: Any, vec: Any, name: str | None = None):
    """Matrix-vector product ``[m, n] @ [n]``."""
    x, vec = _operands(x, vec)
    if x.ndim != 2 or vec.ndim != 1:
        raise _err(
            "mv", f"expects a 2-D matrix and a 1-D vector, got shapes {x.shape} and {vec.shape}"
        )
    return _call("mv", x, vec)


def dot(x: Any, y: Any, name: str | None = None):
    """Inner product of 1-D tensors, or row-wise of 2-D ``[n, k]`` tensors (shape ``[n]``)."""
    from autostatic_runtime.ops.reduce import sum as sum_

    x, y = _operands(x, y)
    if x.ndim not in (1, 2) or list(x.shape) != list(y.shape):
        raise _err(
            "dot", f"expects two 1-D or 2-D tensors of one shape, got {x.shape} and {y.shape}"
        )
    return sum_(x * y, axis=-1)


def inner(x: Any, y: Any, name: str | None = None):
    """Sum over the last dims: shape ``x.shape[:-1] + y.shape[:-1]``."""
    x, y = _operands(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise _err(
            "inner",
            f"last dims differ: shapes {x.shape} and {y.shape} ({x.shape[-1]} != {y.shape[-1]})",
        )
    a, b = _LETTERS[: x.ndim - 1], _LETTERS[x.ndim - 1 : x.ndim + y.ndim - 2]
    return Einsum(x, y, equation=f"{a}z,{b}z->{a}{b}")


def outer(x: Any, y: Any, name: str | None = None):
    """Outer product of the flattened inputs: shape ``[x.size, y.size]``."""
    from autostatic_runtime.ops.indexing import getitem
    from autostatic_runtime.ops.manipulation import flatten

    x, y = _operands(x, y)
    x = x if x.ndim == 1 else flatten(x)
    y = y if y.ndim == 1 else flatten(y)
    return getitem(x, (slice(None), None)) * y


# ---- einsum --------------------------------------------------------------------------------

_LETTERS = string.ascii_lowercase + string.ascii_uppercase


def _parse(equation: str) -> tuple[list, str]:
    ins, out = equation.split("->")
    return ins.split(","), out


def _letter_dims(subs: list, shapes: list, name: str = "einsum") -> dict:
    dims: dict = {}
    for i, (sub, shape) in enumerate(zip(subs, shapes, strict=True)):
        if len(sub) != len(shape):
            raise _err(
                name,
                f"operand {i} has shape {list(shape)} but subscripts {sub!r} name {len(sub)} dims",
            )
        for c, d in zip(sub, shape, strict=True):
            prev = dims.get(c, 1)
            if d in (1, -1) or prev == d:
                dims.setdefault(c, d)
            elif prev in (1, -1):
                dims[c] = d
            else:
                raise _err(
                    name,
                    f"subscript {c!r} has size {prev} in one operand and {d} in "
                    f"operand {i} (shapes {[list(s) for s in shapes]})",
                )
    return dims


@op("einsum")
class Einsum:
    """``einsum`` with an explicit equation (letters only, ``->`` always present)."""

    def infer(*operands, equation):
        subs, out = _parse(equation)
        dims = _letter_dims(subs, [shape_of(o) for o in operands])
        dt = dtype_of(operands[0])
        for o in operands[1:]:
            dt = dtypes.promote(dt, dtype_of(o))
        return Spec(tuple(dims[c] for c in out), dt)

    def kernel(xp, *operands, equation):
        return xp.einsum(equation, *operands)

    def grad(g, out, *operands, equation):
        from autostatic_runtime.creation import eye, ones

        subs, out_sub = _parse(equation)
        shapes = [shape_of(o) for o in operands]
        dims = _letter_dims(subs, shapes)
        free = iter(c for c in _LETTERS if c not in equation)
        grads = []
        for i, (x, sub) in enumerate(zip(operands, subs, strict=True)):
            if not isinstance(x, TensorLike) or not dtype_of(x).is_floating:
                grads.append(None)
                continue
            others = [s for j, s in enumerate(subs) if j != i]
            # the size each subscript has outside this operand (1 when only broadcast there)
            elsewhere = {c: dims[c] for c in out_sub}
            for j, (s, shape) in enumerate(zip(subs, shapes, strict=True)):
                for c, d in zip(s, shape, strict=True):
                    if j != i and c not in out_sub:
                        elsewhere[c] = max(elsewhere.get(c, d), d)
            target, extra, extra_subs = [], [], []
            for c in sub:
                if c in target:  # a repeated subscript: the gradient lives on the diagonal
                    f = next(free)
                    target.append(f)
                    extra.append(eye(dims[c], dtype=g.dtype))
                    extra_subs.append(c + f)
                    elsewhere[c] = dims[c]
                else:
                    target.append(c)
            for c, d in dict(zip(sub, shape_of(x), strict=True)).items():
                if elsewhere.get(c) is None or elsewhere[c] == 1 < d:
                    extra.append(ones([d], dtype=g.dtype))  # summed or broadcast elsewhere
                    extra_subs.append(c)
            eq = ",".join([out_sub] + others + extra_subs) + "->" + "".join(target)
            rest = [o for j, o in enumerate(operands) if j != i]
            grads.append(reduce_as(Einsum(g, *rest, *extra, equation=eq), x))
        return tuple(grads)


def _normalize_equation(equation: str, ndims: list) -> str:
    """An explicit, ellipsis-free equation (NumPy's implicit output when ``->`` is missing)."""
    eq = equation.replace(" ", "")
    ins, arrow, out = eq.partition("->")
    subs = ins.split(",")
    if len(subs) != len(ndims):
        raise _err("einsum", f"equation {equation!r} names {len(subs)} operands, got {len(ndims)}")
    for s in subs + [out]:
        bad = set(s.replace("...", "")) - set(_LETTERS)
        if bad or s.replace("...", "").count(".") or s.count("...") > 1:
            raise _err("einsum", f"invalid subscripts {s!r} in {equation!r}")
    pool = [c for c in _LETTERS if c not in eq]
    widths = [n - (len(s) - 3) if "..." in s else 0 for s, n in zip(subs, ndims, strict=True)]
    if min(widths, default=0) < 0:
        raise _err("einsum", f"subscripts {subs} have more dims than operands of rank {ndims}")
    ell = "".join(pool[: max(widths, default=0)])
    subs = [
        s.replace("...", ell[len(ell) - w :] if w else "")
        for s, w in zip(subs, widths, strict=True)
    ]
    if arrow:
        out = out.replace("...", ell)
    else:
        counts = {}
        for c in "".join(subs):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    if len(set(out)) != len(out) or not set(out) <= set("".join(subs)):
        raise _err(
            "einsum",
            f"output subscripts {out!r} of {equation!r} must be distinct and appear in the inputs",
        )
    return ",".join(subs) + "->" + out


def einsum(equation: str, *operands: Any):
    """Einstein summation (NumPy's ``einsum`` semantics, ``...`` and implicit output included)."""
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.ops.elementwise import cast

    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [o if isinstance(o, TensorLike) else to_tensor(o) for o in operands]
    d = ts[0].dtype
    for t in ts[1:]:
        d = dtypes.promote(d, t.dtype)
    ts = [t if t.dtype == d else cast(t, d) for t in ts]
    eq = _normalize_equation(equation, [t.ndim for t in ts])
    _letter_dims(_parse(eq)[0], [tuple(t.shape) for t in ts])  # fail early, at the user's line
    return Einsum(*ts, equation=eq)


# ---- products of vectors and matrices ------------------------------------------------------


@op("cross")
class Cross:
    """Cross product of 3-vectors along ``axis`` (a negative axis; inputs broadcast)."""

    def infer(x, y, axis):
        shape = broadcast(x, y, op="cross")
        if shape and shape[axis] not in (3, -1):
            raise ShapeError(
                "cross",
                f"dim {axis} must have size 3, shapes {list(shape_of(x))} and {list(shape_of(y))}",
                user_location(),
            )
        return Spec(shape, dtypes.promote(dtype_of(x), dtype_of(y)))

    def kernel(xp, x, y, axis):
        return xp.linalg.cross(x, y, axis=axis)

    def grad(g, out, x, y, axis):
        return reduce_as(Cross(y, g, axis=axis), x), reduce_as(Cross(g, x, axis=axis), y)


def cross(x: Any, y: Any, axis: int = 9, name: str | None = None):
    """Cross product along ``axis``; the default (9) picks the first axis of size 3."""
    x, y = _operands(x, y)
    shape = broadcast(x, y, op="cross")
    if axis == 9 or axis is None:
        axis = next((i for i, d in enumerate(shape) if d == 3), None)
        if axis is None:
            raise _err("cross", f"no axis of size 3 in shapes {x.shape} and {y.shape}")
    axis = normalize_axis(int(axis), len(shape), "cross")
    if shape[axis] != 3:
        raise _err("cross", f"axis {axis} must have size 3, got shapes {x.shape} and {y.shape}")
    return Cross(x, y, axis=axis - len(shape))


def kron(x: Any, y: Any, name: str | None = None):
    """Kronecker product (the lower-rank input gets leading size-1 dims)."""
    from autostatic_runtime.ops.manipulation import reshape

    x, y = _operands(x, y)
    n = max(x.ndim, y.ndim)
    sx = [1] * (n - x.ndim) + list(x.shape)
    sy = [1] * (n - y.ndim) + list(y.shape)
    a = reshape(x, [d for s in sx for d in (s, 1)])
    b = reshape(y, [d for s in sy for d in (1, s)])
    out = [p * q if p >= 0 and q >= 0 else -1 for p, q in zip(sx, sy, strict=True)]
    return reshape(a * b, out)


# ---- trace, inverse, cholesky --------------------------------------------------------------


def _trace_shape(shape: tuple, axis1: int, axis2: int) -> tuple:
    return tuple(d for i, d in enumerate(shape) if i not in (axis1, axis2))


def _diag_mask(xp, n: int, m: int, offset: int, dtype):
    return xp.eye(n, m, k=offset, dtype=dtype)


@op("trace")
class Trace:
    """Sum of the ``offset`` diagonal over dims ``axis1``, ``axis2`` (non-negative, distinct)."""

    def infer(x, offset, axis1, axis2):
        return Spec(_trace_shape(shape_of(x), axis1, axis2), dtype_of(x))

    def kernel(xp, x, offset, axis1, axis2):
        y = xp.moveaxis(x, (axis1, axis2), (-2, -1))
        mask = _diag_mask(xp, y.shape[-2], y.shape[-1], offset, x.dtype)
        return xp.sum(y * mask, axis=(-2, -1))

    def grad(g, out, x, offset, axis1, axis2):
        return TraceGrad(g, x, offset=offset, axis1=axis1, axis2=axis2)


@op("trace_grad")
class TraceGrad:
    """``g`` spread over the traced diagonal of a tensor shaped like ``x`` (zeros elsewhere)."""

    def infer(g, x, offset, axis1, axis2):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, offset, axis1, axis2):
        n, m = x.shape[axis1], x.shape[axis2]
        full = xp.reshape(g, tuple(g.shape) + (1, 1)) * _diag_mask(xp, n, m, offset, g.dtype)
        return xp.moveaxis(full, (-2, -1), (axis1, axis2))

    def grad(gg, out, g, x, offset, axis1, axis2):
        return Trace(gg, offset=offset, axis1=axis1, axis2=axis2), None


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, name: str | None = None):
    """Sum along a diagonal of the 2-D slices over ``axis1`` and ``axis2``."""
    if x.ndim < 2:
        raise _err("trace", f"expects a tensor of rank >= 2, got shape {x.shape}")
    a1 = normalize_axis(int(axis1), x.ndim, "trace")
    a2 = normalize_axis(int(axis2), x.ndim, "trace")
    if a1 == a2:
        raise _err("trace", f"axis1 and axis2 must differ, both are {a1}")
    return Trace(x, offset=int(offset), axis1=a1, axis2=a2)


def _square(x, name):
    if not isinstance(x, TensorLike):
        from autostatic_runtime.creation import to_tensor

        x = to_tensor(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise _err(name, f"expects square matrices [..., n, n], got shape {x.shape}")
    if not x.dtype.is_floating:
        raise DTypeError(name, f"expects a float tensor, got {x.dtype}", user_location())
    return x


@op("inverse")
class Inverse:
    """The inverse of each square matrix in ``x`` (``[..., n, n]``)."""

    def infer(x):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x):
        return xp.linalg.inv(x)

    def grad(g, out, x):
        return -Matmul(Matmul(out, g, trans_x=True), out, trans_y=True)


def inverse(x: Any, name: str | None = None):
    """The inverse of a square matrix (or of each matrix of a batch)."""
    return Inverse(_square(x, "inverse"))


@op("cholesky")
class Cholesky:
    """The Cholesky factor of symmetric positive-definite matrices (lower, or upper)."""

    def infer(x, upper):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, upper):
        return xp.linalg.cholesky(x, upper=upper)

    def grad(g, out, x, upper):
        # A = L L^T: gA = 1/2 L^-T (P + P^T) L^-1 with P = Phi(L^T gL) (Murray, 2016), where
        # Phi keeps the lower triangle and halves the diagonal.
        from autostatic_runtime.creation import to_tensor

        n = shape_of(out)[-1]
        phi = np.tril(np.ones((n, n))) - 0.5 * np.eye(n)
        lower = to_tensor(phi, dtype=g.dtype)
        upper_ = to_tensor(phi.T.copy(), dtype=g.dtype)
        if upper:  # out = U = L^T, g = gU = gL^T
            p = Matmul(out, g, trans_y=True) * lower + Matmul(g, out, trans_y=True) * upper_
            inv = Inverse(out)  # U^-1 = L^-T
            return Matmul(Matmul(inv, p), inv, trans_y=True) * 0.5
        p = Matmul(out, g, trans_x=True) * lower + Matmul(g, out, trans_x=True) * upper_
        inv = Inverse(out)
        return Matmul(Matmul(inv, p, trans_x=True), inv) * 0.5


def cholesky(x: Any, upper: bool = False, name: str | None = None):
    """Cholesky factor of symmetric positive-definite ``x``: lower ``L`` (``x = L L^T``) or
    upper ``U`` (``x = U^T U``)."""
    return Cholesky(_square(x, "cholesky"), upper=bool(upper))
