"""What converted code calls at run time (``_jst.<name>`` in generated source).

Converted code keeps every statement as the user wrote it for Python values and eager
tensors; it calls these functions only when a condition turned out to be *symbolic* (a
static ``Variable`` while a program is being traced). Each ``convert_*`` docstring shows the
plain Python it stands for.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
import sys
from collections.abc import Callable
from typing import Any

import autostatic_switch as switch
from autostatic_runtime import dtypes, mode
from autostatic_runtime.convert_builtins import (  # builtins in converted code
    builtins,
    convert_assert,
    convert_bool,
    convert_float,
    convert_int,
    convert_isinstance,
    convert_len,
    convert_max,
    convert_min,
    convert_print,
    convert_shape,
    convert_var_dtype,
)
from autostatic_runtime.convert_loops import (  # ``for`` loops
    check_loop_list,
    convert_enumerate,
    convert_range,
    convert_zip,
    hand_over,
    is_symbolic_iterable,
    loop_continues,
    loop_item,
    loop_length,
    loop_placeholder,
    python_items,
)
from autostatic_runtime.errors import StaticBuildError
from autostatic_runtime.static.control_flow import PLACEHOLDER
from autostatic_runtime.static.mutation import set_attribute  # obj.attr = v in converted code
from autostatic_runtime.static.program import Variable
from autostatic_runtime.tensor import TensorLike

__all__ = [
    "tracing", "traces_here", "traced", "convert_call", "is_symbolic", "convert_ifelse",
    "convert_while_loop", "convert_for_loop", "logical_and", "logical_or", "logical_not",
    "select", "convert_and", "convert_or", "convert_ifexp", "passthrough", "UNDEFINED", "Undefined",
    "PLACEHOLDER", "unsupported",
    "builtins", "operator", "convert_assert", "convert_print", "convert_var_dtype", "convert_int",
    "convert_float", "convert_bool", "convert_len", "convert_max", "convert_min",
    "convert_shape", "convert_isinstance",
    "convert_range", "convert_enumerate", "convert_zip", "is_symbolic_iterable", "loop_length",
    "loop_continues", "loop_item", "loop_placeholder", "check_loop_list", "python_items",
    "hand_over",
]  # fmt: skip


#: ``AUTOSTATIC_FORCE_CONVERTED=1`` (read once, by ``autostatic_switch``): converted
#: functions always run their converted body, on Python values too - a testing and
#: diagnostic setting that makes a test suite exercise the converter's Python semantics (see
#: docs/reliability.md).
FORCE_CONVERTED = switch.FORCE_CONVERTED

#: True while any thread builds a program (or forced): a cheap module-level bool, so the
#: entry check of a converted function, ``if _jst.tracing and _jst.traces_here():``, costs
#: one attribute read on the eager path while nobody traces.
tracing = FORCE_CONVERTED


def traces_here() -> bool:
    """True when the calling thread is building a program, or the converted body is forced
    (``FORCE_CONVERTED``, or ``tracing`` set by hand while no thread builds one, as tests
    do): converted functions then run their converted body. While one thread traces, eager
    code in the other threads keeps running the original bodies."""
    return FORCE_CONVERTED or _mode_local.static or not _any_static[0]


_mode_local = mode._local
_any_static = mode._static


def _follow_mode(any_static: bool) -> None:
    global tracing
    tracing = any_static or FORCE_CONVERTED


mode.on_switch(_follow_mode)


_traced_caller: list = [None]  # set by the compiler (autostatic) when it is imported


def traced(target: Any = None, frame: Any = None) -> Callable:
    """The tracing function of the converted function calling this, from its entry check::

        def f(a, b=2, *args, c, **kw):
            if __jst__.tracing and __jst__.traces_here():
                return __jst__.traced()(a, b, *args, c=c, **kw)   # same arguments
            <original body>

    The compiler finds (builds on first use) the function's *tracing function* - its body
    converted - from the caller's frame (its code, globals and free variables) and
    ``target``: None for the import hook's checks (the caller's code is the key), else the
    key ``autostatic.convert`` compiled in, or the function it made. ``frame``: the caller's
    frame when it is not the caller of this function.
    """
    finder = _traced_caller[0]
    if finder is None and "autostatic" in sys.modules:  # the compiler is loaded: find its hook
        import importlib

        importlib.import_module("autostatic.lazy").install()
        finder = _traced_caller[0]
    if finder is None:
        raise StaticBuildError(
            "a converted function is being traced but the autostatic compiler is not loaded; "
            "import autostatic before tracing"
        )
    return finder(target, frame or sys._getframe(1))


# the hook's entry checks call these two through autostatic_switch (no wrapper in between)
switch.traces_here, switch.traced = traces_here, traced

_call_converter: list = [None]  # set by the compiler (autostatic) when it is imported


def convert_call(fn: Callable) -> Callable:
    """``fn`` itself, or its converted form while tracing (``convert_call(f)(*args)`` is
    ``f(*args)``). The compiler converts user functions, methods, callable objects and
    ``Layer.forward``; builtins, the standard library, numpy and autostatic stay as they are.
    """
    converter = _call_converter[0]
    return fn if converter is None else converter(fn)


def is_symbolic(value: Any) -> bool:
    """True for a static Variable: the statement must become an op. (One type test.)"""
    return value.__class__ is Variable or isinstance(value, Variable)


class Undefined:
    """Stands for a variable that is not bound on the path taken (``UNDEFINED``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<undefined>"

    def __bool__(self) -> bool:
        raise NameError("a variable is used before it is defined on this path")


UNDEFINED = Undefined()

#: Generated names that hold a function's return value start with this (the early-return
#: lowering); a branch that has not returned yet gives a placeholder for them.
RETURN_VALUE = "__retval"


def convert_ifelse(
    pred: Variable,
    true_fn: Callable,
    false_fn: Callable,
    inputs: tuple,
    names: tuple,
    location: tuple | None = None,
    arrays: tuple = (),
    containers: tuple = (),
    attributes: tuple = (),
) -> tuple:
    """The symbolic path of

        if pred:
            <true branch>        # true_fn(*inputs) returns the branch's outputs
        else:
            <false branch>

    as a ``cond`` op, or as exactly that statement when ``pred`` is not symbolic. Returns
    the values of ``names`` after the statement (``UNDEFINED`` where one is left unbound).
    ``containers`` are (position in ``inputs``, position in ``names`` or -1) of the lists,
    dicts and tensors the branches change in place (each branch gets its own copy; the
    result is written back into the original object); ``attributes`` are the ``(object,
    name)`` pairs the branches assign,
    restored before each branch is traced (the last outputs are their values).
    """
    if not isinstance(pred, Variable):
        outs = true_fn(*inputs) if pred else false_fn(*inputs)
        if any(v is PLACEHOLDER for v in outs):
            return tuple(UNDEFINED if v is PLACEHOLDER else v for v in outs)
        return outs
    from autostatic_runtime.static.control_flow import cond
    from autostatic_runtime.static.mutation import (
        closure_cells,
        copy_container,
        copyable,
        dict_lists_to_tensor_arrays,
        probing_loop_body,
        restore_attributes,
        restore_cells,
        to_tensor_array,
        write_back,
    )
    from autostatic_runtime.static.tensor_array import _ProbeDone

    saved = [getattr(obj, attr, _MISSING) for obj, attr in attributes]
    cells = closure_cells((true_fn, false_fn), names)  # each branch starts from these values
    inputs = list(inputs)
    copied = [(i, j) for i, j in containers if copyable(inputs[i])]
    shared = [(i, j) for i, j in containers if not copyable(inputs[i]) and j >= 0]

    # attributes holding a list or dict (``self.cache["k"] = v``): each branch changes a copy
    # (of the contents before the 'if': a namedtuple's field, which cannot be rebound, holds
    # the copy's contents instead; ``fixed``, put back after)
    held = [k for k, value in enumerate(saved) if type(value) in (list, dict)]
    before = {k: copy_container(saved[k]) for k in held}
    fixed: set = set()
    in_place: dict = {}  # label -> the held attributes the branch changed in place
    pads: dict = {}  # k -> the keys both branches give held dict k (see _one_sided_entries)
    first_attr = len(names) - len(attributes)

    def branch(fn: Callable, label: str) -> Callable:
        def run() -> tuple:
            restore_attributes(attributes, saved)
            restore_cells(cells)
            copies = {k: copy_container(before[k]) for k in held}
            for k, copy in copies.items():
                obj, attr = attributes[k]
                if not set_attribute(obj, attr, copy):
                    fixed.add(k)
            args = list(inputs)
            for i, _ in copied:
                args[i] = copy_container(args[i])
            try:
                outs = list(fn(*args))
            except _ProbeDone as done:  # reads an empty list a loop probe is typing
                if done.value is not None:
                    raise
                outs = [PLACEHOLDER] * len(names)  # (the probe's trace is discarded)
            except Exception as exc:  # noqa: BLE001 - the user's raise: the program raises
                if isinstance(exc, StaticBuildError) or not _raised_by_user(exc):
                    raise
                outs = _raising_branch(exc, names)
            for i, (name, value) in enumerate(zip(names, outs)):
                if value is UNDEFINED and (name.startswith(RETURN_VALUE) or probing_loop_body()):
                    outs[i] = PLACEHOLDER  # typed like the other branch's value
                elif value is UNDEFINED:
                    raise StaticBuildError(
                        f"'{name}' is set in only one branch of this tensor-dependent 'if' but "
                        f"used after it; '{name}' must also be initialized in the {label} "
                        "branch (or before the 'if')",
                        location,
                    )
            for _, j in shared:  # a tensor array: its own log merges what the branches did
                outs[j] = _SHARED
            seen[label] = {names[j]: args[i] for i, j in copied if j >= 0}
            in_place[label] = {k for k in held if outs[first_attr + k] is copies[k]}
            for k, keys in pads.items():  # an entry the other branch sets only: a
                value = outs[first_attr + k]  # placeholder here (Paddle's rule for state)
                outs[first_attr + k] = {key: value.get(key, PLACEHOLDER) for key in keys}
            attrs_seen[label] = {k: outs[first_attr + k] for k in held}
            return tuple(outs) + tuple(args[i] for i, _ in copied)

        run.__wrapped__ = fn  # errors name the branch's own lines
        return run

    seen: dict = {}  # label -> the containers a branch left: {name: value}
    attrs_seen: dict = {}  # label -> the held attributes' values a branch left: {k: value}
    try:
        try:
            outs = cond(pred, branch(true_fn, "true"), branch(false_fn, "else"), None, names)
        except StaticBuildError:
            _check_entries(seen, location)
            pads.update(_one_sided_entries(attrs_seen))
            lists = [(i, j) for i, j in copied if j >= 0 and type(inputs[i]) is list]
            unread = [(i, j) for i, j in copied if j < 0]
            in_dicts = [  # (lists held in a dict: tensor arrays in place)
                (i, j)
                for i, j in copied
                if j >= 0
                and type(inputs[i]) is dict
                and dict_lists_to_tensor_arrays(inputs[i], names[j])
            ]
            if not lists and not unread and not in_dicts and not pads:
                raise
            # lists the branches leave with different lengths become tensor arrays; lists and
            # dicts read nowhere after the 'if' are kept as they were
            for i, j in lists:
                inputs[i] = to_tensor_array(inputs[i], names[j])
            shared += lists
            copied = [c for c in copied if c not in lists and c not in unread]
            try:
                outs = cond(pred, branch(true_fn, "true"), branch(false_fn, "else"), None, names)
            except StaticBuildError:
                _check_entries(seen, location)
                raise
    finally:
        restore_attributes(attributes, saved)
        for k in fixed:
            write_back(saved[k], before[k])
        restore_cells(cells)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    merged = outs[len(names) :]
    outs = outs[: len(names)]
    for (i, j), value in zip(copied, merged):
        write_back(inputs[i], value)
        if j >= 0:
            outs[j] = inputs[i]
    for i, j in shared:
        outs[j] = inputs[i]
    for k in held:  # changed in place by both branches: the object keeps its identity
        if all(k in done for done in in_place.values()) and len(in_place) == 2:
            outs[first_attr + k] = write_back(saved[k], outs[first_attr + k])
    return tuple(outs)


def _one_sided_entries(attrs_seen: dict) -> dict:
    """{k: keys}: for each dict attribute ``k`` the branches leave with different keys (or
    order), the keys both give it (an entry only one sets gets a placeholder in the other:
    an object's state, which the converter cannot know to be read after the ``if``)."""
    true, false = attrs_seen.get("true", {}), attrs_seen.get("else", {})
    pads = {}
    for k, value in true.items():
        other = false.get(k)
        if type(value) is dict and type(other) is dict and list(value) != list(other):
            pads[k] = list(value) + [key for key in other if key not in value]
    return pads


def _check_entries(seen: dict, location: tuple | None) -> None:
    """The error for a dict entry that only one branch of a tensor ``if`` sets (``if c:
    d["k"] = v``): the program cannot hold a key on one path only (AutoGraph's rule)."""
    true, false = seen.get("true"), seen.get("else")
    if not true or not false:
        return
    for name, value in true.items():
        found = _one_sided(value, false.get(name), name)
        if found is not None:
            entry, side = found
            raise StaticBuildError(
                f"'{entry}' is set in only one branch of this tensor-dependent 'if' but used "
                f"after it; '{entry}' must also be initialized in the {side} branch (or before "
                "the 'if')",
                location,
            ) from None


def _one_sided(a: Any, b: Any, label: str) -> tuple[str, str] | None:
    """(an entry of dict ``a`` or ``b`` missing from the other, the branch it is missing
    from: "else" for ``b``, "true" for ``a``), nested dicts too; None if there is none."""
    if type(a) is not dict or type(b) is not dict:
        return None
    for k in a:
        entry = f"{label}[{k!r}]"
        if k not in b:
            return entry, "else"
        found = _one_sided(a[k], b[k], entry)
        if found is not None:
            return found
    for k in b:
        if k not in a:
            return f"{label}[{k!r}]", "true"
    return None


def _raised_by_user(exc: Exception) -> bool:
    """Whether ``exc`` was raised by a ``raise`` in user code (its innermost frame is not
    autostatic's, NumPy's or the standard library's)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    path = tb.tb_frame.f_code.co_filename
    return not any(part in path for part in _LIBRARY_PARTS)


_LIBRARY_PARTS = (
    os.sep + "autostatic" + os.sep, os.sep + "autostatic_runtime" + os.sep,
    os.sep + "numpy" + os.sep, os.path.dirname(os.__file__), "<frozen",
)  # fmt: skip


def _user_line(exc: Exception) -> str:
    """``file:line`` of the innermost frame of user code in ``exc``'s traceback, or ''."""
    found, tb = "", exc.__traceback__
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if not any(part in path for part in _LIBRARY_PARTS):
            found = f"{path}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _raising_branch(exc: Exception, names: tuple, what: str = "branch") -> list:
    """A branch (or loop body: ``what``) that raised while traced (``else: raise
    ValueError(...)``, a failed ``d[key]``): an ``assert`` op that raises the same exception
    (its type and arguments) when the program takes the branch, and placeholders for its
    outputs."""
    from autostatic_runtime.creation import full
    from autostatic_runtime.ops.debugging import Assert

    source = f"{type(exc).__name__}: {exc}"
    where = _user_line(exc)
    note = f"raised at {where} when this {what} was traced" if where else "raised when traced"
    Assert(full([], False, dtypes.bool_), message=f"{source} ({note})", source=source,
           raises=exc)  # fmt: skip
    return [PLACEHOLDER] * len(names)


#: A branch output that both branches give alike (a tensor array merged by its own log).
_SHARED = ("shared",)
_MISSING = object()


class passthrough:  # noqa: N801 - used as a function in generated code
    """The branch function of a branch that computes nothing: ``passthrough((1, 0, -1))(a, b)``
    is ``(b, a, UNDEFINED)`` (-2 gives ``PLACEHOLDER``); ``values=((i, v), ...)`` gives output
    ``i`` the constant ``v`` (a branch of constant assignments: ``__break_0 = True``);
    ``attributes=((obj, name), ...)`` appends the current values of the attributes the other
    branch assigns (this one leaves them as they are)."""

    __slots__ = ("positions", "location", "values", "attributes")

    def __init__(
        self,
        positions: tuple,
        location: tuple | None = None,
        values: tuple = (),
        attributes: tuple = (),
    ):
        self.positions, self.location = positions, location
        self.values = dict(values)
        self.attributes = attributes

    def __call__(self, *inputs: Any) -> tuple:
        if self.values:
            values = self.values
            outs = tuple(
                values[j] if j in values else _passed(inputs, i)
                for j, i in enumerate(self.positions)
            )
        else:
            outs = tuple(inputs[i] if i >= 0 else _MISSING_OUTPUT[i] for i in self.positions)
        if self.attributes:
            return outs + tuple(getattr(obj, attr) for obj, attr in self.attributes)
        return outs


_MISSING_OUTPUT = {-1: UNDEFINED, -2: PLACEHOLDER}


def _passed(inputs: tuple, i: int) -> Any:
    return inputs[i] if i >= 0 else _MISSING_OUTPUT[i]


def convert_while_loop(
    cond_fn: Callable,
    body_fn: Callable,
    loop_vars: tuple,
    consts: tuple,
    names: tuple,
    location: tuple | None = None,
    arrays: tuple = (),
    entries: tuple = (),
    first_set: tuple = (),
) -> tuple:
    """The symbolic path of

        while cond_fn(*loop_vars, *consts):
            loop_vars = body_fn(*loop_vars, *consts)

    in Python while the condition is a Python value, then as a ``while`` op from the first
    iteration whose condition is symbolic (Python numbers among the loop variables become
    tensors). ``consts`` are the other values the loop reads. ``arrays`` names the loop
    variables the body ``append``s to or ``pop``s from: Python lists among them become
    ``TensorArray``s when the loop becomes a ``while`` op; ``entries`` are the lists held in
    containers it appends to, ``(container, key, text)``: they become ``TensorArray``s in
    their containers. A loop variable first bound in the body starts as a placeholder shaped
    like the body's value; if the loop runs zero times and it is not a return value, the
    program raises Python's error when it runs (``UnboundLocalError``; ``KeyError``,
    ``AttributeError`` for an entry or attribute the body adds), as do the names in
    ``first_set`` (a ``for`` target unbound before the loop).
    """
    loop_vars = tuple(loop_vars)
    cells = _cells_of((cond_fn, body_fn), names, 0)
    if cells:
        cond_fn, body_fn = _binding(cond_fn, cells), _binding(body_fn, cells)
    while True:
        pred = cond_fn(*loop_vars, *consts)
        if isinstance(pred, Variable):
            break
        if not pred:
            return loop_vars
        loop_vars = tuple(body_fn(*loop_vars, *consts))
    body_fn = _raising_body(body_fn, len(loop_vars))
    from autostatic_runtime.static.control_flow import _build_while
    from autostatic_runtime.static.mutation import copy_container, initialize_from_body

    if entries:
        from autostatic_runtime.static.tensor_array import held_lists_to_tensor_arrays

        held_lists_to_tensor_arrays(entries)
    if any(v is None for v in loop_vars):
        loop_vars = _first_iteration(pred, body_fn, loop_vars, consts, names, arrays, location)
    if arrays:
        from autostatic_runtime.static.tensor_array import to_tensor_arrays

        loop_vars = to_tensor_arrays(loop_vars, names, arrays)
    # a list or dict it carries starts as the loop's own copy: a traced body that changes the
    # user's one in place (a namedtuple's field, ``set_attribute``) leaves the start as it was
    loop_vars = tuple(copy_container(v) if type(v) in (list, dict) else v for v in loop_vars)
    unset = [i for i, v in enumerate(loop_vars) if v is UNDEFINED]
    if unset:  # empty lists the body appends to are typed first: what it binds may read them
        from autostatic_runtime.static.mutation import probe_body
        from autostatic_runtime.static.tensor_array import type_empty_arrays

        type_empty_arrays(lambda: probe_body(body_fn, loop_vars, consts), (loop_vars, consts))
    numbers = [
        i for i, v in enumerate(loop_vars) if type(v) in (int, float) and names[i] not in arrays
    ]
    checked: list[str] = list(first_set)
    if unset or numbers or any(type(v) is dict for v in loop_vars):
        loop_vars, added = initialize_from_body(
            body_fn, loop_vars, consts, names, unset, numbers, location
        )
        checked += [names[i] for i in unset if not names[i].startswith(RETURN_VALUE)] + added
    n = len(loop_vars)

    def cond_loop(*v):
        return cond_fn(*v[:n], *consts)

    def body_loop(*v):
        out = tuple(body_fn(*v[:n], *consts))
        return out + (True,) if checked else out

    cond_loop.__wrapped__, body_loop.__wrapped__ = cond_fn, body_fn  # errors name them
    init = list(loop_vars)
    if checked:  # one more loop variable: whether the body ran
        init.append(False)
        names = tuple(names) + ("__ran",)
    try:
        out = _build_while(cond_loop, body_loop, init, names)
    except StaticBuildError as exc:
        raise StaticBuildError(exc.detail, location) from None
    if checked:
        ran = out.pop()
        from autostatic_runtime.ops.debugging import Assert

        for name_ in checked:
            Assert(
                ran,
                message=f"'{name_}' is first set inside this tensor-dependent loop, which ran "
                "zero times, so it has no value after the loop; set it before the loop",
                raises=_unbound(name_),
            )
    return tuple(out)


def _raising_body(body_fn: Callable, count: int) -> Callable:
    """``body_fn`` for a ``while`` op: a body that raises while traced (``raise
    ValueError(...)``, a failed ``d[key]``) gets an ``assert`` op raising the same exception
    when the program runs an iteration (eager raises only then), and passes its ``count``
    loop variables on unchanged."""

    def run(*args: Any) -> tuple:
        try:
            return body_fn(*args)
        except Exception as exc:  # noqa: BLE001 - the user's raise: the program raises
            if isinstance(exc, StaticBuildError) or not _raised_by_user(exc):
                raise
            _raising_branch(exc, (), "loop body")
            return args[:count]

    run.__wrapped__ = body_fn  # errors name the body's own lines
    return run


def _unbound(label: str) -> Exception:
    """The exception eager code raises reading ``label`` (a variable, ``d['k']``, ``obj.a``)
    that a loop of no iterations left unset."""
    import ast

    if label.endswith("]") and "[" in label:
        try:
            return KeyError(ast.literal_eval(label[label.rindex("[") + 1 : -1]))
        except (ValueError, SyntaxError):
            return KeyError(label)
    if "." in label:
        owner, _, attr = label.rpartition(".")
        return AttributeError(f"'{owner}' has no attribute '{attr}'")
    return UnboundLocalError(
        f"cannot access local variable '{label}' where it is not associated with a value"
    )


def convert_for_loop(
    iterable: Any,
    body_fn: Callable,
    loop_vars: tuple,
    consts: tuple,
    names: tuple,
    location: tuple | None = None,
    arrays: tuple = (),
    breaks: int = -1,
    target: int = -1,
    unpack: int = 0,
    entries: tuple = (),
) -> tuple:
    """The symbolic path of ``for item in iterable: loop_vars = body_fn(item, *loop_vars,
    *consts)`` over a symbolic iterable (see ``is_symbolic_iterable``): a ``while`` op stepping
    an int64 index to ``loop_length``. ``breaks``: the position of the lowered ``break`` flag
    among the loop variables (the loop also stops once it is set), or -1. ``target``: the
    position of the loop variable that is the loop's target (read after the loop): each item
    goes there instead of first, and it starts shaped like an item when ``UNDEFINED``.
    ``unpack``: the target is that many names (``for k, row in ...``): the body function
    takes the item unpacked, as ``k, row = item`` would. ``entries``: see
    ``convert_while_loop``.

    Over a Python iterable: the loop in Python, one body call per item, leaving once the
    flag is True; once it is a tensor (a ``break`` under a tensor ``if``), each of the
    other items' bodies runs under ``if not flag``, a ``cond`` op (the target keeps the item
    where the loop broke). A converted Python ``for`` hands its other items over so."""
    cells = _cells_of((body_fn,), names, 0 if target >= 0 else max(unpack, 1))
    if cells:
        body_fn = _binding(body_fn, cells)
    if unpack:
        body_fn = _unpacking(body_fn, unpack)
    if not is_symbolic_iterable(iterable):
        return _python_items(iterable, body_fn, loop_vars, consts, names, location, arrays,
                             breaks, target)  # fmt: skip
    length = loop_length(iterable, location)

    def cond_fn(index, *state):
        if breaks < 0:
            return index < length
        return loop_continues(state[breaks], index, length)

    def body_fn_indexed(index, *state):  # state: the loop variables, then the constants
        item = loop_item(iterable, index)
        if target < 0:
            return (index + 1, *body_fn(item, *state))
        return (index + 1, *body_fn(*state[:target], item, *state[target + 1 :]))

    body_fn_indexed.__wrapped__ = _named(body_fn)  # errors name the body's own lines
    unbound = ()
    if target >= 0 and loop_vars[target] is UNDEFINED:  # unbound after no iterations
        loop_vars = (*loop_vars[:target], loop_placeholder(iterable), *loop_vars[target + 1 :])
        unbound = (names[target],)
    state = (0, *loop_vars)
    names = ("__index", *names)
    return convert_while_loop(
        cond_fn, body_fn_indexed, state, consts, names, location, arrays, entries, unbound
    )[1:]


def _cells_of(fns: tuple, names: tuple, offset: int) -> list:
    """``(argument position, cell)`` for the loop variables (``names``, from argument
    ``offset`` on) that are cells of the user's function in the loop functions' closures."""
    return [(names.index(var) + offset, cell) for var, cell in named_cells(fns, names)]


def named_cells(fns: tuple, names: tuple) -> list:
    """``(name, cell)`` for each cell of the functions' closures that holds one of ``names``
    (the user function's variables a branch or loop function reads or sets), each once."""
    found, seen = [], set()
    for fn in fns:
        closure = getattr(fn, "__closure__", None)
        if not closure:
            continue
        for var, cell in zip(fn.__code__.co_freevars, closure):
            if var in names and id(cell) not in seen:
                seen.add(id(cell))
                found.append((var, cell))
    return found


def _binding(fn: Callable, cells: list) -> Callable:
    """``fn`` giving each cell of ``cells`` its loop variable's value first: a closure the
    loop calls sees the value of this iteration (the loop variables while tracing)."""

    def bound(*args):
        for i, cell in cells:
            cell.cell_contents = args[i]
        return fn(*args)

    bound.__wrapped__ = getattr(fn, "__wrapped__", fn)  # errors name the function's lines
    return bound


def _unpacking(body_fn: Callable, count: int) -> Callable:
    """``body_fn`` taking the item as ``count`` values, unpacked as an assignment would."""

    def body(item, *state):
        try:
            values = tuple(itertools.islice(iter(item), count + 1))
        except TypeError:
            raise TypeError(f"cannot unpack non-iterable {type(item).__name__} object") from None
        if len(values) != count:
            raise ValueError(
                f"not enough values to unpack (expected {count}, got {len(values)})"
                if len(values) < count
                else f"too many values to unpack (expected {count})"
            )
        return body_fn(*values, *state)

    body.__wrapped__ = body_fn  # errors name the body's own lines
    return body


def _named(fn: Callable) -> Callable:
    """The function whose lines errors name (the body under an unpacking wrapper)."""
    return getattr(fn, "__wrapped__", fn)


def _python_items(items, body_fn, loop_vars, consts, names, location, arrays, breaks, target):
    """``convert_for_loop`` over a Python iterable (above)."""
    state = tuple(loop_vars)
    items = iter(items)
    if target < 0:
        step = body_fn
    else:

        def step(item, *s):
            return body_fn(*s[:target], item, *s[target + 1 :])

        step.__wrapped__ = body_fn  # errors name the body's own lines
    if breaks < 0 or state[breaks] is False:
        for item in items:
            state = tuple(step(item, *state, *consts))
            if breaks >= 0 and state[breaks] is not False:
                break
    if breaks < 0 or state[breaks] is True or state[breaks] is False:
        return state
    unchanged = passthrough(tuple(range(len(state))))
    lists = tuple((names.index(a), names.index(a)) for a in arrays)
    for item in items:  # after a tensor break: each body under `if not flag`
        run = functools.partial(step, item)
        run.__wrapped__ = _named(body_fn)
        not_broken = logical_not(state[breaks])
        state = convert_ifelse(not_broken, run, unchanged, (*state, *consts), names, location,
                               containers=lists)  # fmt: skip
    return state


def _first_iteration(pred, body_fn, loop_vars, consts, names, arrays, location) -> tuple:
    """The loop's first iteration as a ``cond`` op, for loop variables that start as None
    (``state = None`` then ``out, state = cell(x_t, state)``): the body sees None once, as
    Python does; the while op carries the tensors it gives them. Had the loop not run, they
    hold placeholders (zeros) after it, not None."""
    from autostatic_runtime.static.control_flow import cond

    if arrays:
        from autostatic_runtime.static.tensor_array import to_tensor_arrays

        loop_vars = to_tensor_arrays(loop_vars, names, arrays)

    def skip() -> tuple:
        return tuple(PLACEHOLDER if v is None else v for v in loop_vars)

    kept: list = []  # the loop variables the body gives back as they came (lists appended to)

    def first() -> tuple:
        out = tuple(body_fn(*loop_vars, *consts))
        kept[:] = [o is v for o, v in zip(out, loop_vars)]
        return out

    try:
        out = list(cond(pred, first, skip))
    except StaticBuildError as exc:
        raise StaticBuildError(exc.detail, location) from None
    for i, v in enumerate(loop_vars):  # an array the iteration appended to holds the cond's
        if kept and kept[i] and hasattr(v, "buffer"):  # result now (a new one is empty)
            out[i] = v
    return tuple(out)


# ---- expressions ------------------------------------------------------------------------


def convert_and(lhs: Any, rhs: Any) -> Any:
    """``lhs and rhs`` once ``lhs`` is symbolic or truthy (the converted code has taken
    ``lhs`` itself when it is a falsy Python value)."""
    if lhs.__class__ is not Variable:
        return rhs
    if not isinstance(rhs, TensorLike):  # Python's truth value of a Python operand
        return logical_and(lhs, bool(rhs))
    return logical_and(lhs, rhs)


def convert_or(lhs: Any, rhs: Any) -> Any:
    """``lhs or rhs`` once ``lhs`` is symbolic or falsy (the converted code has taken ``lhs``
    itself when it is a truthy Python value)."""
    if lhs.__class__ is not Variable:
        return rhs
    if not isinstance(rhs, TensorLike):
        return logical_or(lhs, bool(rhs))
    return logical_or(lhs, rhs)


def convert_ifexp(pred: Any, true_fn: Callable, false_fn: Callable) -> Any:
    """``true_fn() if pred else false_fn()``; a ``cond`` op for a symbolic ``pred``, so the
    untaken arm reaches neither the values nor the gradients."""
    if pred.__class__ is not Variable:
        return true_fn() if pred else false_fn()
    from autostatic_runtime.static.control_flow import cond

    return cond(pred, true_fn, false_fn)


def logical_and(lhs: Variable, rhs: Any) -> Any:
    """``lhs and rhs`` once ``lhs`` is symbolic (both sides are evaluated)."""
    from autostatic_runtime.ops.elementwise import logical_and as op

    return op(lhs, rhs)


def logical_or(lhs: Variable, rhs: Any) -> Any:
    """``lhs or rhs`` once ``lhs`` is symbolic (both sides are evaluated)."""
    from autostatic_runtime.ops.elementwise import logical_or as op

    return op(lhs, rhs)


def logical_not(value: Variable) -> Any:
    """``not value`` for a symbolic value."""
    from autostatic_runtime.ops.elementwise import logical_not as op

    return op(value)


def select(pred: Variable, if_true: Any, if_false: Any) -> Any:
    """``if_true if pred else if_false`` for a symbolic ``pred`` (both sides evaluated)."""
    from autostatic_runtime.ops.elementwise import cast, where

    if pred.dtype != dtypes.bool_:
        pred = cast(pred, dtypes.bool_)
    return where(pred, if_true, if_false)


def keeps_exception(jumped: Any, location: tuple | None = None) -> bool:
    """Whether the exception in flight through a ``finally`` block goes on: no
    ``break``/``continue`` in the block ran (its lowering sets the flag ``jumped``); one
    that ran discards the exception, as Python's jump does."""
    if isinstance(jumped, Variable):
        raise StaticBuildError(
            "an exception is in flight through a finally block whose break/continue depends "
            "on a tensor: whether the jump discards the exception is only known when the "
            "program runs; decide the jump with a Python value, or handle the exception with "
            "except instead of a jump in finally",
            location,
        )
    return not jumped


def unsupported(message: str, location: tuple | None = None) -> StaticBuildError:
    """The error for a construct the symbolic path cannot express (raised by converted code)."""
    return StaticBuildError(message, location)
