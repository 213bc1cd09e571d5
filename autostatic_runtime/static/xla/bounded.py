"""Values whose size along one axis depends on a loop's iteration count, inside one XLA
computation: ``Bounded``, and how ops act on them (``apply``).

A loop that appends to a list (a tensor array) or concatenates to a tensor (a growing KV
cache) changes its loop variables' shapes at every iteration, which one ``lax.while_loop``
cannot carry. When the loop's trip count has a bound, such a variable is carried as a buffer
preallocated at the bound with a length counter (``growing.py``): a ``Bounded`` value. Its
first ``length`` entries along ``axis`` are the value eager code would hold; the entries past
it are unspecified. Ops on it keep that invariant:

- ops that act on each position alone (elementwise ops, transposes, reshapes that keep the
  axis outermost in its group, embeddings, indexing of other axes) run on the buffer and
  keep the length;
- ops that mix positions along the axis first fill the unused entries with the value that
  leaves their result as eager's: a softmax or maximum ``-inf``, a sum or a matmul's
  contraction ``0`` (so attention over a padded cache equals attention over the filled part);
- growing ops (``concat`` along the axis, ``array_write`` at the length) write into the buffer
  at the length (in place when the op makes the loop variable itself, whose capacity the
  loop's bound guarantees; otherwise the buffer grows by the written size);
- reading one position (``xs[-1]``, ``array_read``) uses the length.

Any other op reading a ``Bounded`` value raises ``Unlowerable``, naming the loop. A program's
result that is still ``Bounded`` leaves the computation as (buffer, length) and is cut to its
length on the host (``host``), so callers get eager's shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from autostatic_runtime.errors import ShapeError, op_failure
from autostatic_runtime.ops.registry import OPS
from autostatic_runtime.static.xla.errors import Unlowerable


class Bounded:
    """``array`` holds ``capacity`` entries along ``axis``, of which the first ``length``
    (a traced int64 scalar) are the value's. ``zeros``: the entries past the length are
    exactly zero (a buffer only written at its length; a softmax's output), so a contraction
    needs no mask. ``origin``: what its size depends on, in words (the loop or the ``if``
    and its line), for messages; ``empty``: an op
    (``stack_array``) that fails when the value is empty, as eager ``rt.stack([])`` does
    (checked when the value leaves the computation). A JAX pytree."""

    __slots__ = ("array", "length", "axis", "zeros", "origin", "empty")

    def __init__(
        self,
        array: Any,
        length: Any,
        axis: int,
        zeros: bool = False,
        origin: str = "a loop's iteration count",
        empty: Any = None,
    ):
        self.array, self.length, self.axis, self.zeros = array, length, axis, zeros
        self.origin, self.empty = origin, empty

    def tree_flatten(self):
        return (self.array, self.length), (self.axis, self.zeros, self.origin, self.empty)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    @property
    def capacity(self) -> int:
        return self.array.shape[self.axis]

    @property
    def ndim(self) -> int:
        return self.array.ndim

    def like(
        self, array: Any, axis: int | None = None, length: Any = None, zeros: bool = False
    ) -> Bounded:
        """Another value of the same loop: ``array`` with this length (or ``length``),
        zero past it when ``zeros`` says so."""
        length = self.length if length is None else length
        axis = self.axis if axis is None else axis
        return Bounded(array, length, axis, zeros, self.origin, self.empty)

    def valid(self, jnp: Any) -> Any:
        """A bool array that broadcasts against ``array``: True at the filled positions."""
        shape = [1] * self.ndim
        shape[self.axis] = self.capacity
        return jnp.reshape(_positions(jnp, self.capacity) < self.length, shape)

    def filled(self, jnp: Any, fill: Any) -> Any:
        """The buffer with ``fill`` past the length."""
        return jnp.where(self.valid(jnp), self.array, jnp.asarray(fill, self.array.dtype))

    def host(self, array: Any) -> Any:
        """The value on the host: ``array`` (this buffer as a host array) cut to the length."""
        n = int(np.asarray(self.length))
        if n == 0 and self.empty is not None:
            op = self.empty
            empty = ShapeError(  # the error rt.stack([]) raises in eager mode
                "stack",
                "expects a non-empty list or tuple of tensors, and this list is empty when the "
                "program runs (the loop appending to it ran no iterations)",
            )
            raise op_failure(op.type, op.location, empty)
        return array[(slice(None),) * self.axis + (slice(0, n),)]


class Grows(TypeError):
    """A plain loop variable came out of the body ``Bounded``: the loop grows it (a
    ``TypeError``, as ``lax.while_loop`` raises for a carry that changes shape)."""


def fit(low: Any, value: Any, carry: Any) -> Any:
    """A loop body's (or branch's) ``value`` for the carry ``carry``: a ``Bounded`` value
    cut or padded to the carry's capacity (the loop's bound keeps the length within it),
    with the carry's dtypes."""
    if type(carry) is Bounded and type(value) is not Bounded:  # a branch's plain value
        value = low.jnp.asarray(value)
        if value.ndim == carry.ndim:
            size = low.jnp.asarray(value.shape[carry.axis], np.int64)
            value = Bounded(value, size, carry.axis, True, carry.origin)
    if type(carry) is not Bounded:  # a loop variable grows (in a branch): ``growing.py``
        raise Grows(f"a loop variable's size depends on {value.origin}")
    if type(value) is not Bounded or value.axis != carry.axis:
        raise Unlowerable(
            low.op,
            f"a loop variable whose size depends on "
            f"{(carry if type(carry) is Bounded else value).origin} changes how it does",
        )
    array, jnp = value.array, low.jnp
    extra = carry.capacity - value.capacity
    if extra < 0:
        array = low.lax.slice_in_dim(array, 0, carry.capacity, axis=carry.axis)
    elif extra:
        pad = [(0, 0)] * array.ndim
        pad[carry.axis] = (0, extra)
        array = jnp.pad(array, pad)
    array = low.like(array, carry.array)
    if carry.zeros and not value.zeros:  # the carry promises zeros past its length
        array = value.like(array, carry.axis).filled(jnp, 0)
    return Bounded(
        array,
        low.like(value.length, carry.length),
        carry.axis,
        carry.zeros,
        carry.origin,
        carry.empty,
    )


