"""User-facing runtime errors. Each names the op, what was wrong, and the user's call site."""

from __future__ import annotations

import os
import re
import sys

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
_COMPILER_DIR = os.path.join(os.path.dirname(_RUNTIME_DIR), "autostatic")
_INTERNAL = (_RUNTIME_DIR + os.sep, _COMPILER_DIR + os.sep)


def is_internal_file(filename: str) -> bool:
    """True for autostatic's own files and generated code (frames hidden from users)."""
    return filename.startswith(_INTERNAL) or filename.startswith("<autostatic")


def user_frame(depth: int = 1):
    """The innermost stack frame that is not inside autostatic (the user's call site).

    Modules that wrap runtime calls on a user's behalf (test harnesses, generated helpers)
    opt out of being "the user" with a global ``__autostatic_internal__ = True``.
    """
    frame = sys._getframe(depth)
    while frame is not None and (
        is_internal_file(frame.f_code.co_filename) or "__autostatic_internal__" in frame.f_globals
    ):
        frame = frame.f_back
    return frame


def user_location(depth: int = 1) -> tuple[str, int, str] | None:
    """(file, line, function) of the user's call site, or None when there is none."""
    frame = user_frame(depth + 1)
    if frame is None:
        return None
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name


def format_location(loc: tuple[str, int, str] | None) -> str:
    if loc is None:
        return ""
    return f" at {loc[0]}:{loc[1]}"


class AutostaticError(Exception):
    """Base class of every error autostatic raises on purpose."""


class OpError(AutostaticError, ValueError):
    """An op was called with inputs it cannot take (shapes, dtypes, axes, devices)."""

    def __init__(self, op: str, message: str, location: tuple[str, int, str] | None = None):
        self.op = op
        self.detail = message
        self.location = location
        super().__init__(f"{op}: {message}{format_location(location)}")


class ShapeError(OpError):
    """Input shapes do not fit the op."""


class DTypeError(OpError, TypeError):
    """Input dtypes do not fit the op."""


class DeviceError(OpError):
    """Inputs live on different devices, or the device is unavailable."""


def fail(op: str, message: str, cls: type[OpError] = OpError) -> OpError:
    """Build an OpError located at the user's call site (raise the result)."""
    return cls(op, message, user_location(2))


_op_error_types: dict[type, type] = {}


def op_error_class(kind: type) -> type:
    """An OpError that is also ``kind`` (so ``except IndexError`` still catches it): the type
    of an op's failure whose kernel raised ``kind``, the same class eagerly and in a
    program."""
    cls = _op_error_types.get(kind)
    if cls is None:
        try:
            cls = type(f"Op{kind.__name__}", (OpError, kind), {})
        except TypeError:  # layout conflict with some built-in exception
            cls = OpError
        _op_error_types[kind] = cls
    return cls


def as_python(exc: BaseException) -> BaseException:
    """Mark ``exc``, raised by a kernel that stands for a Python operation (``list.pop`` of a
    list appended to in a tensor loop), to reach the user as the type Python raises
    (``IndexError``), not as an op's error (see ``op_failure``)."""
    exc.autostatic_python = True
    return exc


def op_failure(op_type: str, location: tuple | None, exc: BaseException) -> BaseException:
    """The exception a program raises when ``exc`` left the kernel of op ``op_type`` (built
    at ``location``): the type the same failure has eagerly, so ``except`` clauses and
    comparisons with eager agree, with the message naming the user's line that built the
    op. An op's own error (``ShapeError``...) is made again at that line; a Python
    operation's (``as_python``) keeps its type, the line added to its message; any other
    exception becomes the ``OpError`` eager mode makes of it (``op_error_class``). Errors of
    the program itself (``ExecutionError``: a loop's budget, an unfed variable) and the
    user's own raises pass as they are."""
    if isinstance(exc, ExecutionError) or is_raised_again(exc):
        return exc
    if location is not None and not location[0]:
        location = None
    if isinstance(exc, OpError):
        new = type(exc)(exc.op, exc.detail, location or exc.location)
    elif getattr(exc, "autostatic_python", False):
        new = _copied(exc)
        if new is None:
            return exc
        if location is not None and len(new.args) == 1 and isinstance(new.args[0], str):
            new.args = (f"{new.args[0]}{format_location(location)}",)
    else:
        detail = f"failed when the program ran: {type(exc).__name__}: {exc}"
        new = op_error_class(type(exc))(op_type, detail, location)
    try:
        new.autostatic_raised = True  # the executors let it through, not wrapped again
    except AttributeError:  # an exception class with __slots__
        pass
    return new


