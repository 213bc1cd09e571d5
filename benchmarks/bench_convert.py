"""Converter costs: conversion time per function, and converted vs original on Python values.

    python benchmarks/bench_convert.py [--size]   (--size: conversion time and size only)
    python benchmarks/bench_convert.py --packages [name ...]
        (``lazy.tracing_source`` of every function of some installed packages: the slowest,
        the total, and where the time goes: parsing, converting, unparsing, collecting)
    python benchmarks/bench_convert.py --first-trace [name ...]
        (the import hook's first trace of the largest of those functions, stage by stage:
        parse, convert, as_ast, compile; and the file's stage, once per trace session)

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


def conversion_ms(fn, rounds: int = 30, best: bool = False) -> float | tuple[float, float]:
    """The median time (ms) of ``rounds`` conversions of ``fn`` (and the best, with ``best``)."""
    times = []
    for _ in range(rounds):
        conversion._cache.clear()
        t0 = time.perf_counter()
        conversion.convert_code(fn)
        times.append(time.perf_counter() - t0)
    median = statistics.median(times) * 1e3
    return (median, min(times) * 1e3) if best else median


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


PACKAGES = ("inflect", "pyparsing", "dateutil", "packaging", "more_itertools", "toolz", "attr")


def package_functions(names):
    """(qualified name, function) of every function defined in the packages ``names`` that
    are installed (their modules, and the methods of their classes), each code object once."""
    import contextlib
    import importlib
    import io
    import pkgutil
    import warnings

    warnings.simplefilter("ignore")
    found = []
    for name_ in names:
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # (one prints a page on import)
                module = importlib.import_module(name_)
        except ImportError:
            print(f"  ({name_} is not installed)")
            continue
        modules = [module]
        if hasattr(module, "__path__"):
            for info in pkgutil.walk_packages(module.__path__, name_ + "."):
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        modules.append(importlib.import_module(info.name))
                except Exception:
                    pass
        seen = set()
        for m in modules:
            for obj in list(vars(m).values()):
                candidates = [obj]
                if inspect.isclass(obj):
                    candidates = [getattr(v, "__func__", v) for v in vars(obj).values()]
                for fn in candidates:
                    if (
                        inspect.isfunction(fn)
                        and fn.__module__ == m.__name__
                        and fn.__code__ not in seen
                    ):
                        seen.add(fn.__code__)
                        found.append((f"{m.__name__}.{fn.__qualname__}", fn))
    return found


def packages_report(names) -> None:
    """``lazy.tracing_source`` of every package function: times (ms) per function and per stage
    (parse, convert, unparse; garbage collection is counted apart, wherever it ran)."""
    import gc

    from autostatic.conversion import converting
    from autostatic.pyct import parser
    from autostatic.pyct.to_gast import as_ast
    from autostatic.pyct.unparse import unparse
    from autostatic.tracing_factory import tracing_node

    collecting = [0.0]
    started = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            collecting[0] += time.perf_counter() - started[0]

    rows, failed = [], 0
    stages = [0.0, 0.0, 0.0]
    gc.callbacks.append(on_gc)
    try:
        for qualname, fn in package_functions(names):
            try:
                src = inspect.getsource(fn)
            except Exception:
                continue
            gc_before = collecting[0]
            t0 = time.perf_counter()
            try:  # what lazy.tracing_source does, timed by stage
                with converting():
                    parsed = parser.parse_function(fn)
                    t1 = time.perf_counter()
                    node, _, _ = tracing_node(
                        parsed.node,
                        filename=parsed.filename,
                        qualname=fn.__qualname__,
                        taken=set(fn.__globals__),
                        copy=False,
                    )
                    t2 = time.perf_counter()
                    out = unparse(as_ast(node))
                    del node, parsed
            except Exception:
                failed += 1
                continue
            t3 = time.perf_counter()
            stages[0] += t1 - t0
            stages[1] += t2 - t1
            stages[2] += t3 - t2
            ms = (t3 - t0) * 1e3
            gc_ms = (collecting[0] - gc_before) * 1e3
            rows.append((ms, qualname, nonblank(src), nonblank(out), gc_ms))
    finally:
        gc.callbacks.remove(on_gc)
    total = sum(r[0] for r in rows)
    print(
        f"{len(rows)} functions ({failed} failed): total {total / 1e3:.2f} s = parse "
        f"{stages[0]:.2f} + convert {stages[1]:.2f} + unparse {stages[2]:.2f} s "
        f"(of which garbage collection {collecting[0]:.2f} s); "
        f"median {statistics.median(r[0] for r in rows):.2f} ms"
    )
    print(f"  over 50 ms: {sum(r[0] > 50 for r in rows)}; slowest:")
    for ms, qualname, src, out, gc_ms in sorted(rows, reverse=True)[:10]:
        print(f"  {qualname[:58]:58s} {src:4d} -> {out:4d} lines {ms:7.1f} ms (gc {gc_ms:5.1f})")
    sizes = sorted(
        ((out / src, qualname, src, out) for _, qualname, src, out, _ in rows), reverse=True
    )
    lines_in, lines_out = sum(r[2] for r in sizes), sum(r[3] for r in sizes)
    print(
        f"  size: {lines_in} -> {lines_out} lines ({lines_out / lines_in:.2f}x), median "
        f"{statistics.median(r[0] for r in sizes):.2f}x; over 4x: {sum(r[0] > 4 for r in sizes)}; "
        "largest:"
    )
    for ratio, qualname, src, out in sizes[:5]:
        print(f"  {qualname[:58]:58s} {src:4d} -> {out:4d} lines {ratio:5.2f}x")


def first_trace_report(names, top: int = 4, rounds: int = 7) -> None:
    """The first trace of the ``top`` largest package functions (source lines), stage by
    stage as the import hook does it (``lazy.hook_factory``): the def from the file's tree
    (``to_gast``), the conversion (``tracing_node``), ``as_ast`` (gast -> ast in place, every
    node located) and Python's ``compile`` of the factory module; medians of ``rounds``
    rounds, the functions interleaved. The file's own stage (read, hash, parse, index the
    defs, collect its names: once per file and trace session) is reported apart."""
    import gc
    import importlib.util

    from autostatic import lazy
    from autostatic import tracing_factory as tf
    from autostatic.conversion import converting
    from autostatic.pyct import parser
    from autostatic.pyct.census import Census
    from autostatic.pyct.nodes import walk
    from autostatic.pyct.to_gast import as_ast

    found = []  # (nodes, lines, qualname, function): the largest by their trees' size
    for qualname, fn in package_functions(names):
        try:
            src = parser.parse_function(fn)
        except Exception:
            continue
        if fn.__name__ != "<lambda>":
            found.append((len(walk(src.node)), nonblank(src.source), qualname, fn))
    found.sort(key=lambda r: -r[0])
    chosen, digests = [], {}
    for _, lines, qualname, fn in found:  # the largest the hook finds in their files
        code = fn.__code__
        with open(code.co_filename, "rb") as f:
            digest = importlib.util.source_hash(f.read()).hex()
        try:  # (a function a decorator recompiled at other lines is not traced by the hook)
            lazy._locate(code.co_filename, digest, code.co_firstlineno, code.co_name, qualname)
        except Exception:
            continue
        digests[fn] = digest
        chosen.append((lines, qualname, fn))
        if len(chosen) == top:
            break
    times = {q: [] for _, q, _ in chosen}
    file_times = {q: [] for _, q, _ in chosen}
    for _ in range(rounds):
        for _, qualname, fn in chosen:
            code = fn.__code__
            key = (code.co_filename, digests[fn], code.co_firstlineno, code.co_name)
            lazy._trees.clear()
            gc.collect()
            with converting():
                t0 = time.perf_counter()
                tree, taken = lazy._locate(*key, code.co_qualname)  # the file's stage
                t1 = time.perf_counter()
                node = lazy._own_tree(key[0], key[2], key[3], tree)
                t2 = time.perf_counter()
                census = Census.of(node)
                hidden = "locals" in census.names or "vars" in census.names
                fdef, jst, sym = tf.tracing_node(
                    node, filename=key[0], qualname=code.co_qualname,
                    taken=set(taken) | set(code.co_freevars), copy=False, census=census,
                )  # fmt: skip
                tf._bare_signature(fdef)
                t3 = time.perf_counter()
                fdef = as_ast(fdef)
                if hidden:
                    tf._hide_from_locals(fdef, (jst, sym))
                t4 = time.perf_counter()
                tf.compile_factory(
                    fdef, jst, sym, filename=key[0], qualname=code.co_qualname,
                    freevars=code.co_freevars, flags=code.co_flags & lazy._FUTURE_FLAGS,
                )  # fmt: skip
                t5 = time.perf_counter()
                del tree, node, fdef
            file_times[qualname].append(t1 - t0)
            times[qualname].append((t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t1))
    print(f"first trace, stage by stage (median of {rounds}, ms):")
    for lines, qualname, _ in chosen:
        med = [statistics.median(r[i] for r in times[qualname]) * 1e3 for i in range(5)]
        print(
            f"  {qualname[-34:]:34s} {lines:4d} lines: parse {med[0]:5.1f} + convert "
            f"{med[1]:5.1f} + as_ast {med[2]:5.1f} + compile {med[3]:5.1f} = {med[4]:5.1f} "
            f"(best {min(r[4] for r in times[qualname]) * 1e3:5.1f}); its file once per "
            f"session {statistics.median(file_times[qualname]) * 1e3:5.1f}"
        )


def main() -> None:
    if "--first-trace" in sys.argv[1:]:
        names = [a for a in sys.argv[1:] if not a.startswith("--")]
        first_trace_report(names or PACKAGES)
        return
    if "--packages" in sys.argv[1:]:
        names = [a for a in sys.argv[1:] if not a.startswith("--")]
        packages_report(names or PACKAGES)
        return
    from tests.programs import PROGRAMS

    median, best = conversion_ms(fifty_lines, rounds=100, best=True)
    print(
        f"conversion of a 50-line function: {median:.2f} ms "
        f"(parse + analysis + transformers; median of 100, best {best:.2f} ms)"
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
