"""Import hook costs on a 2,000-line marked module.

    python benchmarks/bench_import.py

Goals (issue 5): importing from a warm cache at most 1.2x a plain import of the same module
(Python's own .pyc); a cold import (conversion) at most 100 ms.

Each round removes the module from ``sys.modules`` and imports it again in this process;
plain and hooked imports alternate (see ``_timing.compare``). The converter's own first load
(gast, the transformers) is reported apart from the per-module conversion cost.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import compare, measure  # noqa: E402

import autostatic  # noqa: E402
from autostatic.hook import cache as hook_cache  # noqa: E402

FUNCTION = '''

def step_{i}(x, n, k):
    """Function {i}: nested control flow, about 48 lines."""
    total = 0
    acc = []
    i = 0
    while i < n:
        if x > i:
            total += i
            if total > 10:
                break
        elif x == i:
            total -= 1
        else:
            acc.append(i)
        i += 1
    while k > 0:
        k -= 1
        if k % 2 == 0:
            total += k
        else:
            total -= 1
    if total > 100 and x > 0:
        total = 100
    elif total < -100 or x < 0:
        total = -100
    y = total if total > 0 else -total
    z = 0
    while z < 3:
        z += 1
        if z == 2:
            continue
        y += z
    if y > 50:
        result = y - 50
    elif y > 20:
        result = y - 20
    else:
        result = y
    for v in acc:
        result += v
    if not acc:
        result = result * 2
    count = 0
    while count < 2 and result > 0:
        count += 1
        result -= 1
    return result + len(acc)
'''


# Model-like code: mostly straight-line tensor arithmetic, one 'if' per function.
MODEL_FUNCTION = (
    '''

def layer_{i}(x, w, b, scale, training):
    """Layer {i}: straight-line arithmetic with one branch, about 48 lines."""
'''
    + "".join(
        f"    h{j} = {'x' if j == 0 else f'h{j - 1}'} * scale + b * {j} - w / (1 + {j})\n"
        for j in range(40)
    )
    + """    if training:
        out = h39 * 0.9
    else:
        out = h39
    return out
"""
)


def make_module(directory: str, name: str, template: str = FUNCTION, functions: int = 40) -> str:
    body = "".join(template.format(i=i) for i in range(functions))
    source = f'# autostatic: enable\n"""A generated marked module."""\n{body}'
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    return path


def fresh_import(name: str):
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def bench(directory: str, name: str, template: str, label: str) -> None:
    path = make_module(directory, name, template)
    lines = open(path).read().count("\n")
    autostatic.uninstall()
    plain = fresh_import(name)  # writes Python's own .pyc
    assert "_jst" not in vars(plain)
    cached = hook_cache.cache_path(path)

    def plain_import():
        autostatic.uninstall()
        fresh_import(name)

    def warm_import():
        autostatic.install(cache=True)
        module = fresh_import(name)
        autostatic.uninstall()
        return module

    def cold_import():
        if os.path.exists(cached):
            os.unlink(cached)
        autostatic.install(cache=True)
        fresh_import(name)
        autostatic.uninstall()

    t0 = time.perf_counter()
    converted = warm_import()  # the first conversion in a process
    first = time.perf_counter() - t0
    assert "_jst" in vars(converted) and os.path.exists(cached)
    ref, got, ratio = compare(plain_import, warm_import, rounds=15, min_time=0.1)
    cold = measure(cold_import, rounds=3, min_time=0.0)
    pyc = importlib.util.cache_from_source(path)
    print(f"{label}: {lines} lines, 40 functions")
    print(f"  plain import (Python's .pyc)       {ref * 1e3:8.2f} ms")
    print(f"  warm-cache import (hook installed) {got * 1e3:8.2f} ms   {ratio:.2f}x plain")
    print(
        f"  cold import (conversion)           {cold * 1e3:8.1f} ms   (first: {first * 1e3:.0f} ms)"
    )
    print(
        f"  code size: cache {os.path.getsize(cached) / 1024:.0f} KiB, "
        f".pyc {os.path.getsize(pyc) / 1024:.0f} KiB"
    )


def main() -> None:
    sys.dont_write_bytecode = False  # both kinds of import read a cache
    directory = tempfile.mkdtemp(prefix="autostatic_bench_")
    sys.path.insert(0, directory)
    try:
        t0 = time.perf_counter()
        import autostatic.hook.module_conversion  # noqa: F401  (gast and the transformers)

        print(f"loading the converter once per process: {(time.perf_counter() - t0) * 1e3:.0f} ms")
        bench(directory, "model_2k", MODEL_FUNCTION, "model-like module (one 'if' per function)")
        bench(directory, "control_2k", FUNCTION, "control-flow-heavy module (bench_convert's kind)")
    finally:
        autostatic.uninstall()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