def _positions(jnp: Any, n: int) -> Any:
    """``0..n-1`` as int32: an int64 iota does not lower outside 64-bit mode (see
    ``lowering._positions``)."""
    return jnp.arange(n, dtype=jnp.int32)


def joined(op: Any, a: Any, b: Any) -> Any:
    """What two branches' results (abstract: ``jax.eval_shape``'s) become so that a
    ``lax.cond`` can join them: when their sizes differ along one axis (a list appended to
    in one branch) or either is ``Bounded``, a ``Bounded`` value of the larger capacity
    (zero past the length if both are); None when they already agree."""
    import jax

    a_shape, b_shape = _dims(a), _dims(b)
    if type(a) is not Bounded and type(b) is not Bounded and a_shape == b_shape:
        return None
    axes = {x.axis for x in (a, b) if type(x) is Bounded}
    if len(a_shape) == len(b_shape):
        axes |= {i for i, (m, n) in enumerate(zip(a_shape, b_shape)) if m != n}
    if len(axes) != 1 or len(a_shape) != len(b_shape):
        raise Unlowerable(op, "its branches give values of different shapes")
    (axis,) = axes
    shape = list(a_shape)
    shape[axis] = max(a_shape[axis], b_shape[axis])
    array = jax.ShapeDtypeStruct(tuple(shape), (a.array if type(a) is Bounded else a).dtype)
    length = jax.ShapeDtypeStruct((), np.int64)
    zeros = all(x.zeros for x in (a, b) if type(x) is Bounded)
    first = a if type(a) is Bounded else b if type(b) is Bounded else None
    why = first.origin if first is not None else origin(op, "the branch taken by the 'if'")
    empty = next((x.empty for x in (a, b) if type(x) is Bounded and x.empty), None)
    return Bounded(array, length, axis, zeros, why, empty)


def _dims(value: Any) -> tuple:
    return tuple((value.array if type(value) is Bounded else value).shape)


def origin(op: Any, what: str) -> str:
    """``what`` of ``op``, at its line: what a ``Bounded`` value's size depends on."""
    loc = op.location
    return f"{what} at {loc[0]}:{loc[1]}" if loc and loc[0] else what


