"""Reverse-mode autodiff over the eager tape.

Each op applied to a tensor that needs a gradient records a ``Node``: the op, its attrs, the
input *arrays* (snapshots, so later in-place updates of a Tensor object cannot corrupt
gradients) and, per input, an edge: the leaf Tensor to accumulate into, or the
``(node, output_index)`` that produced it. Nodes are numbered in creation order, so walking
them from newest to oldest is a topological order.

Gradient rules are the ops' ``grad`` functions, written in ops: the engine calls them on
Tensors (recording a new graph when ``create_graph=True``), and the static backward calls the
same functions on Variables.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from typing import Any

from autostatic_runtime import mode as _mode
from autostatic_runtime.errors import AutostaticError
from autostatic_runtime.ops.registry import autocast_suspended
from autostatic_runtime.tensor import CONST, STATIC_HOOKS, Tensor, is_zeros_grad

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "grad", "backward"]

_counter = itertools.count()


class _ThreadState(threading.local):
    """Gradient mode belongs to a thread (as in PyTorch): ``no_grad`` in one thread, e.g. a
    layer's parameter initializers, never stops another thread's training step recording."""

    recording = True  # class defaults: a new thread records
    needs: tuple | None = None  # which inputs of the op being differentiated need a gradient


_local = _ThreadState()
_lock = threading.Lock()
_off = [0]  # threads whose recording is off
# The hot path's test: True while no thread has recording off (a plain list read); only
# when it is False does ``is_grad_enabled()`` read the thread-local flag.
_all_recording = [True]


def _set_recording(flag: bool) -> bool:
    """Turn the calling thread's recording on or off; returns what it was."""
    prev = _local.recording
    if flag != prev:
        with _lock:
            _local.recording = flag
            _off[0] += -1 if flag else 1
            _all_recording[0] = _off[0] == 0
    return prev


def needs_grad(i: int) -> bool:
    """Inside a ``grad`` rule: does input ``i`` need its gradient? (Skip costly unused ones.)"""
    n = _local.needs
    return n is None or (i < len(n) and n[i])


@contextmanager
def computing_grads_for(needs: tuple):
    """Set what ``needs_grad`` answers while one grad rule runs."""
    saved = _local.needs
    _local.needs = needs
    try:
        yield
    finally:
        _local.needs = saved


class Node:
    """One recorded op application."""

    __slots__ = ("op", "attrs", "in_data", "in_edges", "out_data", "seq", "hooks", "__weakref__")

    def __init__(self, op, attrs, in_data, in_edges, out_data):
        self.op = op
        self.attrs = attrs
        self.in_data = in_data
        self.in_edges = in_edges
        self.out_data = out_data
        self.seq = next(_counter)
        self.hooks = None

    def __repr__(self) -> str:
        return f"<Node {self.op.name} #{self.seq}>"


def is_grad_enabled() -> bool:
    """True when the calling thread's ops record gradients (outside ``no_grad``)."""
    return _all_recording[0] or _local.recording


def _building() -> bool:
    """True when the calling thread builds a static program. Its ops append Operators and
    record nothing on the tape, so gradient-mode switches there (``no_grad`` in a layer's
    forward, e.g. batch norm's running statistics) are skipped: they would change what the
    thread records after the trace, and a program has no tape to switch."""
    return _mode._static[0] and _mode._local.static