class ProgramFormatError(AutostaticError, ValueError):
    """A serialized program or weights file is corrupt, truncated, or from a newer version."""


class StaticBuildError(AutostaticError):
    """A static program cannot be built as written (branches disagree, a loop var changes type)."""

    def __init__(self, message: str, location: tuple[str, int, str] | None = None):
        self.detail = message  # without the location
        self.location = location
        super().__init__(f"{message}{format_location(location)}")


class ExportError(AutostaticError):
    """A program cannot be exported (to ONNX): names the ops and the user's lines."""

    def __init__(self, message: str, location: tuple[str, int, str] | None = None):
        self.detail = message
        self.location = location
        super().__init__(message)


class ExecutionError(AutostaticError):
    """An op failed while a static program ran; names the op and the user's line that built it."""

    def __init__(self, op_type: str, location: tuple[str, int, str] | None, cause: BaseException):
        self.op_type = op_type
        self.location = location
        super().__init__(
            f"{op_type} failed{format_location(location)}: {type(cause).__name__}: {cause}"
        )


class AssertionFailedError(ExecutionError, AssertionError):
    """An ``assert`` on a symbolic tensor (an ``assert`` op) failed when the program ran;
    names the user's file and line (also an ``AssertionError``, as Python's would be)."""

    def __init__(self, message: str, location: tuple[str, int, str] | None = None):
        self.op_type = "assert"
        self.location = location
        Exception.__init__(self, f"{message}{format_location(location)}")


class SymbolicValueError(StaticBuildError, TypeError):
    """Python asked for the value of a symbolic Variable (``if x:``, ``int(x)``, ``x[i]`` with
    a Variable ``i``) while a program was being built: the code that asked was not converted.
    The message names the user's line and says how to get it converted."""


class DygraphOnlyError(StaticBuildError, AssertionError):
    """A method of eager tensors only (``clear_gradient()``, ``gradient()``) called on a
    symbolic Variable while a program was built; an ``AssertionError`` too, as Paddle's."""


# ---- a user's exception raised by a program -------------------------------------------------

#: Exceptions that a branch of a tensor ``if`` raised while it was traced (``raise
#: KeyError(k)``, a failed dict lookup), by key: the program raises a copy of one when it
#: takes that branch (``raised_again``). A loaded program without the entry raises the
#: builtin exception of the recorded name, or its ``assert`` op's ``AssertionFailedError``.
_RAISED: dict[str, BaseException] = {}
_RAISED_CAP = 1024


def remember_raise(exc: BaseException) -> tuple[str, tuple]:
    """(key, string arguments) under which a program can raise ``exc`` again."""
    cls = type(exc)
    key = f"{cls.__module__}.{cls.__qualname__}:{exc.args!r}"[:400]
    kept = _copied(exc)  # (no traceback: it would keep the traced frames alive)
    if kept is None:
        return "", ()
    if len(_RAISED) >= _RAISED_CAP and key not in _RAISED:
        _RAISED.pop(next(iter(_RAISED)))
    _RAISED[key] = kept
    return key, tuple(a if isinstance(a, str) else repr(a) for a in exc.args)


def raised_again(key: str, args: tuple, note: str) -> BaseException | None:
    """A new exception like the one ``remember_raise`` kept under ``key`` (the same type and
    arguments), with ``note`` added; None when it cannot be made again."""
    import builtins

    kept = _RAISED.get(key)
    exc = None if kept is None else _copied(kept)
    if exc is None:  # a program loaded in another process: builtin exception types only
        module, _, name = key.split(":", 1)[0].rpartition(".")
        cls = getattr(builtins, name, None) if module == "builtins" else None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return None
        try:
            exc = cls(*args)
        except Exception:  # noqa: BLE001 - e.g. UnicodeError's arguments: not made again
            return None
    exc.add_note(note)
    try:
        exc.autostatic_raised = True  # the executors let it through, not wrapped
    except AttributeError:  # an exception class with __slots__
        pass
    return exc


def _copied(exc: BaseException) -> BaseException | None:
    """A new exception of ``exc``'s type with its arguments and attributes, made without
    calling its ``__init__`` (a user's class may take other arguments than it keeps)."""
    cls = type(exc)
    try:
        new = cls.__new__(cls)
        new.args = exc.args
    except Exception:  # noqa: BLE001 - a class that cannot be made so: not raised again
        return None
    if hasattr(exc, "__dict__"):
        new.__dict__.update({k: v for k, v in vars(exc).items() if k != "autostatic_raised"})
    return new


