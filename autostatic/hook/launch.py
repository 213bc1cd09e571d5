"""``autostatic launch``: start the processes of a training job on this host.

    python -m autostatic launch --nproc_per_node 2 train.py --epochs 3

starts ``nproc_per_node`` processes, each ``python -m autostatic run train.py --epochs 3``
(so the import hook converts marked modules, as ``autostatic run`` does), with the job in
their environment as Paddle's launcher and ``torchrun`` put it — ``PADDLE_TRAINER_ID``,
``PADDLE_TRAINERS_NUM``, ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT`` (a free port on this host, the coordinator's) — so that
``rt.distributed.init_parallel_env()`` joins them into one job (``jax.distributed``).

Each rank writes its output to ``LOG_DIR/workerlog.RANK`` (``./log`` by default, as
Paddle); rank 0's is also printed here. When a rank fails (exits with a non-zero status or
is killed), the others are stopped at once (SIGTERM to their process groups, SIGKILL after
a grace period), the end of the failed rank's log is printed with a line saying which rank
failed and how, and the launcher exits with that rank's status (128 + N for signal N) — the
first rank that failed. A job never outlives a failed rank by more than the grace period.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

USAGE = """\
usage: autostatic launch [--nproc_per_node N] [--log_dir DIR] [--master_port PORT]
                         [--devices IDS] [run options] script.py [args...]
       autostatic launch [options] -m module [args...]

Start N processes of one training job on this host (each runs 'autostatic run script.py
args...'); the script calls rt.distributed.init_parallel_env() to join them.

options:
  --nproc_per_node N  processes to start (default 1)
  --log_dir DIR       where each rank's output goes, as DIR/workerlog.RANK (default ./log)
  --master_port PORT  the coordinator's port on this host (default: a free one); Paddle's
                      --master 127.0.0.1:PORT is the same (--nnodes 1 is accepted)
  --devices IDS       comma-separated local device ids, one per rank (e.g. GPUs 0,1): rank
                      r takes the r-th (AUTOSTATIC_LOCAL_DEVICES); default: JAX's own.
                      Without --nproc_per_node, one process per id. (--gpus: the same)
  --grace SECONDS     how long stopped ranks get before SIGKILL (default 5)
  run options (--include, --exclude, --strict, --no-cache) are passed to 'autostatic run'.
"""

TAIL_LINES = 20  # lines of a failed rank's log printed by the launcher


@dataclasses.dataclass
class Options:
    nproc: int = 1
    log_dir: str = "log"
    master_port: int | None = None
    devices: list | None = None
    grace: float = 5.0
    command: list = dataclasses.field(default_factory=list)  # after ``autostatic run``


def parse(argv: list[str]) -> Options:
    """The launcher's options up to the first argument that is not one of them; the rest
    is ``autostatic run``'s command line (checked here). ValueError on a mistake."""
    from autostatic.hook.cli import _parse_run

    opts = Options()
    names = {"--nproc_per_node", "--log_dir", "--master_port", "--master", "--nnodes",
             "--devices", "--gpus", "--grace"}  # fmt: skip
    given = set()
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg in ("-h", "--help"):
            print(USAGE, end="")
            raise SystemExit(0)
        if name not in names:
            break
        if not eq:
            if i + 1 >= len(argv):
                raise ValueError(f"{name} needs a value")
            value, i = argv[i + 1], i + 1
        i += 1
        name = "--devices" if name == "--gpus" else name  # (Paddle's older spelling)
        given.add(name)
        _set(opts, name, value)
    if opts.devices is not None and "--nproc_per_node" not in given:
        opts.nproc = len(opts.devices)  # one process per device, as Paddle's launcher
    opts.command = argv[i:]
    _parse_run(list(opts.command))  # a missing script or an unknown option: said here
    if opts.devices is not None and len(opts.devices) < opts.nproc:
        raise ValueError(f"--devices names {len(opts.devices)} ids for {opts.nproc} processes")
    return opts


class _Said(ValueError):
    """A mistake in an option whose message says what to do instead."""


def _set(opts: Options, name: str, value: str) -> None:
    try:
        if name == "--nproc_per_node":
            opts.nproc = int(value)
            if opts.nproc < 1:
                raise ValueError
        elif name == "--log_dir":
            opts.log_dir = value
        elif name == "--master_port":
            opts.master_port = int(value)
        elif name == "--master":  # Paddle's HOST:PORT of the coordinator, on this host
            host, _, port = value.rpartition(":")
            if host not in ("", "127.0.0.1", "localhost", socket.gethostname()):
                raise _Said(
                    f"--master {value}: the launcher starts a job on this host only; for "
                    "several hosts start each process with MASTER_ADDR, MASTER_PORT, RANK "
                    "and WORLD_SIZE set (docs/distributed.md)"
                )
            opts.master_port = int(port)
        elif name == "--nnodes":
            if int(value) != 1:
                raise _Said(
                    f"--nnodes {value}: the launcher starts a job on this host only (1 node)"
                )
        elif name == "--devices":
            opts.devices = [d.strip() for d in value.split(",") if d.strip()]
        else:
            opts.grace = float(value)
    except _Said:
        raise
    except ValueError:
        raise ValueError(f"{name}: {value!r} is not a valid value") from None



def free_port() -> int:
    """A TCP port nobody listens on at this moment (the coordinator binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(rank: int, opts: Options, port: int) -> dict:
    """The environment of ``rank``: the job as Paddle's launcher and torchrun describe it."""
    n = str(opts.nproc)
    env = dict(os.environ)
    env.update(
        PADDLE_TRAINER_ID=str(rank), PADDLE_TRAINERS_NUM=n, PADDLE_LOCAL_RANK=str(rank),
        RANK=str(rank), WORLD_SIZE=n, LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=n,
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), PYTHONUNBUFFERED="1",
    )  # fmt: skip
    if opts.devices is not None:
        env["AUTOSTATIC_LOCAL_DEVICES"] = opts.devices[rank]
    return env