class set_grad_enabled:
    """Context manager (and plain call) that turns gradient recording on or off."""

    def __init__(self, mode: bool):
        self.changed = not _building()
        if self.changed:
            self.prev = _set_recording(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.changed:
            _set_recording(self.prev)


class no_grad:
    """``with rt.no_grad():`` or ``@rt.no_grad()``: run without recording gradients."""

    def __enter__(self):
        self.changed = not _building()
        if self.changed:
            self.prev = _set_recording(False)
        return self

    def __exit__(self, *exc):
        if self.changed:
            _set_recording(self.prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper


@contextmanager
def enable_grad():
    """Record gradients inside the block, even within ``no_grad``."""
    if _building():  # see _building
        yield
        return
    prev = _set_recording(True)
    try:
        yield
    finally:
        _set_recording(prev)


# ---- the engine ---------------------------------------------------------------------------


def _collect(roots: Iterable[Node]) -> list[Node]:
    seen: set[int] = set()
    stack = [n for n in roots if n is not None]
    nodes = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        for edge in node.in_edges:
            if type(edge) is tuple:
                stack.append(edge[0])
    nodes.sort(key=lambda n: n.seq, reverse=True)
    return nodes


def _accumulate(store: dict, key: Any, value: Any) -> None:
    prev = store.get(key)
    store[key] = value if prev is None else prev + value


def _run(roots: Sequence[tuple[Any, Any]], create_graph: bool, stop_at: set | None = None):
    """``_propagate`` without automatic casts: a backward runs in the dtypes of its forward
    (``rt.amp.auto_cast`` around ``loss.backward()`` changes nothing)."""
    with autocast_suspended():
        return _propagate(roots, create_graph, stop_at)


def _propagate(roots: Sequence[tuple[Any, Any]], create_graph: bool, stop_at: set | None = None):
    """Propagate gradients from ``roots`` [(tensor, grad)]; return (node_grads, leaf_grads).

    node_grads[(id(node), i)] holds the gradient reaching output i of node (kept for the
    entries in ``stop_at`` only); leaf_grads[id(leaf)] = (leaf, grad).
    """
    pending: dict[int, list] = {}
    leaves: dict[int, list] = {}
    captured: dict[tuple, Any] = {}
    for t, g in roots:
        if t._node is not None:
            slot = pending.setdefault(id(t._node), [None] * len(t._node.out_data))
            slot[t._index] = g if slot[t._index] is None else slot[t._index] + g
        elif not t.stop_gradient:
            entry = leaves.setdefault(id(t), [t, None])
            entry[1] = g if entry[1] is None else entry[1] + g
    prev = _set_recording(create_graph)
    try:
        for node in _collect(t._node for t, _ in roots):
            grads_out = pending.pop(id(node), None)
            if grads_out is None:
                continue
            if stop_at:
                for i, g in enumerate(grads_out):
                    if (id(node), i) in stop_at and g is not None:
                        captured[(id(node), i)] = g
            if node.hooks:
                grads_out = [_apply_hooks(node.hooks.get(i), g) for i, g in enumerate(grads_out)]
            nondiff = node.op.nondiff_outputs
            outs = tuple(
                Tensor._rebuild(d, node if create_graph and i not in nondiff else None, i)
                for i, d in enumerate(node.out_data)
            )
            ins = tuple(
                _rebuild_input(d, e, create_graph) for d, e in zip(node.in_data, node.in_edges)
            )
            if node.op.multi_output:
                if all(g is None for g in grads_out):
                    continue
                g_arg, out_arg = _fill_missing(grads_out, outs, node.op.nondiff_outputs), outs
            else:
                g_arg, out_arg = grads_out[0], outs[0]
                if g_arg is None:
                    continue
            _local.needs = tuple([e is not None and e is not CONST for e in node.in_edges])
            try:
                in_grads = node.op.grad(g_arg, out_arg, *ins, **node.attrs)
            finally:
                _local.needs = None
            if not isinstance(in_grads, (tuple, list)):
                in_grads = (in_grads,)
            for edge, ig in zip(node.in_edges, in_grads):
                if ig is None or edge is None or edge is CONST:
                    continue
                if type(edge) is tuple:
                    src, i = edge
                    slot = pending.setdefault(id(src), [None] * len(src.out_data))
                    slot[i] = ig if slot[i] is None else slot[i] + ig
                else:
                    entry = leaves.setdefault(id(edge), [edge, None])
                    entry[1] = ig if entry[1] is None else entry[1] + ig
    finally:
        _set_recording(prev)
    return captured, leaves


def _fill_missing(grads, outs, nondiff):
    """Zeros for differentiable outputs that received no gradient, so grad rules see tensors."""
    from autostatic_runtime import creation

    return tuple(
        creation.zeros_like(o) if g is None and i not in nondiff else g
        for i, (g, o) in enumerate(zip(grads, outs))
    )


def _apply_hooks(hooks, g):
    if not hooks or g is None:
        return g
    for hook in hooks:
        r = hook(g)
        if r is not None:
            g = r
    return g


def _rebuild_input(data, edge, create_graph):
    if edge is CONST:
        return data  # a Python scalar or None passed to the op
    if create_graph and edge is not None:
        if type(edge) is tuple:
            return Tensor._rebuild(data, edge[0], edge[1])
        return edge
    return Tensor._rebuild(data, None, 0)


def _seed_grad(t, g):
    from autostatic_runtime import creation

    if g is None:  # ones, straight from the backend (no op dispatch)
        from autostatic_runtime.backends import backend_of

        data = t._data
        return Tensor._rebuild(backend_of(data).ns.ones(data.shape, dtype=data.dtype), None, 0)
    return creation.to_tensor(g, dtype=t.dtype) if not hasattr(g, "_data") else g


def backward(tensors, grad_tensors=None, retain_graph: bool = False) -> None:
    """Accumulate d(tensors)/d(leaf) into every reachable leaf's ``.grad``."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
        grad_tensors = [grad_tensors]
    grad_tensors = list(grad_tensors or [None] * len(tensors))
    roots = []
    for t, g in zip(tensors, grad_tensors):
        if t.stop_gradient:
            raise AutostaticError(
                "backward() on a tensor with stop_gradient=True: nothing it depends on needs a "
                "gradient; set stop_gradient=False on the inputs (parameters have it already)"
            )
        roots.append((t, _seed_grad(t, g)))
    _, leaves = _run(roots, create_graph=False)
    for leaf, g in leaves.values():
        if g is None:
            continue
        if leaf._hooks:
            g = _apply_hooks(leaf._hooks, _owned(g))
        old = leaf.grad
        if old is None or (is_zeros_grad(old) and _same_array_kind(old, g)):
            leaf.grad = _owned(g.detach())  # (zeros + g is g: no pass over the zeros)
        else:
            leaf.grad = _accumulate(old, g)


def _same_array_kind(a: Tensor, b: Tensor) -> bool:
    """Whether ``b`` can stand for ``a + b`` when ``a`` is zeros: the same array type, dtype
    and shape (adding zeros would not promote or broadcast)."""
    x, y = a._data, b._data
    return type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape


def _owned(g: Tensor) -> Tensor:
    """``g``, or a copy of it when its array is read-only (a zero-copy view of a compiled
    function's result, a broadcast view): a gradient handed to the user is theirs to change."""
    flags = getattr(g._data, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):
        return Tensor._rebuild(g._data.copy(), None, 0)
    return g


def _accumulate(old: Tensor, g: Tensor) -> Tensor:
    """``old + g`` as a new detached tensor; arrays of one type, dtype and shape (not 0-d:
    NumPy gives a scalar for those) are added directly (what the ``add`` op's kernel does,
    without its dispatch)."""
    a, b = old._data, g._data
    if type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape != ():
        return Tensor._rebuild(a + b, None, 0)
    return (old + g).detach()


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool = False,
    no_grad_vars=None,
):
    """Gradients of ``outputs`` w.r.t. ``inputs``, as a list (Paddle's ``paddle.grad``).

    ``.grad`` attributes are left untouched. With ``create_graph=True`` the result is itself
    differentiable (higher-order gradients). An input the outputs do not depend on is an error
    unless ``allow_unused=True``, which gives ``None`` for it.
    """
    first = outputs if not isinstance(outputs, (list, tuple)) else outputs[0]
    if not isinstance(first, Tensor):  # static Variables: append gradient ops instead
        return STATIC_HOOKS["gradients"](outputs, inputs, grad_outputs)
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] + [None] * (len(outputs) - 1)
    roots = [(o, _seed_grad(o, g)) for o, g in zip(outputs, grad_outputs) if not o.stop_gradient]
    stop_at = {(id(t._node), t._index) for t in inputs if t._node is not None}
    captured, leaves = _run(roots, create_graph=create_graph, stop_at=stop_at)
    result = []
    for t in inputs:
        if t._node is not None:
            g = captured.get((id(t._node), t._index))
        else:
            g = leaves.get(id(t), (None, None))[1]
        if g is None and not allow_unused:
            raise AutostaticError(
                "grad: one of the inputs is not used to compute the outputs; pass "
                "allow_unused=True to get None for it"
            )
        if g is not None and not create_graph:
            g = _owned(g.detach())
        result.append(g)
    return result
