"""Speed of the pyct dataflow analysis on a 50-line function with nested control flow.

    python benchmarks/bench_analysis.py [--json out.json]

Measures ``autostatic.pyct.analyze`` (activity, CFG, liveness, reaching definitions and all
annotations) on already parsed functions, median of many runs: once on each of many fresh
trees (what the converter does), again and again on one tree (this also pays for dropping the
previous results), and each stage alone.
Goal (issue: converter speed): well under 1.5 ms per 50-line function, so that a whole
conversion fits in 5 ms. For scale, ``gast.parse`` of the same source is also reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import gast

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import measure  # noqa: E402

from autostatic.pyct import activity, analyze, cfg, liveness, reaching_defs  # noqa: E402

SOURCE = """
def sample(x, y, n, self):
    total = 0
    acc = []
    i = 0
    while i < n:
        i += 1
        if x > y:
            z = x - y
            total += z
        elif x < 0:
            z = -x
            if z > 10:
                break
        else:
            z = 0
            continue
        for j in range(z):
            acc.append(j * total)
            if j % 3 == 0:
                self.count = self.count + 1
            else:
                total -= 1
        else:
            total += len(acc)
    try:
        w = total / n
    except ZeroDivisionError as e:
        w = 0
    finally:
        acc.clear()
    with open('f') as fh:
        data = fh.read()
    k = [v * 2 for v in acc if v > w]
    if (m := len(k)) > 3:
        total += m
    def helper(a):
        return a + total
    while True:
        total = helper(total)
        if total > 100:
            break
    result = {'t': total, 'w': w}
    for key, val in result.items():
        if val is None:
            del result[key]
    self.buf[0] = total
    q = lambda t: t + y
    out = q(total) + sum(x for x in acc)
    return out, data
"""


def _fresh(n: int) -> float:
    """Median seconds of ``analyze`` on ``n`` freshly parsed trees (each analyzed once)."""
    trees = [gast.parse(SOURCE).body[0] for _ in range(n)]
    times = []
    for node in trees:
        t0 = time.perf_counter()
        analyze(node)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results (ms) to this file")
    args = ap.parse_args()
    node = gast.parse(SOURCE).body[0]
    info = analyze(node)
    graph = info.graph
    rows = {
        "analyze (fresh trees)": _fresh(300),
        "analyze (same tree again)": measure(lambda: analyze(node), rounds=15),
        "  activity": measure(lambda: activity.analyze(node)),
        "  cfg.build": measure(lambda: cfg.build(node)),
        "  liveness (solve)": measure(lambda: liveness.solve(graph, info)),
        "  reaching_defs (solve)": measure(lambda: reaching_defs.solve(graph, info)),
        "gast.parse (for scale)": measure(lambda: gast.parse(SOURCE)),
    }
    lines = len(SOURCE.strip().splitlines())
    print(f"pyct analysis of a {lines}-line function ({len(graph.nodes)} CFG nodes), median")
    for name, seconds in rows.items():
        print(f"{name:28s} {seconds * 1e3:7.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k.strip(): v * 1e3 for k, v in rows.items()}, f, indent=2)


if __name__ == "__main__":
    main()
