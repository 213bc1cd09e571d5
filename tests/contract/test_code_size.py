"""Any function's converted code is at most 4x its lines (non-blank lines of
``autostatic.to_code`` against the function's source), converted in milliseconds.

Times are measured and printed (``-s``), never asserted: the goals (50 ms per function, 5 ms
for a 50-line function) are benchmarks (``benchmarks/bench_convert.py``)."""

from __future__ import annotations

import time

import pytest

import autostatic
from tests.contract import cases, gen
from tests.contract.sizes import load, measure

RESULTS: dict = {}


@pytest.fixture(scope="module", autouse=True)
def warm_converter():
    autostatic.to_code(cases.while_true_break)  # load gast and the transformers once
    yield
    for name, (a, b, dt) in sorted(RESULTS.items(), key=lambda kv: -kv[1][1] / kv[1][0]):
        print(f"{name:32s} {a:4d} -> {b:5d} lines  {b / a:4.2f}x  {dt * 1e3:7.1f} ms")


FAMILY_PARAMS = sorted(gen.FAMILIES)


@pytest.mark.parametrize("family", FAMILY_PARAMS)
def test_generated_function_size(family, tmp_path):
    mod = load(tmp_path, f"contract_gen_{family}", gen.FAMILIES[family]())
    a, b, dt, code = measure(mod.f)
    RESULTS[family] = (a, b, dt)
    compile(code, "<converted>", "exec")
    assert b <= 4 * a, f"{family}: {a} -> {b} lines ({b / a:.2f}x)"


@pytest.mark.parametrize("fn", [fn for fn, _ in cases.CASES], ids=lambda f: f.__name__)
def test_case_function_size(fn):
    a, b, dt, code = measure(fn)
    RESULTS[fn.__name__] = (a, b, dt)
    assert b <= 4 * a, f"{fn.__name__}: {a} -> {b} lines"


def test_fifty_line_function_converts_fast(tmp_path):
    mod = load(tmp_path, "contract_realistic50", gen.realistic_50())
    times = []
    for _ in range(5):
        # a fresh module object each time: a fresh conversion (nothing cached in memory)
        m = load(tmp_path, "contract_realistic50", gen.realistic_50())
        t0 = time.perf_counter()
        autostatic.to_code(m.f)
        times.append(time.perf_counter() - t0)
    a, b, _, _ = measure(mod.f)
    times.sort()
    RESULTS["realistic_50 (median of 5)"] = (a, b, times[2])
    assert 45 <= a <= 55
    assert b <= 4 * a