class Job:
    """The running ranks: their processes, logs, and the order in which they ended."""

    def __init__(self, opts: Options):
        self.opts = opts
        self.procs: list[subprocess.Popen] = []
        self.logs: list[str] = []
        self.ended: queue.Queue = queue.Queue()  # (rank, status), in the order they ended
        self._threads: list[threading.Thread] = []
        self._line_open = False  # whether rank 0's output printed here ends inside a line

    def start(self) -> None:
        opts = self.opts
        port = opts.master_port or free_port()
        os.makedirs(opts.log_dir, exist_ok=True)
        command = [sys.executable, "-m", "autostatic", "run", *opts.command]
        for rank in range(opts.nproc):
            path = os.path.join(opts.log_dir, f"workerlog.{rank}")
            self.logs.append(path)
            log = open(path, "wb")  # noqa: SIM115  (closed by the child's end or the pump)
            out = subprocess.PIPE if rank == 0 else log
            proc = subprocess.Popen(
                command, env=rank_env(rank, opts, port), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
            self.procs.append(proc)
            if rank == 0:
                self._spawn(self._pump, proc.stdout, log)
            else:
                log.close()  # the child holds its own copy
            self._spawn(self._wait, rank, proc)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _pump(self, source, log) -> None:
        """Copy rank 0's output to its log and to this terminal."""
        out = sys.stdout.buffer
        with log:
            for chunk in iter(lambda: source.read1(65536), b""):
                log.write(chunk)
                log.flush()
                try:
                    out.write(chunk)
                    out.flush()
                except (OSError, ValueError):
                    pass
                self._line_open = not chunk.endswith(b"\n")

    def _wait(self, rank: int, proc: subprocess.Popen) -> None:
        self.ended.put((rank, proc.wait()))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop every rank still running: ``sig`` to its process group, SIGKILL after the
        grace period."""
        for proc in self.procs:
            _signal(proc, sig)
        deadline = time.monotonic() + self.opts.grace
        for proc in self.procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(proc, signal.SIGKILL)
                proc.wait()
        for thread in self._threads:
            thread.join(1.0)

    def run(self) -> int:
        """Wait for the ranks; the first failure stops the others. Returns the exit status."""
        left = self.opts.nproc
        while left:
            try:
                rank, status = self.ended.get(timeout=0.5)  # (a timeout: Ctrl-C gets through)
            except queue.Empty:
                continue
            left -= 1
            if status != 0:
                self.stop()
                self._report(rank, status)
                return exit_status(status)
        for thread in self._threads:
            thread.join(1.0)
        return 0

    def _report(self, rank: int, status: int) -> None:
        how = f"was killed by {_signal_name(-status)}" if status < 0 else f"exited with {status}"
        tail = _tail(self.logs[rank], TAIL_LINES)
        if self._line_open:
            sys.stdout.write("\n")
            sys.stdout.flush()
        if rank != 0 and tail:
            sys.stderr.write(f"--- the end of {self.logs[rank]} ---\n{tail}")
            if not tail.endswith("\n"):
                sys.stderr.write("\n")
        sys.stderr.write(
            f"autostatic launch: rank {rank} of {self.opts.nproc} {how}; the other ranks were "
            f"stopped. Its output: {self.logs[rank]}\n"
        )


def exit_status(status: int) -> int:
    """A process's status as a shell reports it: 128 + N for a process killed by signal N."""
    return 128 - status if status < 0 else status


def _signal(proc: subprocess.Popen, sig: int) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)  # the rank and whatever it started (its own session)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(path: str, lines: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "".join(text.splitlines(keepends=True)[-lines:])


def main(argv: list[str]) -> int:
    """``autostatic launch ...``; returns the exit status."""
    try:
        opts = parse(argv)
    except ValueError as exc:
        print(f"autostatic: error: launch: {exc}", file=sys.stderr)
        return 2
    job = Job(opts)

    def terminate(signum, frame):  # the launcher asked to stop: stop the ranks first
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        job.start()
        return job.run()
    except KeyboardInterrupt:
        job.stop(signal.SIGINT)
        return 130
    except BaseException:  # the launcher itself failed: leave no rank behind
        job.stop()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
