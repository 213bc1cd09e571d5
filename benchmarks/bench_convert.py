"""Converter costs: conversion time per function, and converted vs original on Python values.

    python benchmarks/bench_convert.py

Goals (issue 4): converting a 50-line function with nested control flow in under 5 ms;
converted code at most 1.05x the original's time on Python values.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import compare  # noqa: E402

import autostatic  # noqa: E402
from autostatic import conversion  # noqa: E402


def fifty_lines(x, n, k):
    total = 0
    acc = []
    for i in range(n):
        if x > i:
            total += i
            if total > 10:
                break
        elif x == i:
            total -= 1
            continue
        else:
            acc.append(i)
    while k > 0:
        k -= 1
        if k % 2 == 0:
            x = x * 2
        else:
            x = x + 1
        if x > 100:
            break
    else:
        total += 1
    y = total if total > 0 else -total
    z = x and y or k
    for _j, v in enumerate(acc):
        if v > 3:
            total += v
        elif v < 0:
            total -= v
        else:
            pass
    try:
        w = total / k
    except ZeroDivisionError:
        w = 0
    while w > 1000:
        w = w / 2
    if w > 1:
        if y > 2:
            return w
        else:
            return y
    q = [a * 2 for a in acc if a > 1]
    r = {a: b for a, b in zip(acc, q)}
    s = len(r) + len(q)
    if s > 3 and not z:
        s = -s
    return total, y, z, q, r, s


def conversion_ms(fn, rounds: int = 30) -> float:
    times = []
    for _ in range(rounds):
        conversion._cache.clear()
        t0 = time.perf_counter()
        conversion.convert_code(fn)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def workload(fn):
    def run():
        for a in range(-6, 7):
            for b in range(-3, 4):
                try:
                    fn(a, b)
                except Exception:
                    pass

    return run


def main() -> None:
    from tests.programs import PROGRAMS

    print(
        f"conversion of a 50-line function: {conversion_ms(fifty_lines):.2f} ms "
        "(parse + analysis + transformers + compile; median)"
    )
    ratios = []
    print(f"{'python workload':34s} {'original':>10s} {'converted':>10s} {'ratio':>7s}")
    for fn in PROGRAMS:
        ref, got, ratio = compare(workload(fn), workload(autostatic.convert(fn)))
        ratios.append(ratio)
        print(f"{fn.__name__:34s} {ref * 1e6:8.1f}us {got * 1e6:8.1f}us {ratio:6.2f}x")
    converted = autostatic.convert(fifty_lines)
    ref, got, ratio = compare(lambda: fifty_lines(7, 30, 9), lambda: converted(7, 30, 9))
    print(f"{'fifty_lines(7, 30, 9)':34s} {ref * 1e6:8.1f}us {got * 1e6:8.1f}us {ratio:6.2f}x")
    print(
        f"geometric mean over the catalogue: "
        f"{statistics.geometric_mean(ratios):.3f}x (max {max(ratios):.2f}x)"
    )


if __name__ == "__main__":
    main()
