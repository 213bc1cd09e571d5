"""Builtins in converted code: ``print``, ``assert``, ``int/float/bool``, ``len``, ``x.shape``,
``isinstance`` (``_jst.convert_<name>`` in generated source, re-exported by convert_ops).

Each function is exactly the builtin on Python values and eager tensors; only a symbolic
``Variable`` argument (while a program is being built) gives the static form: a ``print`` or
``assert`` op that acts each time the program runs, a ``cast``, a runtime ``shape`` value.
Generated code calls them only where the name is Python's own builtin::

    (_jst.convert_len if len is _jst.builtins.len else len)(x)

so a module's own ``print`` or ``len`` (a global, an import) is called as written.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import StaticBuildError, user_location
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.static.program import Parameter, Variable
from autostatic_runtime.static.tensor_array import TensorArray
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "builtins", "convert_assert", "convert_print", "convert_var_dtype", "convert_int",
    "convert_float", "convert_bool", "convert_len", "convert_shape", "convert_isinstance",
]  # fmt: skip

_NO_MESSAGE = object()
_PRINT_KEYWORDS = frozenset({"sep", "end", "file", "flush"})


def convert_assert(cond: Any, message: Any = _NO_MESSAGE, source: str = "") -> bool:
    """``assert cond, message``; an ``assert`` op for a symbolic ``cond``, which raises
    ``AssertionFailedError`` (an ``AssertionError``) at the user's line when the program runs
    and ``cond`` is false. ``source`` is the asserted expression's text, for the message.
    Returns True (converted code asserts what it returns while building).
    """
    if not isinstance(cond, Variable):
        if not cond:  # raised, not `assert`ed: a test runner may rewrite library asserts
            raise AssertionError() if message is _NO_MESSAGE else AssertionError(message)
        return True
    _one_element(cond, "assert", "use rt.all(x) or rt.any(x) in the assert")
    from autostatic_runtime.ops.debugging import Assert

    data = []
    if isinstance(message, TensorLike):  # values to show when it fails
        data, message = [message], ""
    elif message is _NO_MESSAGE or message is None:
        message = ""
    Assert(cond, data, message=str(message), source=source)
    return True


def convert_print(*args: Any, **kwargs: Any) -> None:
    """``print(*args, sep=..., end=..., file=..., flush=...)``; while a program is being
    built, a ``print`` op that prints the line each time the program runs (tensors show their
    values then, everything else is formatted now), so lines keep eager order, a tensor
    branch prints only when taken and a loop body at each iteration. ``file`` must then be
    stdout or stderr (a line of Python values to another file prints now)."""
    symbolic = any(isinstance(a, Variable) for a in args)
    if not (symbolic or not in_dynamic_mode()) or not _PRINT_KEYWORDS.issuperset(kwargs):
        builtins.print(*args, **kwargs)
        return
    sep, end = kwargs.get("sep"), kwargs.get("end")
    if not (sep is None or isinstance(sep, str)) or not (end is None or isinstance(end, str)):
        builtins.print(*args, **kwargs)  # Python's own TypeError
        return
    target = kwargs.get("file")
    if target is None or target is sys.stdout:
        stream = "stdout"
    elif target is sys.stderr:
        stream = "stderr"
    elif not symbolic:
        builtins.print(*args, **kwargs)
        return
    else:
        raise StaticBuildError(
            "print() of a symbolic tensor prints when the program runs, so it can only print "
            f"to sys.stdout or sys.stderr, not {target!r}; print the fetched value instead",
            user_location(),
        )
    from autostatic_runtime.ops.debugging import print_values

    print_values(
        args,
        " " if sep is None else sep,
        "\n" if end is None else end,
        stream,
        bool(kwargs.get("flush", False)),
    )


_CASTS = {"int": (int, "int64"), "float": (float, None), "bool": (bool, "bool")}


def convert_var_dtype(var: Any, dtype: str) -> Any:
    """``int(var)``, ``float(var)`` or ``bool(var)`` (``dtype`` is the builtin's name); a
    one-element symbolic ``var`` becomes a 0-D ``cast`` of it (int64, the default float
    dtype, bool)."""
    python, target = _CASTS[dtype]
    if not isinstance(var, Variable):
        return python(var)
    hint = (
        "use rt.all(x) or rt.any(x)"
        if dtype == "bool"
        else f"cast every element with x.astype('{target or 'float32'}')"
    )
    _one_element(var, f"{dtype}()", hint)
    from autostatic_runtime.ops.elementwise import cast
    from autostatic_runtime.ops.manipulation import reshape

    want = dtypes.convert_dtype(target) if target else dtypes.get_default_dtype()
    out = var if var.dtype == want else cast(var, want)
    return _python_number(reshape(out, []) if out.ndim or out is var else out)


def convert_int(*args: Any, **kwargs: Any) -> Any:
    """``int(*args)``: ``convert_var_dtype(x, 'int')`` for one symbolic argument."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Variable):
        return convert_var_dtype(args[0], "int")
    return int(*args, **kwargs)


def convert_float(*args: Any, **kwargs: Any) -> Any:
    """``float(*args)``: ``convert_var_dtype(x, 'float')`` for one symbolic argument."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Variable):
        out = convert_var_dtype(args[0], "float")
        return out.detach()  # a Python float carries no gradient: neither does this
    return float(*args, **kwargs)


def convert_bool(*args: Any, **kwargs: Any) -> Any:
    """``bool(*args)``: ``convert_var_dtype(x, 'bool')`` for one symbolic argument."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Variable):
        return convert_var_dtype(args[0], "bool")
    return bool(*args, **kwargs)


def convert_max(*args: Any, **kwargs: Any) -> Any:
    """``max(a, b, ...)``; element-wise ``rt.maximum`` when an argument is symbolic (the
    builtin would ask for its truth value)."""
    return _extremum(builtins.max, "maximum", args, kwargs)


def convert_min(*args: Any, **kwargs: Any) -> Any:
    """``min(a, b, ...)``; element-wise ``rt.minimum`` when an argument is symbolic."""
    return _extremum(builtins.min, "minimum", args, kwargs)


def _extremum(builtin: Any, op_name: str, args: tuple, kwargs: dict) -> Any:
    if len(args) < 2 or kwargs or not any(isinstance(a, Variable) for a in args):
        return builtin(*args, **kwargs)
    from autostatic_runtime.ops import elementwise

    op = getattr(elementwise, op_name)
    out = args[0]
    for a in args[1:]:
        if not isinstance(out, Variable) and not isinstance(a, Variable):
            out = builtin(out, a)
        else:
            out = op(*_as_pair(out, a))
    return out


def _as_pair(a: Any, b: Any) -> tuple:
    """A tensor and a number as two tensors of the tensor's dtype."""
    from autostatic_runtime.creation import full

    if not isinstance(a, Variable):
        a = full([], a, dtype=b.dtype)
    if not isinstance(b, Variable):
        b = full([], b, dtype=a.dtype)
    return a, b


def convert_len(var: Any) -> Any:
    """``len(var)``; for a symbolic ``var``, its first dim: a Python int when known while
    building, else a 0-D int32 tensor computed when the program runs."""
    if not isinstance(var, Variable):
        if isinstance(var, TensorArray):
            return _python_number(var.length())
        return len(var)
    if not var._shape:
        raise TypeError(f"len() of a 0-D tensor ({var.name!r} has shape [])")
    first = var._shape[0]
    if first >= 0:
        return first
    from autostatic_runtime.ops.manipulation import shape

    return _python_number(shape(var)[0])


def convert_shape(x: Any) -> Any:
    """``x.shape``; for a symbolic ``x`` with unknown dims (-1), a list with a Python int for
    each known dim and a 0-D int32 tensor (its value when the program runs) for each
    unknown one."""
    if not isinstance(x, Variable):
        return x.shape
    dims = x._shape
    if all(d >= 0 for d in dims):
        return list(dims)
    from autostatic_runtime.ops.manipulation import shape

    runtime = shape(x)
    return [_python_number(runtime[i]) if d < 0 else d for i, d in enumerate(dims)]


def _python_number(value: Variable) -> Variable:
    """``value``, a symbolic stand-in for what eager code has as a Python number (a length,
    a dim, ``int(x)``), marked weak: it promotes like that number (``dtypes.weak_result``:
    ``y_int32 + len(x)`` stays int32)."""
    value._weak = True
    return value


def convert_isinstance(obj: Any, classinfo: Any) -> bool:
    """``isinstance(obj, classinfo)``, where a symbolic tensor counts as an ``rt.Tensor``
    (and a static Parameter as an ``rt.nn.Parameter``), so code that checks for tensors
    takes the same path while tracing as it does eagerly."""
    if isinstance(obj, Variable) and _names_tensor(obj, classinfo):
        return True
    return isinstance(obj, classinfo)


def _names_tensor(obj: Variable, classinfo: Any) -> bool:
    if isinstance(classinfo, tuple):
        return any(_names_tensor(obj, c) for c in classinfo)
    if isinstance(classinfo, types.UnionType):
        return any(_names_tensor(obj, c) for c in classinfo.__args__)
    if classinfo is Tensor:
        return True
    from autostatic_runtime.nn.parameter import Parameter as EagerParameter

    return classinfo is EagerParameter and isinstance(obj, Parameter)


def _one_element(var: Variable, what: str, hint: str) -> None:
    """A clear error at the user's line unless ``var`` may hold exactly one element."""
    size = var.size
    if size not in (1, -1):
        raise StaticBuildError(
            f"{what} of the symbolic tensor {var.name!r} with shape {var.shape}: only a "
            f"tensor with one element has a truth value or Python number ({size} here); {hint}",
            user_location(),
        )