def is_raised_again(exc: BaseException) -> bool:
    """Whether ``exc`` is an exception a program raised as eager mode would: a user's own
    (``raised_again``) or an op's failure at the user's line (``op_failure``); executors let
    it through as it is."""
    return getattr(exc, "autostatic_raised", False) is True


_PRAGMA = re.compile(r"#\s*autostatic:\s*(enable|disable)\b")


def _module_pragma(filename: str) -> str | None:
    """``"enable"``/``"disable"``/None from the leading comment lines of a source file (the
    import hook's rule: comment lines before any code, within the first 4 KiB)."""
    try:
        with open(filename, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    found = None
    for line in head.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith("#"):
            break
        m = _PRAGMA.match(line)
        if m:
            found = m.group(1)
    return found


def _converted_module(frame) -> bool:
    """True when the frame runs converted code: a function ``to_static`` converted (the
    runtime alias is its closure's ``_jst``), or one of a converted module (its globals hold
    the alias: ``autostatic_switch`` for the hook's entry checks, ``convert_ops`` for a
    module converted whole)."""
    if any(n == "_jst" or n.startswith("_jst_") for n in frame.f_code.co_freevars):
        return True
    aliases = [sys.modules.get(n) for n in ("autostatic_switch", "autostatic_runtime.convert_ops")]
    return any(v is a for v in list(frame.f_globals.values()) for a in aliases if a is not None)


_CO_GENERATOR, _CO_COROUTINE, _CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200  # inspect's flags


def symbolic_value_error(name: str, asked: str, value: bool = False) -> SymbolicValueError:
    """The error for Python asking ``asked`` (e.g. "the truth value") of symbolic variable
    ``name`` while a program is built, located at the user's line, saying how to fix it.
    ``value``: Python asked for the value itself (``float(x)``, ``format(x, ".3f")``), which
    only the program's result has: the fix is to return the tensor."""
    from autostatic_runtime import mode

    frame = user_frame(3)
    location = None
    if frame is not None:
        location = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    if not mode.static_here():  # no program is being built: the variable outlived its trace
        return SymbolicValueError(
            f"{asked} of {name!r}: it is a symbolic variable of a traced program, with no value "
            "outside it; it was kept while the function given to to_static was traced (in a "
            "list, an attribute, a global): return it from that function instead and read the "
            "tensor the call returns",
            location,
        )
    what = (
        f"{asked} of the symbolic variable {name!r} is not known while the program is being built"
    )
    if value:
        return SymbolicValueError(
            f"{what}: the values of a program exist only when it runs; return the tensor from "
            "the function given to to_static (return loss) and read the result of the call "
            "(float(step(...)), .numpy()); print(x) inside prints at every run",
            location,
        )
    if frame is None:
        fix = (
            "convert the code with autostatic.to_static, or write the branch with "
            "rt.static.nn.cond / while_loop"
        )
    elif frame.f_code.co_flags & (_CO_GENERATOR | _CO_COROUTINE | _CO_ASYNC_GENERATOR):
        fix = (
            f"{frame.f_code.co_name} is a generator (or coroutine) function, and generators "
            "cannot become programs: compute the tensor-dependent part in a plain function "
            "(return a list or tensor instead of yielding), or decide with a Python value"
        )
    elif _converted_module(frame):
        fix = (
            f"{os.path.basename(frame.f_code.co_filename)} was converted, but this expression "
            "is not one the converter turns into an op (if/while/for statements, and/or/not, "
            "x if c else y are); write it as an if/while statement, or use "
            "rt.static.nn.cond / while_loop"
        )
    elif _module_pragma(frame.f_code.co_filename) == "enable":
        fix = (
            f"{os.path.basename(frame.f_code.co_filename)} carries the '# autostatic: enable' "
            "pragma but was imported without autostatic's import hook, so it was not "
            "converted: call autostatic.install() before importing it, or run the program "
            "with `python -m autostatic run script.py`"
        )
    else:
        fix = (
            f"{frame.f_code.co_name} was not converted: wrap it (or the function calling it) "
            "with autostatic.to_static, or put '# autostatic: enable' in the first lines of "
            "its module and import it after autostatic.install(); or write the branch with "
            "rt.static.nn.cond / while_loop"
        )
    return SymbolicValueError(f"{what}; {fix}", location)


class DistributedError(AutostaticError, RuntimeError):
    """A job of several devices or processes cannot run as asked; says what and what to do.

    For example a batch that does not divide by the device count, or a rank that did not
    take part in a collective."""

    def __init__(self, message: str, location: tuple[str, int, str] | None = None):
        self.detail = message
        self.location = location
        super().__init__(f"{message}{format_location(location)}")
