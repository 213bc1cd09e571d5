"""Import hook costs on a 2,000-line marked module, and the first trace of a function.

    python benchmarks/bench_import.py

Goals (issue 13): importing a marked module from a warm cache costs at most 1.2x a plain import
of the same module (Python's own .pyc); a cold import at most 3x a plain cold import (Python
compiling the source and writing its .pyc). Tracing bodies are converted when tracing first
reaches a function, so neither import runs the converter.

The first module is imported before NumPy is loaded (the cache checks its CRC-32), the others
after, as in a program that uses the runtime (the cache checks its word sum: see
``autostatic/hook/cache.py``).

Each round removes the module from ``sys.modules`` and imports it again in this process;
plain and hooked imports alternate (see ``_timing.compare``), so the ratios come from the same
run on this shared machine.

The import a user sees is the first one of a process: ``fresh_process`` times it in new
processes that have imported ``autostatic_runtime`` (and ``autostatic``) already, alternating
plain ones and ones with the hook installed, run from the module's own folder (a project
whose ``pyproject.toml``, if any, does not configure autostatic), and reports the medians and
the median ratio of the pairs. Each pair starts its import at the same random point of the
garbage collector's cycle (a full collection, then 0-9 young collections and 0-699 new
objects): where the collector's counters stand decides whether a collection (~20-150 us
here) lands inside the import, and in a program that is chance, so the pairs sample it
instead of always measuring one phase (a fixed phase made the same code measure 1.2x or
1.7x depending on what had run before the import). Everything a hooked import does once per
process (the compiler's fingerprint, the first checksum, the first calls of the finder)
counts there; the in-process rounds show what each further import costs.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import compare  # noqa: E402

import autostatic  # noqa: E402
from autostatic.hook import cache as hook_cache  # noqa: E402

# Control-flow heavy code: loops and nested branches (bench_convert's kind).
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


# Dispatch code: a dozen early returns on the kind of the input, about 48 lines.
DISPATCH_FUNCTION = (
    '''

def dispatch_{i}(kind, x, scale=1.0, *extra, **options):
    """Dispatch {i}: early returns on ``kind``."""
'''
    + "".join(
        f"    if kind == {j}:\n        y = x * scale + {j}\n        return y - len(extra)\n"
        + ("    elif options.get('strict'):\n        raise ValueError(kind)\n" * (j % 4 == 3))
        for j in range(12)
    )
    + """    return x
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
    pyc = importlib.util.cache_from_source(path)
    autostatic.uninstall()
    plain = fresh_import(name)  # writes Python's own .pyc
    assert "__jst__" not in vars(plain)
    cached = hook_cache.cache_path(path)

    finder = autostatic.install(cache=True).finder  # (install reads pyproject.toml: once)
    autostatic.uninstall()

    def plain_import():
        fresh_import(name)

    def plain_cold_import():
        if os.path.exists(pyc):
            os.unlink(pyc)
        fresh_import(name)

    def warm_import():
        sys.meta_path.insert(0, finder)
        try:
            return fresh_import(name)
        finally:
            sys.meta_path.remove(finder)

    def cold_import():
        if os.path.exists(cached):
            os.unlink(cached)
        warm_import()

    converted = warm_import()
    assert "__jst__" in vars(converted) and os.path.exists(cached)
    ref, got, ratio = compare(plain_import, warm_import, rounds=15, min_time=0.1)
    cref, cgot, cratio = compare(plain_cold_import, cold_import, rounds=7, min_time=0.1)
    plain_import()  # Python's .pyc back, for its size
    fref, fgot, fratio = fresh_process(directory, name)
    print(f"{label}: {lines} lines, 40 functions")
    print(
        f"  first import of a fresh process:   {fref * 1e3:8.2f} ms plain, {fgot * 1e3:.2f} ms "
        f"hooked   {fratio:.2f}x plain"
    )
    print(f"  plain import (Python's .pyc)       {ref * 1e3:8.2f} ms")
    print(f"  warm-cache import (hook installed) {got * 1e3:8.2f} ms   {ratio:.2f}x plain")
    print(f"  plain cold import (compile + .pyc) {cref * 1e3:8.2f} ms")
    print(f"  cold import through the hook       {cgot * 1e3:8.2f} ms   {cratio:.2f}x plain cold")
    print(
        f"  code size: cache {os.path.getsize(cached) / 1024:.0f} KiB, "
        f".pyc {os.path.getsize(pyc) / 1024:.0f} KiB"
    )
    first_trace(converted, name, path)