def refuse(op: Any, value: Bounded, why: str) -> Unlowerable:
    """The error for an op that cannot take a ``Bounded`` input."""
    return Unlowerable(
        op,
        f"{why} a value whose size depends on {value.origin}, which one XLA computation "
        "cannot take (rewrite that use, or compute it inside the loop)",
    )


def apply(low: Any, op: Any, opdef: Any, args: list, attrs: dict) -> Any:
    """``op`` on its arguments, some of them ``Bounded``."""
    rule = RULES.get(op.type)
    if rule is None and op.type in ELEMENTWISE:
        rule = _elementwise
    if rule is None:
        raise refuse(op, _first(args), f"'{op.type}' reads")
    return rule(low, op, opdef, args, attrs)


def _first(args: list) -> Bounded:
    return next(a for a in args if type(a) is Bounded)


def _plain(args: list) -> list:
    return [a.array if type(a) is Bounded else a for a in args]


# ---- elementwise -----------------------------------------------------------------------------


def _elementwise(low, op, opdef, args, attrs):
    """Broadcasting ops that act on each position alone: the length passes through. A
    fixed-size operand along the bounded axis (not 1) is refused: eager sizes would differ."""
    ndim = max(getattr(a, "ndim", 0) for a in _plain(args))
    axis = first = None
    for a in args:
        if type(a) is Bounded:
            moved = a.axis + ndim - a.ndim
            if axis is not None and moved != axis:
                raise refuse(op, a, f"'{op.type}' combines along different axes")
            axis, first = moved, first or a
    for a in args:
        if type(a) is not Bounded and getattr(a, "ndim", 0):
            at = axis - (ndim - a.ndim)
            if at >= 0 and a.shape[at] != 1:
                raise refuse(op, first, f"'{op.type}' combines a fixed-size value with")
    out = opdef.kernel(low.xp, *_plain(args), **attrs)
    return first.like(out, axis)


ELEMENTWISE = frozenset(
    name
    for name, opdef in OPS.items()
    if opdef.infer.__module__ == "autostatic_runtime.ops.elementwise"
) | {"gelu", "softplus", "logsigmoid"}


# ---- ops that mix positions along the axis -----------------------------------------------


def _lowest(jnp: Any, dtype: Any) -> Any:
    dtype = jnp.dtype(dtype)
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _highest(jnp: Any, dtype: Any) -> Any:
    dtype = jnp.dtype(dtype)
    if dtype.kind == "f":
        return np.inf
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max


def _softmax(low, op, opdef, args, attrs):
    """Along the bounded axis: ``-inf`` past the length, and the result zero there (a
    softmax; ``-inf`` for a log-softmax), so that a contraction with it needs no mask."""
    (x,) = args
    if attrs["axis"] != x.axis:
        return x.like(opdef.kernel(low.xp, x.array, **attrs))
    out = x.like(opdef.kernel(low.xp, x.filled(low.jnp, -np.inf), **attrs))
    if op.type != "softmax":
        return out
    return x.like(out.filled(low.jnp, 0), zeros=True)


def _matmul(low, op, opdef, args, attrs):
    """A bounded operand's axis is a batch dim, a row of ``x`` or a column of ``y`` (the
    result is bounded there), or the contracted dim: both operands must then be bounded
    there, and both are zero past their lengths."""
    x, y = args
    jnp = low.jnp
    xa, ya = _plain(args)
    if xa.ndim < 2 or ya.ndim < 2:
        raise refuse(op, _first(args), "a matrix-vector 'matmul_v2' reads")
    ndim = max(xa.ndim, ya.ndim)
    x_inner = -2 if attrs.get("trans_x") else -1
    y_inner = -1 if attrs.get("trans_y") else -2
    roles = []
    for value, inner in ((x, x_inner), (y, y_inner)):
        edge = -3 - inner  # x's rows (-2 of the result) or y's columns (-1)
        if type(value) is not Bounded:
            roles.append(None)
            continue
        axis = value.axis - value.ndim
        if axis == inner:
            roles.append("inner")
        elif axis == edge:
            roles.append(ndim - 2 if value is x else ndim - 1)
        else:
            roles.append(ndim + axis)
    if "inner" in roles:
        if roles != ["inner", "inner"]:
            raise refuse(op, _first(args), "'matmul_v2' contracts a fixed-size value with")
        if not (x.zeros and y.zeros):  # zero * (whatever lies past a length) may not be 0
            xa, ya = x.filled(jnp, 0), y.filled(jnp, 0)
        roles = [None, None]
    out = opdef.kernel(low.xp, xa, ya, **attrs)
    axes = {r for r in roles if r is not None}
    if not axes:
        return out
    if len(axes) > 1:
        raise refuse(op, _first(args), "'matmul_v2' would be bounded on two axes by")
    source = x if roles[0] is not None else y
    return source.like(out, axes.pop())


