"""``DataParallel``: a layer whose compiled training steps run on every device of the job.

    rt.distributed.init_parallel_env()
    model = rt.DataParallel(Net())
    opt = rt.optimizer.Adam(parameters=model.parameters())
    step = autostatic.to_static(train_step, backend="xla")
    loss = step(model, x, y, opt)         # x, y: this process's part of the batch

Eagerly, and in programs on the default executor, ``DataParallel(layer)`` is ``layer``.
While a step is traced for XLA, ``forward`` marks the program (``DataParallelTrace``); the
compiler side (``program_cache.trace``) then hands the traced step to ``finish_step``, which
gives it a block compiler that shards the one XLA computation over the devices
(``distributed.sharding``): each data input split along its batch dimension, parameters
and optimizer state replicated (or the optimizer state split: ``shard_optimizer_state``),
and XLA's partitioner inserting the gradients' all-reduce. Batch norm keeps per-device
statistics (``distributed.batch_norm``).

The program is the whole batch's: in a job of several processes, where each passes its own
part, it is traced for the whole batch (every split input's first dimension times the
number of processes), and its results (the loss) are the whole batch's, the same in every
process.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from autostatic_runtime.autograd import is_grad_enabled
from autostatic_runtime.distributed.batch_norm import grouped
from autostatic_runtime.distributed.env import get_world_size, is_initialized
from autostatic_runtime.errors import DistributedError, user_location
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.nn.layer.layers import Layer

__all__ = ["DataParallel", "device_count"]


def device_count() -> int:
    """The number of devices a data-parallel step splits its batch over (the whole job's).

    ``jax.devices()``: every process's devices together."""
    import jax

    return jax.device_count()


class DataParallel(Layer):
    """Paddle's ``paddle.DataParallel``: ``layers`` trained on every device of the job.

    Args:
        layers: the model.
        strategy, comm_buffer_size, last_comm_buffer_size, find_unused_parameters: Paddle's
            tuning knobs for its own all-reduce; accepted and unused (XLA schedules the
            gradients' all-reduce itself).
        group: must be None: the batch is split over every device of the job.
        shard_optimizer_state: split the optimizer state (moments) along its first dimension
            over the devices instead of keeping a copy on each (ZeRO stage 1), where that
            dimension divides by the device count; the parameters stay replicated.
    """

    def __init__(
        self,
        layers: Layer,
        strategy: Any = None,
        comm_buffer_size: int = 25,
        last_comm_buffer_size: int = 1,
        find_unused_parameters: bool = False,
        group: Any = None,
        *,
        shard_optimizer_state: bool = False,
    ):
        super().__init__()
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel wraps a Layer, not a {type(layers).__name__}")
        if group is not None:
            raise DistributedError(
                "DataParallel(group=...) is not supported: the batch is split over every "
                "device of the job; leave group=None"
            )
        self._layers = layers
        self.shard_optimizer_state = bool(shard_optimizer_state)
        if get_world_size() > 1:
            if not is_initialized():
                raise DistributedError(
                    f"DataParallel in a job of {get_world_size()} processes: call "
                    "rt.distributed.init_parallel_env() first (before any JAX computation)",
                    user_location(),
                )
            _sync_from_rank_zero(layers)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not in_dynamic_mode():
            return _traced_forward(self, inputs, kwargs)
        if self.training and is_grad_enabled() and get_world_size() > 1:
            raise DistributedError(
                f"DataParallel: in a job of {get_world_size()} processes a model trains only "
                "inside a whole training step compiled with "
                "autostatic.to_static(train_step, backend='xla'), where XLA averages the "
                "gradients over the processes; eagerly each process would train its own "
                "copy. Compile the step, or evaluate under rt.no_grad() / model.eval()",
                user_location(),
            )
        return self._layers(*inputs, **kwargs)

    def state_dict(self, *args: Any, **kwargs: Any):
        """The wrapped layer's ``state_dict`` (keys without a ``_layers.`` prefix, as Paddle)."""
        return self._layers.state_dict(*args, **kwargs)

    def set_state_dict(self, *args: Any, **kwargs: Any):
        """The wrapped layer's ``set_state_dict``."""
        return self._layers.set_state_dict(*args, **kwargs)

    set_dict = load_dict = set_state_dict

    def scale_loss(self, loss: Any) -> Any:
        """Paddle 1.x's loss scaling before an all-reduce of summed gradients: ``loss`` as
        it is (a compiled step's loss and gradients are the whole batch's already)."""
        return loss

    def apply_collective_grads(self) -> None:
        """Paddle 1.x's explicit gradient all-reduce: nothing to do (XLA all-reduces the
        gradients inside the compiled step)."""

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Paddle's gradient accumulation without synchronisation: nothing to do here (a
        compiled step's gradients are the whole batch's; accumulate them in the step)."""
        yield


@dataclasses.dataclass
class DataParallelTrace:
    """What ``DataParallel.forward`` recorded in a traced program: the layer, the batch size
    of its first input (-1 when unknown) and the device count it was traced for (1 when
    the program is not compiled by XLA)."""

    layer: DataParallel
    batch: int
    devices: int


def _traced_forward(dp: DataParallel, inputs: tuple, kwargs: dict) -> Any:
    """``forward`` while a program is traced: the wrapped layer's (converted, so that its
    tensor-dependent ``if``/``while`` become ops), with the program marked and, for XLA
    over several devices, batch norm's statistics per device."""
    from autostatic_runtime.convert_ops import convert_call
    from autostatic_runtime.static.builder import default_main_program

    layer = convert_call(dp._layers)
    program = default_main_program()
    state = program.__dict__
    on_xla = getattr(state.get("block_compiler"), "name", None) == "xla"
    devices = device_count() if on_xla else 1
    batch = _batch_of(inputs)
    if "data_parallel" not in state:
        state["data_parallel"] = DataParallelTrace(dp, batch, devices)
    if devices == 1:
        return layer(*inputs, **kwargs)
    if get_world_size() > 1 and not state.get("global_batch"):
        # each process's own part: the program is traced again for the whole batch
        # (``finish_step``); only the division is checked here
        import jax

        _check_divides(batch, jax.local_device_count(), "this process's ")
        return layer(*inputs, **kwargs)
    _check_divides(batch, devices, "")
    with grouped(devices):
        return layer(*inputs, **kwargs)


