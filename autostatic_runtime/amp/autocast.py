"""``rt.amp.auto_cast``: automatic mixed precision of the ops run or traced in a block.

    with rt.amp.auto_cast():               # level 'O1', dtype 'float16'
        logits = model(x)                  # matmul/conv2d in float16, softmax in float32
    loss = F.cross_entropy(logits, y)

Inside the block each op's inputs are cast before it runs (eager) or is appended (while a
program is traced: the casts are ``cast`` ops of the program), by Paddle's rules:

- O1: an op of the white list (``lists.py``) takes float16 inputs, one of the black list
  float32 inputs, any other op float32 when one of its inputs is float32;
- O2: the same with a black list of only the ops slow in low precision, for models whose
  parameters ``decorate(level='O2')`` made float16; with ``use_promote=False`` every op off
  the black list runs in float16;
- float64 and integer inputs are never cast; nor are the inputs of ``cast`` itself.

The block belongs to the thread that enters it and nests (``auto_cast(False)`` inside turns
it off); gradients run in the dtypes of their forward, with no casts of their own.

Where: a device computes mixed precision in the dtypes its backend lists in ``AMP_DTYPES``
(CuPy, on a GPU: float16). Elsewhere (NumPy on the CPU, or bfloat16, which no backend here
has) the block warns and changes nothing, as Paddle's ``auto_cast`` does on a place without
low-precision kernels.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.amp import lists
from autostatic_runtime.ops import registry
from autostatic_runtime.tensor import TensorLike

__all__ = [
    "auto_cast",
    "amp_guard",
    "AutoCast",
    "AmpWarning",
    "is_float16_supported",
    "is_bfloat16_supported",
]

LEVELS = ("O0", "OD", "O1", "O2")
AMP_DTYPES = {"cupy": frozenset({"float16"})}  # backend name -> dtypes it computes AMP in
_CASTABLE = frozenset({"float16", "float32"})


class AmpWarning(UserWarning):
    """Mixed precision asked for where it cannot run (the block or scaler has no effect)."""


class _LastDtype(threading.local):
    dtype: Any = None  # the dtype of the last auto_cast block this thread entered (Paddle's
    # amp_global_state().amp_dtype: a GradScaler used after a bfloat16 block turns itself off)


LAST = _LastDtype()


def _backend_for(device: Any):
    from autostatic_runtime import backends

    if device is None:
        return backends.current_backend()
    kind = str(device).partition(":")[0].lower()
    name = {"cpu": "numpy", "gpu": "cupy", "cuda": "cupy"}.get(kind, kind)
    try:
        return backends.get_backend(name)
    except Exception:  # a backend that is not installed here computes nothing
        return None


def _supports(dtype: str, device: Any = None) -> bool:
    backend = _backend_for(device)
    if backend is None:
        return False
    found = getattr(backend, "amp_dtypes", None)
    if found is None:
        found = AMP_DTYPES.get(backend.name, ())
    return dtype in found


def is_float16_supported(device: Any = None) -> bool:
    """Whether ``device`` (default: the current one) computes mixed precision in float16.

    A GPU (CuPy) does, the CPU (NumPy) does not."""
    return _supports("float16", device)


def is_bfloat16_supported(device: Any = None) -> bool:
    """Whether ``device`` (default: the current one) computes mixed precision in bfloat16.

    No backend here has a bfloat16 dtype, so False."""
    return _supports("bfloat16", device)


def _op_names(value: Any, argument: str) -> frozenset:
    if value is None:
        return frozenset()
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(
            f"auto_cast: {argument} must be a list, tuple or set of op names, "
            f"not {type(value).__name__}"
        )
    for name in value:
        if not isinstance(name, str):
            raise TypeError(f"auto_cast: {argument} holds {name!r}, not an op name (a str)")
    return frozenset(value)


def check_level(level: Any, allowed: tuple, where: str) -> str:
    if not isinstance(level, str) or level.upper() not in allowed:
        raise ValueError(f"{where}: level must be one of {', '.join(allowed)}, not {level!r}")
    return level.upper()


def check_dtype(dtype: Any, where: str) -> str:
    name = str(dtype).lower() if isinstance(dtype, str) else str(dtype)
    if name not in ("float16", "bfloat16"):
        raise ValueError(f"{where}: dtype must be 'float16' or 'bfloat16', not {dtype!r}")
    return name


class Rule:
    """The casts of one auto_cast setting: ``rule(op, inputs)`` gives the inputs ``op`` runs
    on. ``key`` identifies the setting (part of a traced program's cache key)."""

    __slots__ = ("level", "dtype", "white", "black", "promote", "key")

    def __init__(self, level: str, dtype: str, white: frozenset, black: frozenset, promote: bool):
        self.level, self.dtype, self.promote = level, dtypes.convert_dtype(dtype), promote
        self.white, self.black = white, black
        self.key = ("amp", level, dtype, tuple(sorted(white)), tuple(sorted(black)), promote)

    def target(self, name: str, inputs: tuple) -> Any:
        """The dtype ``name``'s float inputs are cast to, or None for no casts."""
        if name in self.white:
            return self.dtype
        if name in self.black:
            return dtypes.float32
        if name in lists.NEVER_CAST:
            return None
        if self.level == "OD":
            return dtypes.float32
        if self.promote:
            return dtypes.float32 if any(_dtype(x) == "float32" for x in _flat(inputs)) else None
        return self.dtype

    def __call__(self, op: Any, inputs: tuple) -> tuple:
        want = self.target(op.name, inputs)
        if want is None:
            return inputs
        return tuple(_cast(x, want) for x in inputs)


def _flat(inputs: tuple):
    for x in inputs:
        if isinstance(x, (list, tuple)):
            yield from x
        else:
            yield x


def _dtype(x: Any) -> Any:
    return x.dtype if isinstance(x, TensorLike) else None


def _cast(x: Any, want: Any) -> Any:
    if isinstance(x, TensorLike):
        d = x.dtype
        if d != want and d in _CASTABLE:
            from autostatic_runtime.ops.elementwise import cast

            return cast(x, want)
        return x
    if isinstance(x, list):
        return [_cast(v, want) for v in x]
    if isinstance(x, tuple):
        return tuple(_cast(v, want) for v in x)
    return x


class AutoCast:
    """The context manager (and decorator) ``auto_cast(...)`` returns."""

    def __init__(
        self,
        enable: bool = True,
        custom_white_list: Any = None,
        custom_black_list: Any = None,
        level: str = "O1",
        dtype: str = "float16",
        use_promote: bool = True,
    ):
        if not isinstance(enable, bool):
            raise TypeError(f"auto_cast: enable must be True or False, not {enable!r}")
        if not isinstance(use_promote, bool):
            raise TypeError(f"auto_cast: use_promote must be True or False, not {use_promote!r}")
        self.level = check_level(level, LEVELS, "auto_cast")
        self.dtype = check_dtype(dtype, "auto_cast") if enable else str(dtype).lower()
        white = _op_names(custom_white_list, "custom_white_list")
        black = _op_names(custom_black_list, "custom_black_list")
        white, black = frozenset(lists.resolve(white)), frozenset(lists.resolve(black))
        both = white & black
        if both:
            raise ValueError(
                f"auto_cast: {sorted(both)} are in both custom_white_list and "
                "custom_black_list; put each op in one of them"
            )
        self.enable = enable
        self.use_promote = use_promote
        self.white = (lists.white_list(self.dtype, self.level) - black) | white
        self.black = (lists.black_list(self.dtype, self.level) - white) | black
        self._local = threading.local()  # per thread: what each enter replaced

    def _stack(self) -> list:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _rule(self) -> Rule | None:
        if not self.enable or self.level == "O0":
            return None
        if not _supports(self.dtype):
            from autostatic_runtime.backends import get_device

            warnings.warn(
                f"auto_cast: the current device {get_device()!r} does not compute mixed "
                f"precision in {self.dtype} (it needs a GPU through CuPy, and float16), so "
                "auto_cast has no effect here; ops run in the dtypes of their inputs",
                AmpWarning,
                stacklevel=3,
            )
            return None
        promote = self.use_promote or self.level != "O2"
        return Rule(self.level, self.dtype, self.white, self.black, promote)

    def __enter__(self) -> AutoCast:
        rule = self._rule()
        self._stack().append((registry.AUTOCAST.rule, rule is not None))
        LAST.dtype = self.dtype  # kept after the block, for GradScaler.scale (as Paddle's)
        registry.AUTOCAST.rule = rule
        if rule is not None:
            registry.count_autocast(1)
        return self

    def __exit__(self, *exc: Any) -> None:
        registry.AUTOCAST.rule, counted = self._stack().pop()
        if counted:
            registry.count_autocast(-1)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapped


def auto_cast(
    enable: bool = True,
    custom_white_list: Any = None,
    custom_black_list: Any = None,
    level: str = "O1",
    dtype: str = "float16",
    use_promote: bool = True,
) -> AutoCast:
    """Mixed precision for the ops run or traced in a ``with`` block (``paddle.amp.auto_cast``).

    Args:
        enable: False turns auto casting off inside the block (also inside an outer one).
        custom_white_list: op names to run in ``dtype`` as well (``{'elementwise_add'}``).
        custom_black_list: op names to keep in float32 (``{'conv2d'}``); no name may be in
            both lists.
        level: 'O1' (white ops in ``dtype``, black ops in float32, the rest by their inputs),
            'O2' (for float16 parameters from ``decorate``: only the black list in float32),
            'OD' (white ops in ``dtype``, every other op in float32) or 'O0' (off).
        dtype: 'float16' or 'bfloat16'.
        use_promote: at O2, run an op with a float32 input in float32 (False: everything off
            the black list in ``dtype``).

    Returns:
        a context manager, also usable as a decorator. On a device without mixed precision
        in ``dtype`` (the CPU) entering it warns (``AmpWarning``) and changes nothing.
    """
    return AutoCast(enable, custom_white_list, custom_black_list, level, dtype, use_promote)


amp_guard = auto_cast


def active_key() -> Any:
    """The cache-key part of this thread's auto_cast setting (None when no casts happen)."""
    if not registry._autocasting[0]:
        return None
    rule = registry.AUTOCAST.rule
    return None if rule is None else rule.key
