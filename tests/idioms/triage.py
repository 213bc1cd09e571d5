"""Triage the idiom suite: run every case (ignoring xfail marks) and print one line per case
with its kind, its outcome and, for failures, the exception and where inside autostatic it
was raised.

    python -m tests.idioms.triage [module ...]      # from the project root
    python -m tests.idioms.triage --summary         # counts per kind, xfails per cause

A case whose *eager* run fails is reported as "EAGER-BROKEN": that is a bug in the test.
"""

from __future__ import annotations

import importlib
import signal
import sys
import time
import traceback

import numpy as np

from . import harness

MODULES = [
    "test_tensors", "test_returns", "test_jumps", "test_containers", "test_logical",
    "test_loops", "test_shapes", "test_apis", "test_closures", "test_models", "test_generic",
]  # fmt: skip


def _eager_ok(fn, inputs, kw) -> str | None:
    if "error" in kw:
        return None
    try:
        for args in inputs:
            call_args, _ = harness._make_args(args, grad=False)
            fn(*call_args)
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"
    return None


def _where(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in tb if "/autostatic" in f.filename and "/tests/" not in f.filename]
    if not inner:
        return ""
    f = inner[-1]
    return f" @ {f.filename.split('/wt/')[-1].split('/', 1)[-1]}:{f.lineno} {f.name}"


class CaseTimeout(Exception):
    pass


def _timeout(signum, frame):
    raise CaseTimeout("no result after 10 s (a loop that does not end?)")


def summary() -> int:
    """Cases per kind (passing / xfail) and the xfail causes with one test id each."""
    from collections import Counter, defaultdict

    from . import causes

    total, xfailed = Counter(), Counter()
    by_cause: dict[str, list[str]] = defaultdict(list)
    for m in MODULES:
        mod = importlib.import_module(f"tests.idioms.{m}")
        xf = dict(getattr(mod, "XFAIL", {}))
        ids = [c.id for c in mod.CASES]
        if getattr(mod, "TRAIN_XFAIL", None) is not None or hasattr(mod, "TRAIN_XFAIL"):
            ids.append("train_mlp_with_tensor_branch")
            if mod.TRAIN_XFAIL:
                xf["train_mlp_with_tensor_branch"] = mod.TRAIN_XFAIL
        for i in ids:
            kind = harness.KINDS[i]
            total[kind] += 1
            if i in xf:
                xfailed[kind] += 1
                by_cause[xf[i]].append(f"{m}.py::{i}")
    order = sorted(total, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0))
    print("kind     cases  pass  xfail")
    for k in order:
        print(f"{k:8} {total[k]:5} {total[k] - xfailed[k]:5} {xfailed[k]:6}")
    n, x = sum(total.values()), sum(xfailed.values())
    print(f"{'all':8} {n:5} {n - x:5} {x:6}\n")
    names = {v: k for k, v in vars(causes).items() if k.isupper()}
    for reason, tests in sorted(by_cause.items()):
        print(f"[{len(tests)}] {names.get(reason, '?')}: {reason}\n    e.g. {tests[0]}")
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--summary"]:
        return summary()
    mods = argv or MODULES
    for m in mods:
        try:
            mod = importlib.import_module(f"tests.idioms.{m}")
        except ModuleNotFoundError:
            continue
        xf = getattr(mod, "XFAIL", {})
        for c in mod.CASES:
            fn, inputs, kw = c.values
            kind = harness.KINDS.get(c.id, "?")
            broken = _eager_ok(fn, inputs, kw)
            if broken:
                print(f"{m}::{c.id} [{kind}] EAGER-BROKEN {broken}")
                continue
            t0 = time.perf_counter()
            signal.signal(signal.SIGALRM, _timeout)
            signal.alarm(10)
            try:
                np.seterr(all="ignore")
                harness.run_case(fn, inputs, kw)
                status = "PASS"
            except BaseException as e:  # noqa: BLE001
                status = "FAIL " + harness.describe_failure(e)[:220] + _where(e)
            finally:
                signal.alarm(0)
            dt = time.perf_counter() - t0
            mark = " (xfail)" if c.id in xf else ""
            print(f"{m}::{c.id} [{kind}] {dt:.2f}s{mark} {status}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
