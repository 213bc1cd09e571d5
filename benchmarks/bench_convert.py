"""Converter costs: conversion time per function, and converted vs original on Python values.

    python benchmarks/bench_convert.py [--size]   (--size: conversion time and size only)

Goals (issues 4 and 13): converting a 50-line function with nested control flow in under
5 ms; any function's converted code at most 4x its lines (non-blank) and converted in at most
50 ms (the catalogue of tests/programs.py, the 50-line function, and a function with twelve
sequential early returns); converted code at most 1.05x the original's time on Python values.
"""

from __future__ import annotations

import inspect
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


def nonblank(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


DISPATCH = (
    """
def dispatch(kind, x, scale=1.0, *extra, **options):
    \"\"\"Twelve sequential early returns (the issue's example).\"\"\"
"""
    + "".join(
        f"    if kind == {j}:\n        y = x * scale + {j}\n        return y - len(extra)\n"
        + ("    elif options.get('strict'):\n        raise ValueError(kind)\n" * (j % 4 == 3))
        for j in range(12)
    )
    + "    return x\n"
)


def size_report(functions) -> None:
    """Converted lines per source line (non-blank) and conversion time, per function."""
    from autostatic import lazy

    rows = []
    for fn in functions:
        src = nonblank(inspect.getsource(fn))
        out = nonblank(lazy.tracing_source(fn))
        rows.append((out / src, fn.__name__, src, out, conversion_ms(fn, rounds=5)))
    rows.sort()
    ratios = [r[0] for r in rows]
    median = statistics.median(ratios)
    print(f"converted code size over {len(rows)} functions: median {median:.2f}x")
    for ratio, name_, src, out, ms in rows[-5:]:
        print(f"  {name_:36s} {src:4d} -> {out:4d} lines  {ratio:5.2f}x  {ms:6.2f} ms")
    slowest = max(rows, key=lambda r: r[4])
    print(f"  slowest conversion: {slowest[1]} {slowest[4]:.2f} ms")


def load_dispatch():
    import importlib.util
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="autostatic_bench_"), "dispatch_bench.py")
    with open(path, "w") as f:
        f.write(DISPATCH)
    spec = importlib.util.spec_from_file_location("dispatch_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dispatch


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
        "(parse + analysis + transformers; median)"
    )
    size_report([*PROGRAMS, fifty_lines, load_dispatch()])
    if "--size" in sys.argv[1:]:
        return
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