_FILLS: dict[str, Callable] = {
    "reduce_sum": lambda jnp, dt: 0,
    "reduce_mean": lambda jnp, dt: 0,
    "reduce_prod": lambda jnp, dt: 1,
    "reduce_max": _lowest,
    "arg_max": _lowest,
    "logsumexp": _lowest,
    "reduce_any": lambda jnp, dt: False,
    "reduce_min": _highest,
    "arg_min": _highest,
    "reduce_all": lambda jnp, dt: True,
}


def _reduce(low, op, opdef, args, attrs):
    (x,) = args
    jnp = low.jnp
    axis = attrs.get("axis")
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if type(axis) is int else axis
    axes = tuple(a % x.ndim for a in axes)
    if x.axis not in axes:  # the bounded axis stays: it moves left past the reduced ones
        kept = x.axis if attrs.get("keepdim") else x.axis - sum(a < x.axis for a in axes)
        return x.like(opdef.kernel(low.xp, x.array, **attrs), kept)
    if op.type.startswith("arg_") and axis is None and x.axis != 0:
        raise refuse(op, x, f"'{op.type}' over all axes (flattened) reads")
    out = opdef.kernel(low.xp, x.filled(jnp, _FILLS[op.type](jnp, x.array.dtype)), **attrs)
    if op.type == "reduce_mean":  # the mean of the filled part: its sum over its count
        total = OPS["reduce_sum"].kernel(low.xp, x.filled(jnp, 0), **attrs)
        others = math.prod(x.array.shape[a] for a in axes if a != x.axis)
        out = (total / jnp.asarray(x.length * others, total.dtype)).astype(out.dtype)
    return out


def _cumsum(low, op, opdef, args, attrs):
    (x,) = args
    if attrs["axis"] % x.ndim != x.axis:
        return x.like(opdef.kernel(low.xp, x.array, **attrs))
    if attrs.get("reverse"):
        raise refuse(op, x, "a reversed 'cumsum' along it reads")
    return x.like(opdef.kernel(low.xp, x.filled(low.jnp, 0), **attrs))


def _layer_norm(low, op, opdef, args, attrs):
    x = args[0]
    if (
        type(x) is not Bounded
        or x.axis >= attrs["begin_norm_axis"]
        or any(type(a) is Bounded for a in args[1:])
    ):
        raise refuse(op, _first(args), "'layer_norm' normalizes over")
    return x.like(opdef.kernel(low.xp, *_plain(args), **attrs))


# ---- shapes ----------------------------------------------------------------------------------


def _transpose(low, op, opdef, args, attrs):
    (x,) = args
    axis = list(attrs["perm"]).index(x.axis)
    return x.like(opdef.kernel(low.xp, x.array, **attrs), axis, zeros=x.zeros)


def _reshape(low, op, opdef, args, attrs):
    """Reshape-like ops (``reshape``, ``flatten``, ``squeeze``, ``unsqueeze``): the bounded
    axis must stay outermost in the dims merged with it (then the filled part stays a
    prefix: the length scales by the merged inner size) or stand alone."""
    x = args[0]
    if type(x) is not Bounded or any(type(a) is Bounded for a in args[1:]):
        raise refuse(op, _first(args), f"'{op.type}' reads")
    out = opdef.kernel(low.xp, *_plain(args), **attrs)
    src, dst = tuple(x.array.shape), tuple(out.shape)
    before = math.prod(src[: x.axis])
    for axis in range(len(dst)):
        if math.prod(dst[:axis]) != before or (dst[axis] == 1 and x.capacity != 1):
            continue
        inner = dst[axis] // x.capacity if dst[axis] % x.capacity == 0 else None
        for stop in range(x.axis + 1, len(src) + 1):
            if inner is not None and math.prod(src[x.axis + 1 : stop]) == inner:
                return x.like(out, axis, x.length * inner)
        break
    raise refuse(op, x, f"'{op.type}' splits or merges into an outer dim")


