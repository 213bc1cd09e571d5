"""Operator overloading and op methods for ``TensorLike`` (eager Tensors and static Variables).

Every method is the public op function itself (``x.sum(axis=1)`` is ``rt.sum(x, axis=1)``),
so eager and static code share one definition.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.tensor import Tensor, TensorLike

# Paddle Tensor methods that are plain op functions taking the tensor first.
METHODS = """
add subtract multiply divide floor_divide mod remainder floor_mod pow matmul maximum minimum
abs neg exp expm1 log log2 log10 log1p sqrt rsqrt square reciprocal sin cos tan asin acos atan
sinh cosh tanh sigmoid erf sign floor ceil round trunc clip scale lerp
equal not_equal less_than less_equal greater_than greater_equal equal_all allclose isclose
logical_and logical_or logical_not logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not
isnan isfinite isinf cast
sum mean max min prod amax amin argmax argmin all any cumsum cumprod logsumexp var std median
nansum nanmean norm dist count_nonzero
reshape transpose squeeze unsqueeze flatten concat split chunk unbind expand expand_as
broadcast_to tile flip roll gather gather_nd scatter scatter_nd_add index_select masked_fill
masked_select nonzero take_along_axis put_along_axis topk sort argsort numel tril triu
moveaxis repeat_interleave unique unique_consecutive diagonal kron trace kthvalue unstack
bucketize
dot bmm mm mv inner outer cross t cholesky inverse
""".split()

_NUMERIC = (int, float, bool)


def _is_operand(o: Any) -> bool:
    """Operands tensors combine with; anything else makes the operator return NotImplemented."""
    if isinstance(o, (TensorLike,) + _NUMERIC):
        return True
    return hasattr(o, "__array__") or isinstance(o, (list, tuple))


def _binary_dunder(fn, reflected: bool = False):
    fast = {*_NUMERIC, Tensor}  # skip the operand check for the common cases

    if reflected:

        def method(self, other):
            if type(other) not in fast and not _is_operand(other):
                return NotImplemented
            return fn(other, self)

    else:

        def method(self, other):
            if type(other) not in fast and not _is_operand(other):
                return NotImplemented
            return fn(self, other)

    return method


def _logic(logical, bitwise):
    """``&``/``|``/``^``: logical on bool tensors, bitwise on integers."""

    def forward(self, other):
        if not _is_operand(other):
            return NotImplemented
        if self.dtype == dtypes.bool_:
            return logical(self, other)
        return bitwise(self, other)

    def reflected(self, other):
        if not _is_operand(other):
            return NotImplemented
        if self.dtype == dtypes.bool_:
            return logical(other, self)
        return bitwise(other, self)

    return forward, reflected


def _keep_weak(x: Any, out: Any) -> Any:
    """``-x``/``abs(x)`` of a value standing for a Python number stands for one too."""
    if x._weak:
        out._weak = True
    return out


def attach(namespace: Any) -> None:
    """Attach methods and operators to TensorLike, reading functions from ``namespace``."""
    ns = namespace
    for name in METHODS:
        fn = getattr(ns, name, None)
        if fn is not None:
            setattr(TensorLike, name, fn)
    T = TensorLike
    for dunder, fn in (
        ("add", ns.add), ("sub", ns.subtract), ("mul", ns.multiply), ("truediv", ns.divide),
        ("floordiv", ns.floor_divide), ("mod", ns.mod), ("pow", ns.pow),
        ("matmul", getattr(ns, "matmul", None)),
    ):  # fmt: skip
        if fn is None:
            continue
        setattr(T, f"__{dunder}__", _binary_dunder(fn))
        setattr(T, f"__r{dunder}__", _binary_dunder(fn, reflected=True))
    for dunder, fn in (
        ("eq", ns.equal), ("ne", ns.not_equal), ("lt", ns.less_than), ("le", ns.less_equal),
        ("gt", ns.greater_than), ("ge", ns.greater_equal),
    ):  # fmt: skip
        setattr(T, f"__{dunder}__", _binary_dunder(fn))
    for dunder, logical, bitwise in (
        ("and", ns.logical_and, ns.bitwise_and),
        ("or", ns.logical_or, ns.bitwise_or),
        ("xor", ns.logical_xor, ns.bitwise_xor),
    ):
        fwd, rev = _logic(logical, bitwise)
        setattr(T, f"__{dunder}__", fwd)
        setattr(T, f"__r{dunder}__", rev)
    T._weak = False  # eager tensors; a static Variable may stand for a Python number
    T.__neg__ = lambda self: _keep_weak(self, ns.neg(self))
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: _keep_weak(self, ns.abs(self))
    T.__invert__ = lambda self: (
        ns.logical_not(self) if self.dtype == dtypes.bool_ else ns.bitwise_not(self)
    )

    def astype(self, dtype):
        """A copy converted to ``dtype`` (``rt.cast``)."""
        return ns.cast(self, dtype)

    def clone(self):
        """A copy that gradients flow through (``rt.assign``)."""
        return ns.assign(self)

    T.astype, T.clone = astype, clone
    T.__getitem__ = lambda self, key: ns.getitem(self, key)
    T.__setitem__ = lambda self, key, value: ns.setitem(self, key, value)
    T.__hash__ = lambda self: id(self)
