"""``rt.distributed.spawn(train, nprocs=2)``: a job of several processes started from
Python (Paddle's ``paddle.distributed.spawn``), the other way than ``autostatic launch``:

    def train(epochs):
        rt.distributed.init_parallel_env()
        model = rt.DataParallel(Net())
        ...

    if __name__ == "__main__":
        rt.distributed.spawn(train, args=(3,), nprocs=2)

Each rank is a fresh interpreter (``multiprocessing``'s "spawn" start, so ``train`` must be
importable: a module-level function, the script guarded by ``if __name__ == "__main__"``),
with the job in its environment as the launcher puts it. When a rank fails, the others are
stopped and ``spawn`` raises ``DistributedError`` with that rank's traceback; the job never
hangs on a dead rank.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

from autostatic_runtime.distributed.env import free_port, job_environment
from autostatic_runtime.errors import DistributedError

__all__ = ["spawn", "SpawnContext"]

GRACE = 5.0  # seconds the other ranks get to stop after one failed, before they are killed


def _rank_main(func: Callable, args: tuple, env: dict, errors: Any) -> None:
    """A rank's process: the job in the environment, then ``func(*args)``; an exception is
    sent to the parent as text and ends the process with status 1."""
    os.environ.update(env)
    try:
        func(*args)
    except BaseException:  # noqa: BLE001 - every failure goes to the parent, then exit 1
        errors.put((int(env["RANK"]), traceback.format_exc()))
        sys.stderr.flush()
        os._exit(1)


class SpawnContext:
    """The processes of a spawned job (``paddle.distributed.spawn``'s return value)."""

    def __init__(self, processes: list, errors: Any):
        self.processes = processes
        self._errors = errors

    def join(self, timeout: float | None = None) -> bool:
        """Wait for every rank (at most ``timeout`` seconds): True once all ended well,
        False on timeout. A failed rank stops the others and raises ``DistributedError``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            running = [p for p in self.processes if p.exitcode is None]
            failed = [p for p in self.processes if p.exitcode not in (None, 0)]
            if failed:
                self._stop()
                raise self._failure(failed[0])
            if not running:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            wait([p.sentinel for p in running], timeout=0.5 if left is None else min(left, 0.5))

    def _stop(self) -> None:
        for p in self.processes:
            if p.exitcode is None:
                p.terminate()
        end = time.monotonic() + GRACE
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))
            if p.exitcode is None:
                p.kill()
                p.join()

    def _failure(self, process: Any) -> DistributedError:
        rank = self.processes.index(process)
        status = process.exitcode
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        told = ""
        while not self._errors.empty():
            sender, text = self._errors.get()
            if sender == rank:
                told = f" with:\n{text}"
        return DistributedError(
            f"spawn: rank {rank} of {len(self.processes)} {how}{told}; the other ranks were stopped"
        )


def spawn(
    func: Callable,
    args: tuple = (),
    nprocs: int = -1,
    join: bool = True,
    daemon: bool = False,
    **options: Any,
) -> SpawnContext:
    """Run ``func(*args)`` in ``nprocs`` new processes forming one job (``nprocs=-1``: one
    per GPU CuPy sees, else one). ``join=False`` returns at once (``SpawnContext.join``
    waits). ``options``: ``gpus`` (comma-separated device ids, one per rank) is taken;
    Paddle's others (``backend``, ``ips``...) are accepted and unused."""
    if not callable(func):
        raise TypeError(f"spawn: func must be callable, got {type(func).__name__}")
    if nprocs in (-1, None):
        nprocs = _gpu_count() or 1
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn: nprocs must be a positive int (or -1), got {nprocs!r}")
    devices = options.get("gpus")
    devices = None if devices is None else [d.strip() for d in str(devices).split(",")]
    if devices is not None and len(devices) != nprocs:
        raise ValueError(f"spawn: gpus names {len(devices)} devices for {nprocs} processes")
    ctx = multiprocessing.get_context("spawn")
    errors = ctx.SimpleQueue()
    port = free_port()
    processes = []
    for rank in range(nprocs):
        env = job_environment(rank, nprocs, port, None if devices is None else devices[rank])
        process = ctx.Process(target=_rank_main, args=(func, tuple(args), env, errors),
                              daemon=daemon)  # fmt: skip
        process.start()
        processes.append(process)
    context = SpawnContext(processes, errors)
    if join:
        context.join()
    return context


def _gpu_count() -> int:
    try:
        from autostatic_runtime.backends.cupy_backend import CupyBackend

        if CupyBackend.available():
            import cupy

            return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no CuPy or no driver: no GPU
        pass
    return 0
