"""A deterministic measure of work for tests: function calls, not seconds (timings
belong in ``benchmarks/``)."""

from __future__ import annotations

import sys


def python_calls(run) -> int:
    """How many function calls ``run()`` makes, Python and built-in (C) functions alike,
    ``run``'s own frame not counted."""
    calls = -1

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call" or event == "c_call"

    old = sys.getprofile()
    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(old)
    return calls