def _batch_of(inputs: tuple) -> int:
    """The first dimension of the first tensor input (-1 when unknown, 0 when none)."""
    from autostatic_runtime.tensor import Tensor

    for x in inputs:
        shape = getattr(x, "shape", None)
        if isinstance(x, Tensor) or (shape is not None and hasattr(x, "block")):
            return int(shape[0]) if len(shape) else 0
    return 0


def _check_divides(batch: int, devices: int, whose: str) -> None:
    if batch > 0 and batch % devices:
        raise DistributedError(
            f"DataParallel: the batch has {batch} samples, which does not divide by "
            f"{whose}{devices} devices (each device takes an equal part); give a batch of a "
            f"multiple of {devices}, e.g. drop the last incomplete batch (drop_last=True)",
            user_location(),
        )


def finish_step(program: Any, retrace: Callable) -> Any:
    """A traced program in which ``DataParallel.forward`` ran (``program_cache.trace``):
    a whole training step for XLA on several devices gets a block compiler that shards it
    (traced again first, for the whole batch, in a job of several processes:
    ``retrace(batch, factor)`` traces with every input of ``batch`` rows made
    ``factor`` times longer); anything else runs as it is, except what a job of several
    processes cannot train: a training program that is not a compiled whole step."""
    from autostatic_runtime.distributed.sharding import ShardedXlaCompiler, StepPlan

    mark: DataParallelTrace = program.main_program.data_parallel
    processes = get_world_size()
    if processes > 1 and mark.layer.training and (mark.devices == 1 or not program.is_step):
        what = "a whole training step" if program.is_step else "a training forward"
        raise DistributedError(
            f"DataParallel in a job of {processes} processes: {what} traced for "
            f"{'the default executor' if mark.devices == 1 else 'XLA without its backward'}: "
            "only a whole step (forward, loss.backward(), opt.step()) compiled with "
            "to_static(train_step, backend='xla') averages the gradients over the processes",
            user_location(),
        )
    if mark.devices == 1 or not program.is_step:
        return program
    if processes > 1 and not program.main_program.__dict__.get("global_batch"):
        program = retrace(mark.batch, processes)
        mark = program.main_program.data_parallel
    plan = StepPlan(
        split=_split_inputs(program, mark.batch),
        zero=_zero_state(program, mark) if mark.layer.shard_optimizer_state else set(),
    )
    return dataclasses.replace(program, compiler=ShardedXlaCompiler(plan))


def _split_inputs(program: Any, batch: int) -> set:
    """The data inputs split along their first dimension: those with the batch's rows."""
    return {v.name for v in program.inputs if v.ndim and v.shape[0] == batch}


def _zero_state(program: Any, mark: DataParallelTrace) -> set:
    """The optimizer state split over the devices (ZeRO-1): every accumulator of the step's
    optimizers whose first dimension divides by the device count."""
    from autostatic_runtime.static.builder import captured_values

    held = set()
    for kind, opt, _ in program.guards:
        if kind == "optimizer":
            held |= {id(t) for per in opt._accumulators.values() for t in per.values()}
    return {
        name
        for name, t in captured_values(program.main_program).items()
        if id(t) in held and t.ndim and t.shape[0] % mark.devices == 0
    }


def _sync_from_rank_zero(layer: Layer) -> None:
    """Give every process rank 0's parameters and buffers (as Paddle's DataParallel does when
    it is built), through JAX's broadcast."""
    from jax.experimental import multihost_utils

    from autostatic_runtime.backends.jax_backend import x64

    tensors = layer.parameters() + layer.buffers()
    if not tensors:
        return
    with x64():
        values = multihost_utils.broadcast_one_to_all([np.asarray(t.numpy()) for t in tensors])
    for t, value in zip(tensors, values):
        t.set_value(np.asarray(value))
