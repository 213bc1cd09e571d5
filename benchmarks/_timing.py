"""Timing helpers shared by the benchmarks.

This machine's speed drifts (a shared VM), so a reference and the measured code are timed in
alternating batches and compared round by round: the reported ratio is the median of the
per-round ratios, and the times are medians too.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable


def _batch_size(fn: Callable[[], object], min_time: float) -> int:
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_time or n >= 1 << 20:
            return n
        n *= 2


def _run(fn: Callable[[], object], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def compare(
    reference: Callable[[], object],
    measured: Callable[[], object],
    rounds: int = 9,
    min_time: float = 0.03,
) -> tuple[float, float, float]:
    """(reference seconds, measured seconds, ratio) per call, from alternating batches."""
    n_ref, n_meas = _batch_size(reference, min_time), _batch_size(measured, min_time)
    refs, meas, ratios = [], [], []
    for _ in range(rounds):
        r, m = _run(reference, n_ref), _run(measured, n_meas)
        refs.append(r)
        meas.append(m)
        ratios.append(m / r)
    return statistics.median(refs), statistics.median(meas), statistics.median(ratios)


def measure(fn: Callable[[], object], rounds: int = 9, min_time: float = 0.03) -> float:
    """Median seconds per call of ``fn`` alone."""
    n = _batch_size(fn, min_time)
    return statistics.median(_run(fn, n) for _ in range(rounds))


def table(rows: list[tuple], title: str) -> str:
    """Rows of (name, reference s, measured s, ratio) as text, with the overhead per call."""
    lines = [
        title,
        f"{'case':34s} {'numpy':>10s} {'autostatic':>11s} {'ratio':>7s} {'overhead':>10s}",
    ]
    for name, ref, got, ratio in rows:
        lines.append(
            f"{name:34s} {ref * 1e6:8.2f}us {got * 1e6:9.2f}us {ratio:6.2f}x "
            f"{(got - ref) * 1e6:8.2f}us"
        )
    return "\n".join(lines)


def median_in_fresh_processes(module: str, function: str, args: tuple, repeats: int = 3) -> float:
    """The median of ``module.function(*args)`` (a float it returns, e.g. the seconds of a
    first call) over ``repeats`` fresh processes: in one process, XLA's compilation cache
    would answer the second time."""
    code = (
        f"import sys; sys.path.insert(0, sys.argv[1]); import {module} as m; "
        f"print(m.{function}(*sys.argv[2:]))"
    )
    here = os.path.dirname(os.path.abspath(__file__))
    times = []
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, "-c", code, here, *map(str, args)],
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(done.stdout.split()[-1]))
    return statistics.median(times)
