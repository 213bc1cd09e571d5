"""Eager execution of ops: run the kernel now, wrap the result, record the tape.

This is the hot path of eager mode (every ``x + y`` comes through ``eager_apply``), so it
avoids work on success: shapes are checked by the kernel itself, and only when a kernel
fails do we run the op's inference to explain why, at the user's line.
"""

from __future__ import annotations

from autostatic_runtime import autograd
from autostatic_runtime.backends import _by_array_type, backend_of, current_backend
from autostatic_runtime.errors import DeviceError, OpError, op_error_class, user_location
from autostatic_runtime.ops import registry
from autostatic_runtime.tensor import CONST, Tensor

_all_recording = autograd._all_recording
_local = autograd._local
_Node = autograd.Node
_rebuild = Tensor._rebuild
_new_tensor = object.__new__


def eager_apply(op, inputs, attrs):
    """Run ``op`` on ``inputs`` (Tensors, Python scalars, None) with keyword ``attrs``."""
    arrays = []
    requires = False
    first = None
    mixed = False
    for t in inputs:
        if isinstance(t, Tensor):
            a = t._data
            arrays.append(a)
            if first is None:
                first = a
                kind = type(a)
            elif type(a) is not kind:
                mixed = True
            if not t.stop_gradient:
                requires = True
        else:
            arrays.append(t)
    if first is None:
        backend = current_backend()
    else:
        backend = _by_array_type.get(kind) or backend_of(first)
        if mixed:
            backend = _one_device(op, inputs, arrays, backend)
    try:
        out = op.kernel(backend.xp, *arrays, **attrs)
    except Exception as exc:
        raise _explain(op, inputs, attrs, exc) from exc

    record = requires and (_all_recording[0] or _local.recording) and op.grad is not None
    if not op.multi_output:
        if type(out) not in backend.array_types:
            out = backend.ns.asarray(out)  # NumPy reductions return scalars, not 0-d arrays
        t = _new_tensor(Tensor)
        t._data = out
        t._index = 0
        if not record:
            t._node = None
            t.stop_gradient = True
            return t
        t._node = _Node(op, attrs, arrays, tuple([_edge(t) for t in inputs]), (out,))
        t.stop_gradient = False
        return t
    types = backend.array_types
    outs = tuple([o if type(o) in types else backend.ns.asarray(o) for o in out])
    if not record:
        return tuple([_rebuild(o, None, 0) for o in outs])
    node = _Node(op, attrs, arrays, tuple([_edge(t) for t in inputs]), outs)
    nondiff = op.nondiff_outputs
    return tuple([_rebuild(o, None if i in nondiff else node, i) for i, o in enumerate(outs)])


def _edge(t):
    if not isinstance(t, Tensor):
        return CONST
    if t.stop_gradient:
        return None
    node = t._node
    return t if node is None else (node, t._index)


def _one_device(op, inputs, arrays: list, backend):
    """The backend to run ``op`` on when its inputs' arrays are of several types: the first
    input's, when every input belongs to it; else the one backend besides those whose arrays
    a compiled training step leaves in the parameters (``Backend.host_view``: JAX's), with
    those arrays in ``arrays`` as NumPy host views (a copy from an accelerator; moved on to
    that backend unless it is NumPy); else a ``DeviceError``."""
    owners = [backend_of(a) if isinstance(t, Tensor) else None for t, a in zip(inputs, arrays)]
    kinds = {id(b): b for b in owners if b is not None}
    if len(kinds) == 1:
        return backend
    views = {i: b.host_view(a) for i, (a, b) in enumerate(zip(arrays, owners)) if b is not None}
    targets = {id(owners[i]): owners[i] for i, v in views.items() if v is None}
    if len(targets) == 1:
        (target,) = targets.values()
        for i, view in views.items():
            if view is not None:
                arrays[i] = view if target.name == "numpy" else target.from_numpy(view)
        return target
    places = ", ".join(str(t.place) for t in inputs if isinstance(t, Tensor))
    raise DeviceError(
        op.name,
        f"inputs live on different devices ({places}); move them "
        "to one device first, e.g. rt.to_tensor(t, place='cpu')",
        user_location(),
    )


def _explain(op, inputs, attrs, exc: Exception) -> Exception:
    """Turn a kernel failure into an OpError at the user's line, with shapes and dtypes."""
    if isinstance(exc, OpError):
        return exc
    loc = user_location()
    try:
        op.infer(*inputs, **attrs)
    except OpError as diagnosed:
        return type(diagnosed)(op.name, diagnosed.detail, diagnosed.location or loc)
    except Exception:
        pass
    described = ", ".join(
        f"{list(t.shape)}:{t.dtype}" if isinstance(t, Tensor) else repr(t) for t in inputs
    )
    shown = {k: v for k, v in attrs.items()}
    message = f"failed on inputs ({described})" + (f" with {shown}" if shown else "")
    message += f": {type(exc).__name__}: {exc}"
    return op_error_class(type(exc))(op.name, message, loc)


registry._dispatch[0] = eager_apply