def _concat(low, op, opdef, args, attrs):
    """Along the bounded axis: the parts written one after the other at the running length;
    along another axis: every part bounded alike."""
    axis = attrs["axis"]
    first = _first(args)
    if axis % first.ndim != first.axis:
        if not all(type(a) is Bounded and a.axis == first.axis for a in args):
            raise refuse(op, first, "'concat' joins a fixed-size value with")
        return first.like(opdef.kernel(low.xp, *_plain(args), **attrs))
    if type(args[0]) is not Bounded or any(type(a) is Bounded for a in args[1:]):
        raise refuse(op, first, "'concat' puts fixed-size values in front of")
    buffer = _room(low, op, first, sum(a.shape[first.axis] for a in args[1:]))
    length = first.length
    for part in args[1:]:
        part = low.jnp.asarray(part, buffer.dtype)
        buffer = low.lax.dynamic_update_slice_in_dim(buffer, part, length, first.axis)
        length = length + part.shape[first.axis]
    return first.like(buffer, length=length, zeros=first.zeros)


def _room(low, op, value: Bounded, extra: int) -> Any:
    """``value``'s buffer with room for ``extra`` more entries: as it is when ``op`` makes a
    loop variable of this capacity (the loop's bound leaves room), else grown."""
    if low.room.get(op.outputs[0].name) == value.capacity or not extra:
        return value.array
    pad = [(0, 0)] * value.ndim
    pad[value.axis] = (0, extra)
    return low.jnp.pad(value.array, pad)


def _stack(low, op, opdef, args, attrs):
    first = _first(args)
    if not all(type(a) is Bounded and a.axis == first.axis for a in args):
        raise refuse(op, first, "'stack' joins a fixed-size value with")
    axis = attrs["axis"] % (first.ndim + 1)
    return first.like(
        opdef.kernel(low.xp, *_plain(args), **attrs), first.axis + (axis <= first.axis)
    )


def _getitem(low, op, opdef, args, attrs):
    """``x[key]`` with ints, slices (step 1), ``None`` and ``...``: the other axes by the
    kernel, the bounded one as a dynamic slice or index measured from the length."""
    x = args[0]
    if type(x) is not Bounded or len(args) > 1:
        raise refuse(op, _first(args), "'getitem' with index tensors reads")
    key = list(attrs["key"])
    if "..." in key:
        at = key.index("...")
        named = sum(1 for k in key if k not in ("...", "newaxis"))
        key[at : at + 1] = [("slice", None, None, None)] * (x.ndim - named)
    position = out_axis = 0  # input axes consumed, output axes made
    mine = ("slice", None, None, None)  # what the key does to the bounded axis
    for j, k in enumerate(key):
        if k == "newaxis":
            out_axis += 1
            continue
        if position == x.axis:
            mine, key[j] = k, ("slice", None, None, None)
            break
        position += 1
        out_axis += type(k) is not int
    else:
        out_axis += x.axis - position  # the axes the key leaves alone
    out = opdef.kernel(low.xp, x.array, key=tuple(key))
    return _select(low, op, x, out, out_axis, mine)


