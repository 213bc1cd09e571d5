"""Python state a traced branch or loop changes in place, kept apart per branch.

A tensor-dependent ``if`` traces both branches one after the other, and a tensor-dependent
loop traces its body once (or twice, to learn the type of a variable first bound inside it).
Lists, dicts and tensors a branch changes in place, and attributes it assigns, must not leak
from one trace into the next; these helpers copy, restore and write back.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.errors import AutostaticError, StaticBuildError
from autostatic_runtime.static.program import Variable


def alias(value: Variable) -> Variable:
    """A new Python object for the same program variable (see ``Variable._alias``)."""
    return value._alias()


def copyable(value: Any) -> bool:
    """A list, dict or non-persistable Variable (a tensor array keeps its own log)."""
    kind = type(value)
    return kind is list or kind is dict or (isinstance(value, Variable) and not value.persistable)


def copy_container(value: Any, depth: int = 0) -> Any:
    """A copy of a list or dict (and of the lists, dicts and records in it, so a branch that
    appends to ``d["k"]`` or sets ``d["k"].x`` changes its own copy), an alias of a
    (non-persistable) Variable."""
    kind = type(value)
    if kind is list:
        return [_nested_copy(v, depth) for v in value]
    if kind is dict:
        return {k: _nested_copy(v, depth) for k, v in value.items()}
    if isinstance(value, Variable) and not value.persistable:
        return alias(value)
    return value


def _nested_copy(value: Any, depth: int) -> Any:
    kind = type(value)
    if (kind is list or kind is dict) and depth < 4:
        return copy_container(value, depth + 1)
    if depth < 4 and _record(value):  # an object of tensors held in it: its own fields
        copy = kind.__new__(kind)
        copy.__dict__.update((k, _nested_copy(v, depth + 1)) for k, v in vars(value).items())
        return copy
    return value


def _record(value: Any) -> bool:
    from autostatic_runtime.static.control_flow import _is_record

    return _is_record(value)


def write_back(original: Any, merged: Any) -> Any:
    """Make ``original`` hold ``merged`` in place (aliases of it see the change; so do
    those of the lists and dicts in it)."""
    if type(original) is list:
        original[:] = [
            _nested_write_back(original[k], v) if k < len(original) else v
            for k, v in enumerate(merged)
        ]
    elif type(original) is dict:
        kept = {k: _nested_write_back(original[k], v) if k in original else v
                for k, v in merged.items()}  # fmt: skip
        original.clear()
        original.update(kept)
    elif isinstance(original, Variable) and not original.persistable:
        original._snapshot()
        original._replace(merged)
    else:
        return merged
    return original


def _nested_write_back(original: Any, merged: Any) -> Any:
    if type(original) in (list, dict) and type(merged) is type(original):
        return write_back(original, merged)
    if type(merged) is type(original) and _record(original) and merged is not original:
        for k, v in vars(merged).items():  # the object keeps its identity
            setattr(original, k, _nested_write_back(getattr(original, k, None), v))
        return original
    if type(original).__name__ == "TensorArray":
        return original  # shared by the branches: its own log merged what they did
    return merged


def dict_lists_to_tensor_arrays(container: Any, name: str) -> bool:
    """The lists held in ``container`` (a dict or list, as branches leave them with different
    lengths) turned into tensor arrays in place; whether any was."""
    from autostatic_runtime.static.tensor_array import TensorArray

    keys = container.keys() if type(container) is dict else range(len(container))
    changed = False
    for k in list(keys):
        value = container[k]
        if type(value) is list:
            try:
                container[k] = TensorArray.from_list(value, f"{name}[{k!r}]")
            except StaticBuildError:
                continue  # not a list of tensors: it stays a list
            changed = True
    return changed


def to_tensor_array(items: list, name: str) -> Any:
    """A list as a tensor array (its length may then depend on a tensor condition)."""
    from autostatic_runtime.static.tensor_array import TensorArray

    return TensorArray.from_list(items, name)


def restore_attributes(attributes: tuple, saved: list) -> None:
    """Set each ``(object, name)`` back to its saved value (or delete it if it had none)."""
    for (obj, attr), value in zip(attributes, saved):
        if value.__class__ is object:  # the caller's "no such attribute" marker
            if hasattr(obj, attr):
                try:
                    delattr(obj, attr)
                except AttributeError:
                    pass
        else:
            set_attribute(obj, attr, value)


def set_attribute(obj: Any, attr: str, value: Any) -> bool:
    """``obj.attr = value`` for an attribute a tensor ``if`` or loop carries; True when it
    was rebound. A field the object cannot rebind (a namedtuple's) changes in place: eager
    code can only have changed the list or dict it holds (``p.x[0] = v``), so that list or
    dict takes ``value``'s contents and keeps its identity (False)."""
    try:
        setattr(obj, attr, value)
        return True
    except AttributeError:
        held = getattr(obj, attr, None)
        if held is value:
            return False
        if type(held) not in (list, dict) or type(value) is not type(held):
            raise
        write_back(held, value)
        return False


def closure_cells(fns: tuple, names: tuple) -> list:
    """``(cell, value)`` for the ``named_cells`` of ``fns``, with their values now (the
    caller's marker ``object`` for an empty cell)."""
    from autostatic_runtime.convert_ops import named_cells

    saved = []
    for _, cell in named_cells(fns, names):
        try:
            saved.append((cell, cell.cell_contents))
        except ValueError:  # unbound
            saved.append((cell, _EMPTY))
    return saved


def restore_cells(saved: list) -> None:
    """Give each cell of ``closure_cells`` its saved value back (empty it if it had none)."""
    for cell, value in saved:
        if value is _EMPTY:
            try:
                del cell.cell_contents
            except ValueError:
                pass
        else:
            cell.cell_contents = value


_EMPTY = object()


def initialize_from_body(
    body_fn, loop_vars: tuple, consts: tuple, names: tuple, unset: list, numbers: list, location
) -> tuple[tuple, list[str]]:
    """Loop variables first bound inside the body (``unset``), given placeholders shaped
    like the values one traced (then discarded) run of the body gives them; Python numbers
    that start loop variables (``numbers``) become tensors of the dtype and shape the body
    gives them (``s = 0`` then ``s = s + x[i]`` with int32 ``x`` stays int32, as eager).
    Numbers are typed first, so the placeholders see the values the loop will carry. Entries
    the body adds to a dict loop variable (``d["k"] = v``) get placeholders too. Returns the
    loop variables and the entries added (``"d['k']"``, for the loop's ran-once check)."""
    from autostatic_runtime.static.builder import default_main_program
    from autostatic_runtime.static.control_flow import _placeholder_like

    program = default_main_program()
    parent = program.current_block()
    values = list(loop_vars)
    if numbers:
        out = _probe(program, body_fn, values, consts)
        if not isinstance(out, Exception):
            for i in numbers:
                values[i] = _number_like(parent, program, loop_vars[i], out[i])
    dicts = [i for i, v in enumerate(values) if type(v) is dict]
    if not unset and not dicts:
        return tuple(values), []
    out = _probe(program, body_fn, values, consts)
    if isinstance(out, Exception):
        if not unset:
            return tuple(values), []  # the loop's own trace reports it
        if isinstance(out, StaticBuildError) or (
            isinstance(out, AutostaticError) and "undefined" not in str(out).lower()
        ):
            raise out  # an error of the body itself (an op's, at its line), not of 'v'
        raise StaticBuildError(
            f"loop must iterate at least once to initialize '{names[unset[0]]}' (this "
            f"tensor-dependent loop uses it before it is set: {type(out).__name__}: {out}); "
            "set it before the loop",
            location,
        ) from None
    for i in unset:
        value = out[i]
        if value.__class__.__name__ in ("Undefined", "_Placeholder"):
            raise StaticBuildError(
                f"loop must iterate at least once to initialize '{names[i]}' (this "
                "tensor-dependent loop may leave it unset); set it before the loop",
                location,
            )
        values[i] = _placeholder(parent, program, value, _placeholder_like)
    added: list[str] = []
    for i in dicts:
        values[i] = _with_new_entries(values[i], out[i], names[i], added, parent, program)
    return tuple(values), added


def _with_new_entries(before: dict, after: Any, label: str, added: list, parent, program) -> dict:
    """``before`` and a placeholder for each entry ``after`` (the body's dict) adds to it."""
    if type(after) is not dict or after.keys() <= before.keys():
        return before
    from autostatic_runtime.static.control_flow import _placeholder_like

    grown = {}
    for k in after:  # the body's order, as eager's dict ends
        text = f"{label}[{k!r}]"
        if k in before:
            value = before[k]
            if type(value) is dict:
                value = _with_new_entries(value, after[k], text, added, parent, program)
            grown[k] = value
        else:
            grown[k] = _placeholder(parent, program, after[k], _placeholder_like)
            added.append(text)
    return grown


def _probe(program, body_fn, values: list, consts: tuple) -> Any:
    """The body's outputs from one traced run that is then discarded (or the exception it
    raised). While it runs, ``probing_loop_body()`` is true: a variable the body binds in
    only one branch of a tensor ``if`` (``if i > 1: prev = ...``) is typed from that branch,
    since in the loop it will hold the previous iteration's value on the other side."""
    from autostatic_runtime.static.tensor_array import MutationLog

    first = len(program.blocks)
    program._create_block()
    args = [copy_container(v) for v in values]
    _probing[0] += 1
    try:
        with MutationLog() as log:
            try:
                return tuple(body_fn(*args, *consts))
            finally:
                log.restore()
    except Exception as exc:  # noqa: BLE001 - the caller decides what it means
        return exc
    finally:
        _probing[0] -= 1
        program._rollback()
        del program.blocks[first:]


_probing = [0]


def probe_body(body_fn, values: tuple, consts: tuple) -> Any:
    """``_probe`` in the current program (see ``initialize_from_body``)."""
    from autostatic_runtime.static.builder import default_main_program

    return _probe(default_main_program(), body_fn, list(values), consts)


def probing_loop_body() -> bool:
    """Whether a loop body is being traced to type the variables it first binds."""
    return _probing[0] > 0


def _number_like(block, program, number: Any, like: Any) -> Any:
    """``number`` as a tensor of ``like``'s dtype and (fully known) shape, else as it is
    (also when ``like`` has a lower kind: a float that the body makes an int must be seen
    by the first iteration as the float, ``while_loop`` runs that iteration as a cond)."""
    from autostatic_runtime import dtypes
    from autostatic_runtime.creation import full
    from autostatic_runtime.static.control_flow import _to_var

    number_kind = 0 if type(number) is bool else 1 if type(number) is int else 2
    if (
        not isinstance(like, Variable)
        or -1 in tuple(like._shape)
        or dtypes.kind(like.dtype) < number_kind
    ):
        return _to_var(block, program, number)  # as the while op would carry it
    saved = program.current_block_idx
    program.current_block_idx = block.idx
    try:
        out = full(list(like._shape), number, dtype=like.dtype)
        out._weak = like._weak  # still a Python number after an iteration (``i += 1``)
        return out
    finally:
        program.current_block_idx = saved


def _placeholder(block, program, value: Any, like_fn) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_placeholder(block, program, v, like_fn) for v in value)
    if isinstance(value, dict):
        return {k: _placeholder(block, program, v, like_fn) for k, v in value.items()}
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return type(value)(0)
    if _record(value):  # an object of tensors first made in the loop: its fields' placeholders
        new = type(value).__new__(type(value))
        new.__dict__.update(
            (k, _placeholder(block, program, v, like_fn)) for k, v in vars(value).items()
        )
        return new
    return like_fn(block, program, value)
