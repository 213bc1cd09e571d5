"""A data-parallel training step as one XLA computation sharded over every device of the job.

The step's program is the whole batch's (``DataParallel``); this compiler runs it through
``jax.jit`` like ``XlaCompiler`` does (state mode, donation, the state call), with its
arguments and results placed on a one-axis device mesh (``jax.sharding``) over
``jax.devices()`` — every device of every process of the job:

- each data input that holds the batch is split along its first dimension (``P("dp")``): in
  a job of several processes each process passes its own part
  (``jax.make_array_from_process_local_data``), so the batch is all the processes' parts
  in rank order;
- parameters, buffers, the learning rate, the random key and the results (the loss) are
  replicated (``P()``); the optimizer state too, or split along its first dimension with
  ``DataParallel(..., shard_optimizer_state=True)`` (ZeRO stage 1);
- the written state leaves the computation with the sharding it came in with
  (``with_sharding_constraint``), so the next step takes it as it is, donated.

(``group_sharded_parallel`` and ``save_group_sharded_model`` are importable from here too,
as from Paddle's ``paddle.distributed.sharding``.)

XLA's SPMD partitioner does the rest: each device computes its part of the batch, and the
gradients of the replicated parameters (a sum over the batch) become all-reduces; nothing
here communicates. A batch whose rows do not divide by the devices is a ``DistributedError``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from autostatic_runtime.distributed.group_sharded import (  # noqa: F401 (Paddle's path)
    group_sharded_parallel,
    save_group_sharded_model,
)
from autostatic_runtime.errors import DistributedError, user_location
from autostatic_runtime.static.xla.compiler import XlaCompiler, XlaFunction

__all__ = ["StepPlan", "ShardedXlaCompiler", "ShardedXlaFunction"]

AXIS = "dp"


class StepPlan:
    """Where a data-parallel step's values live: the mesh over the job's devices, the data
    inputs split along the batch (``split``, by name) and the persistables split along
    their first dimension (``zero``: the optimizer state, with ZeRO-1)."""

    def __init__(self, split: set, zero: set):
        import jax
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        devices = jax.devices()
        self.devices = len(devices)
        self.local_devices = jax.local_device_count()
        self.processes = jax.process_count()
        self.mesh = Mesh(np.array(devices), (AXIS,))
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self.rows = NamedSharding(self.mesh, PartitionSpec(AXIS))
        self.split = frozenset(split)
        self.zero = frozenset(zero)

    def persistable(self, name: str) -> Any:
        return self.rows if name in self.zero else self.replicated

    def describe(self) -> str:
        where = f"{self.devices} devices" + (
            f" of {self.processes} processes" if self.processes > 1 else ""
        )
        zero = f", {len(self.zero)} optimizer state tensors split (ZeRO-1)" if self.zero else ""
        return f"data-parallel over {where}{zero}"


class ShardedXlaCompiler(XlaCompiler):
    """``XlaCompiler`` for a data-parallel step: functions sharded as ``plan`` says."""

    fuse_training = False

    def __init__(self, plan: StepPlan):
        super().__init__()
        self.plan = plan

    def compile(self, block, params, results, backend):
        return ShardedXlaFunction(block, list(params), list(results), backend, self)


class ShardedXlaFunction(XlaFunction):
    """An ``XlaFunction`` whose jitted callables take and give values placed on the mesh
    (``_Placed``); everything else — the call plan, state mode, donation, the generated
    state call — is ``XlaFunction``'s. A random key is each process's own, and the
    computation draws from rank 0's (so every device of the job draws the same numbers)."""

    def __init__(self, block, params, results, host, compiler: ShardedXlaCompiler):
        self.plan = compiler.plan
        self._placements: dict = {}  # argument count -> where each argument goes
        super().__init__(block, params, results, host, compiler)
        self._keep = False  # the placement below moves every value to the devices

    def _jit(self) -> None:
        import jax

        super()._jit()
        plan = self.plan
        outs = [plan.replicated] * len(self.results) + [plan.persistable(n) for n in self.writes]
        self._traced_fn = functools.partial(
            _constrained, self._traced_fn, outs, plan.replicated, self._random
        )
        self._jitted = _Placed(jax.jit(self._traced_fn), self)

    def _donor(self):
        return _Placed(super()._donor(), self)

    def _call(self, scope: dict, args: tuple):
        self.check_batch(args)  # before the generic call, which falls back on any failure
        return super()._call(scope, args)

    def _fall_back(self, exc) -> None:
        if self.plan.processes > 1:
            op = exc.op
            raise DistributedError(
                "DataParallel in a job of several processes needs the whole step compiled by "
                f"XLA, which cannot take it: {exc.reason}"
                + (f" (op {op.type!r})" if op is not None else ""),
                op.location if op is not None else None,
            ) from exc
        super()._fall_back(exc)

    def placements(self, count: int) -> list:
        """Where each argument of a call with ``count`` arguments goes: (sharding, kind),
        kind ``STATE`` (a persistable), ``FEED`` (the same in every process: the learning
        rate), ``PART`` (this process's part of the batch) or ``KEY`` (the random key)."""
        found = self._placements.get(count)
        if found is None:
            plan = self.plan
            found = [(plan.persistable(n), STATE) for n in self.reads]
            found += [(plan.rows, PART) if n in plan.split else (plan.replicated, FEED)
                      for n in self.params]  # fmt: skip
            if count > len(found):
                found.insert(0, (plan.rows, KEY))
            found = self._placements[count] = found
        return found

    def check_batch(self, args: tuple) -> None:
        """A ``DistributedError`` for a split input whose rows do not divide by this
        process's devices."""
        local = self.plan.local_devices
        for name, value in zip(self.params, args):
            if name in self.plan.split:
                rows = np.shape(value)[0] if np.ndim(value) else 0
                if rows % local:
                    raise DistributedError(
                        f"DataParallel: the input {name!r} has a batch of {rows} samples, "
                        f"which does not divide by the {local} devices of this process "
                        "(each device takes an equal part); give a batch of a multiple of "
                        f"{local}, e.g. drop the last incomplete batch (drop_last=True)",
                        user_location(),
                    )