def _select(low, op, x: Bounded, array: Any, axis: int, item: Any) -> Any:
    """``item`` (an int or a slice) applied along ``axis`` of ``array``, measured from
    ``x``'s length."""
    jnp, lax = low.jnp, low.lax
    n = x.length
    if type(item) is int:
        at = item if item >= 0 else n + item
        return lax.dynamic_index_in_dim(array, at, axis, keepdims=False)
    _, start, stop, step = item
    if step not in (None, 1):
        raise refuse(op, x, "a strided slice of")
    capacity = array.shape[axis]
    if start is None or start >= 0:
        begin = min(start or 0, capacity)
        array = lax.slice_in_dim(array, begin, capacity, axis=axis)
        first = jnp.minimum(jnp.asarray(begin, n.dtype), n)
    else:
        size = min(-start, capacity)
        first = jnp.maximum(n + start, 0)
        array = lax.dynamic_slice_in_dim(array, jnp.minimum(first, capacity - size), size, axis)
        # (a start clamped into the buffer only happens past the length: those are unused)
    end = n if stop is None else jnp.minimum(stop, n) if stop >= 0 else jnp.maximum(n + stop, 0)
    return x.like(array, axis, jnp.maximum(end - first, 0))


def _lookup(low, op, opdef, args, attrs):
    ids, weight = args
    if type(ids) is not Bounded or type(weight) is Bounded:
        raise refuse(op, _first(args), "an embedding table is")
    return ids.like(opdef.kernel(low.xp, ids.array, weight, **attrs))


def _shape(low, op, opdef, args, attrs):
    (x,) = args
    dims = [low.jnp.asarray(d, np.int64) for d in x.array.shape]
    dims[x.axis] = x.length.astype(np.int64)
    return low.jnp.stack(dims).astype(np.int32)  # as the op's kernel gives


def _size(low, op, opdef, args, attrs):
    (x,) = args
    return x.length * (math.prod(x.array.shape) // max(x.capacity, 1))


# ---- tensor arrays (a list's buffer: the bounded axis is 0) ---------------------------------


def _position(jnp: Any, i: Any, n: Any) -> Any:
    i = jnp.asarray(i).reshape(()).astype(n.dtype)
    return jnp.where(i < 0, i + n, i)


def _array_write(low, op, opdef, args, attrs):
    x, i, array = args
    if type(array) is not Bounded or type(x) is Bounded or type(i) is Bounded:
        raise refuse(op, _first(args), "'array_write' of")
    at = _position(low.jnp, i, array.length)
    buffer = _room(low, op, array, 1)
    row = low.jnp.asarray(x).astype(buffer.dtype)
    buffer = low.lax.dynamic_update_index_in_dim(buffer, row, at, 0)
    return array.like(buffer, length=low.jnp.maximum(array.length, at + 1), zeros=array.zeros)


def _array_read(low, op, opdef, args, attrs):
    array, i = args
    if type(i) is Bounded:
        raise refuse(op, i, "'array_read' at")
    at = _position(low.jnp, i, array.length)
    return low.lax.dynamic_index_in_dim(array.array, at, 0, keepdims=False)


def _array_length(low, op, opdef, args, attrs):
    return args[0].length.astype(np.int64)


def _array_pop(low, op, opdef, args, attrs):
    array, i = args
    if type(i) is Bounded:
        raise refuse(op, i, "'array_pop' at")
    jnp = low.jnp
    at = _position(jnp, i, array.length)
    item = low.lax.dynamic_index_in_dim(array.array, at, 0, keepdims=False)
    rows = _positions(jnp, array.capacity).reshape((-1,) + (1,) * (array.ndim - 1))
    shifted = jnp.where(rows >= at, jnp.roll(array.array, -1, axis=0), array.array)
    return array.like(shifted, length=array.length - 1), item


def _stack_array(low, op, opdef, args, attrs):
    (array,) = args
    return Bounded(array.array, array.length, array.axis, array.zeros, array.origin, op)


RULES: dict[str, Callable] = {
    "matmul_v2": _matmul,
    "softmax": _softmax,
    "log_softmax": _softmax,
    "cumsum": _cumsum,
    "layer_norm": _layer_norm,
    "transpose": _transpose,
    "reshape": _reshape,
    "flatten": _reshape,
    "squeeze": _reshape,
    "unsqueeze": _reshape,
    "concat": _concat,
    "stack": _stack,
    "getitem": _getitem,
    "lookup_table_v2": _lookup,
    "one_hot_v2": _elementwise,
    "shape": _shape,
    "size": _size,
    "array_write": _array_write,
    "array_read": _array_read,
    "array_length": _array_length,
    "array_pop": _array_pop,
    "stack_array": _stack_array,
    **{name: _reduce for name in _FILLS},
}
