"""Timing helpers shared by the benchmarks: best-of-N medians and a ratio table."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def measure(fn: Callable[[], object], min_time: float = 0.2, repeats: int = 7) -> float:
    """Seconds per call: the median of ``repeats`` batches, each running about ``min_time``."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / repeats or n >= 1 << 20:
            break
        n *= 2
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def table(rows: list[tuple[str, float, float]], title: str) -> str:
    """Rows of (name, reference seconds, measured seconds) as text with ratio and overhead."""
    lines = [title, f"{'case':34s} {'numpy':>10s} {'autostatic':>11s} {'ratio':>7s} {'overhead':>10s}"]
    for name, ref, got in rows:
        lines.append(f"{name:34s} {ref * 1e6:8.2f}us {got * 1e6:9.2f}us {got / ref:6.2f}x "
                     f"{(got - ref) * 1e6:8.2f}us")
    return "\n".join(lines)