STATE, FEED, PART, KEY = "state", "feed", "part", "key"


class _Placed:
    """A jitted function called with its arguments placed on the mesh (host arrays copied
    there; device arrays of the right sharding passed as they are), and its ``trace``."""

    def __init__(self, jitted: Any, fn: ShardedXlaFunction):
        self.jitted, self.fn = jitted, fn
        self._last: dict = {}  # argument index -> (host value, its placed copy): feeds

    def __call__(self, *args: Any) -> Any:
        import jax

        kinds = self.fn.placements(len(args))
        placed = [self._place(i, a, k) for i, (a, k) in enumerate(zip(args, kinds))]
        processes = self.fn.plan.processes
        if processes == 1:
            return self.jitted(*placed)
        try:  # waited for here (the caller reads the loss next): a lost rank fails here
            return jax.block_until_ready(self.jitted(*placed))
        except (jax.errors.JaxRuntimeError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            if not first.startswith(_RUNTIME_STATUS):  # not the runtime's: the user's error
                raise
            raise DistributedError(
                f"a data-parallel step of a job of {processes} processes failed, most likely "
                f"because another rank stopped (see its log): {first}",
                user_location(),
            ) from None

    def trace(self, *args: Any) -> Any:
        import jax

        plan = self.fn.plan
        abstract = []
        for a, (sharding, kind) in zip(args, self.fn.placements(len(args))):
            shape = tuple(np.shape(a))
            if kind is PART and shape:
                shape = (shape[0] * plan.processes, *shape[1:])
            elif kind is KEY:
                shape = (plan.devices, *shape)
            dtype = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
            abstract.append(jax.ShapeDtypeStruct(shape, dtype, sharding=sharding))
        return self.jitted.trace(*abstract)

    def _place(self, i: int, value: Any, where: tuple) -> Any:
        import jax

        sharding, kind = where
        if kind is KEY:  # one row per local device: each process's key (rank 0's is used)
            rows = np.broadcast_to(value, (self.fn.plan.local_devices, *np.shape(value)))
            return jax.make_array_from_process_local_data(sharding, np.ascontiguousarray(rows))
        if isinstance(value, jax.Array):
            if value.sharding == sharding:
                return value
            if not (value.is_fully_addressable and self.fn.plan.processes > 1):
                return jax.device_put(value, sharding)
        if kind is PART:
            return jax.make_array_from_process_local_data(sharding, self._host(value))
        if kind is STATE:  # donated: never kept
            return _replicate(self._host(value), sharding)
        last = self._last.get(i)  # a feed (the learning rate): the same while it is unchanged
        if last is not None and last[0] is value:
            return last[1]
        placed = _replicate(self._host(value), sharding)
        self._last[i] = (value, placed)
        return placed

    def _host(self, value: Any) -> np.ndarray:
        if isinstance(value, np.ndarray):
            return value
        return np.asarray(self.fn.host.to_numpy(value) if not _is_jax(value) else value)


# how XLA's runtime errors begin (a collective that lost a peer: "UNKNOWN: Gloo all-reduce
# failed: ... Connection closed by peer")
_RUNTIME_STATUS = ("UNKNOWN:", "UNAVAILABLE:", "INTERNAL:", "ABORTED:", "DEADLINE_EXCEEDED:",
                   "FAILED_PRECONDITION:", "CANCELLED:")  # fmt: skip


def _replicate(host: np.ndarray, sharding: Any) -> Any:
    """A host value the same in every process, as a global array of ``sharding``."""
    import jax

    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _is_jax(value: Any) -> bool:
    return type(value).__module__.startswith(("jax", "jaxlib"))


def _constrained(traced: Any, shardings: list, replicated: Any, random: bool, *args: Any):
    """``traced(*args)`` with each result constrained to its sharding (the results, then the
    written persistables; anything after them — loop counts, stop flags — replicated). With
    ``random``, the first argument holds a key per device: the computation uses the first
    (rank 0's), so the processes' host generators need not agree."""
    import jax

    if random:
        args = (args[0][0], *args[1:])
    outs = traced(*args)
    placed = []
    for i, out in enumerate(outs):
        if isinstance(out, (jax.Array, jax.core.Tracer)):
            out = jax.lax.with_sharding_constraint(
                out, shardings[i] if i < len(shardings) else replicated
            )
        placed.append(out)
    return tuple(placed)