_CHILD = """
import gc, sys, time
sys.path.insert(0, {directory!r})
import autostatic_runtime
import autostatic
if {hooked!r}:
    autostatic.install()
gc.collect()  # the same random point of the garbage collector's cycle: see the docstring
for _ in range({young}):
    gc.collect(0)
phase = [[] for _ in range({phase})]
t0 = time.perf_counter()
import {name}
t1 = time.perf_counter()
assert ("__jst__" in vars({name})) == {hooked!r}
print(t1 - t0)
"""


def fresh_process(directory: str, name: str, rounds: int = 41) -> tuple[float, float, float]:
    """(plain s, hooked s, ratio): one warm import in a new process that has imported the
    runtime, plain and through the hook in alternating processes; medians."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both imports read their cache
    phases = random.Random(name)

    def child(hooked: bool, young: int, phase: int) -> float:
        code = _CHILD.format(
            directory=directory, name=name, hooked=hooked, young=young, phase=phase
        )
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=directory
        )
        if out.returncode:
            raise RuntimeError(out.stderr)
        return float(out.stdout)

    child(False, 0, 0), child(True, 0, 0)  # both caches written
    plain, hooked = [], []
    for _ in range(rounds):
        young, phase = phases.randrange(10), phases.randrange(700)
        plain.append(child(False, young, phase))
        hooked.append(child(True, young, phase))
    ratio = statistics.median(h / p for p, h in zip(plain, hooked))
    return statistics.median(plain), statistics.median(hooked), ratio


def first_trace(module, name: str, path: str) -> None:
    """The first traced call of one function: convert it (the cost moved out of the import)."""
    from autostatic import lazy
    from autostatic_runtime import convert_ops

    fn = next(v for k, v in vars(module).items() if k.endswith("_0"))
    args = {"layer": (1.0, 2.0, 3.0, 0.5, True), "step": (3, 5, 2), "dispatch": (5, 2.0)}
    call = args[fn.__name__.rpartition("_")[0]]
    import autostatic_switch  # what the module's entry checks read

    old, convert_ops.tracing = convert_ops.tracing, True
    autostatic_switch.tracing = True
    try:
        lazy._functions.clear()
        lazy._factories.clear()
        lazy._trees.clear()
        tracing = lazy._tracing_cache_path(vars(module))
        if tracing and os.path.exists(tracing):
            os.unlink(tracing)
        t0 = time.perf_counter()
        fn(*call)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        fn(*call)
        again = time.perf_counter() - t0
    finally:
        convert_ops.tracing = autostatic_switch.tracing = old
    print(
        f"  first traced call of {fn.__name__}: {first * 1e3:.1f} ms (parse + convert); "
        f"then {again * 1e6:.0f} us"
    )


def main() -> None:
    sys.dont_write_bytecode = False  # both kinds of import read a cache
    directory = tempfile.mkdtemp(prefix="autostatic_bench_")
    sys.path.insert(0, directory)
    try:
        t0 = time.perf_counter()
        import autostatic.tracing_factory  # noqa: F401  (gast and the transformers)

        print(f"loading the converter once per process: {(time.perf_counter() - t0) * 1e3:.0f} ms")
        bench(directory, "model_first", MODEL_FUNCTION, "model-like module, NumPy not loaded yet")
        import numpy  # noqa: F401  (as in a program using the runtime: the cache's word sum)

        bench(directory, "model_2k", MODEL_FUNCTION, "model-like module (one 'if' per function)")
        bench(directory, "dispatch_2k", DISPATCH_FUNCTION, "dispatch module (12 early returns)")
        bench(directory, "control_2k", FUNCTION, "control-flow-heavy module (bench_convert's kind)")
    finally:
        autostatic.uninstall()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
