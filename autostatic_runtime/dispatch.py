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
    """The backend to run ``op`` on when its inputs' arrays are of several types: NumPy, with
    host views of arrays whose memory is the host's (``Backend.host_view``: JAX arrays on
    the CPU, which a compiled training step leaves in the parameters) put in ``arrays``;
    else the first input's, when every input belongs to it; else a ``DeviceError``."""
    owners = [backend_of(a) if isinstance(t, Tensor) else None for t, a in zip(inputs, arrays)]
    kinds = {id(b): b for b in owners if b is not None}
    if len(kinds) == 1:
        return backend
    numpy = next((b for b in kinds.values() if b.name == "numpy"), None)
    if numpy is not None:
        views = [
            a if b is None or b is numpy else b.host_view(a) for a, b in zip(arrays, owners)
        ]
        if all(v is not None or b is None for v, b in zip(views, owners)):
            arrays[:] = views
            return numpy
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
