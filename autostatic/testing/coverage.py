"""Branch coverage of static programs: which ``cond`` branches ran, how many ``while`` iterations.

``BranchCoverage`` is an observer for ``autostatic_runtime.static.observe``: programs compiled
while it observes report every ``cond`` decision and every ``while`` iteration count, keyed by
the user's (file, line). ``warn_untaken()`` emits a ``BranchCoverageWarning`` for each branch
never taken, because a test whose examples never reach the else branch proves nothing about it.

    cov = BranchCoverage()
    with cov.observing():
        static_fn(x)
    print(cov.summary())   # model.py:12 if: true 7, false 0 / model.py:20 while: 0..5 iterations
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from autostatic_runtime.static import observe

__all__ = ["BranchCoverage", "BranchCoverageWarning", "SiteCoverage"]


class BranchCoverageWarning(UserWarning):
    """A tensor-dependent branch (or loop body) was never exercised by the examples."""


@dataclass
class SiteCoverage:
    """What one ``cond`` or ``while`` site (a user line) did over the examples."""

    kind: str  # "cond" or "while"
    location: tuple  # (file, line, function)
    taken: Counter = field(default_factory=Counter)  # cond: {True: n, False: m}
    iterations: Counter = field(default_factory=Counter)  # while: {iterations: runs}

    @property
    def where(self) -> str:
        file, line = self.location[0], self.location[1]
        return f"{_short(file)}:{line}"

    def describe(self) -> str:
        if self.kind == "cond":
            return f"{self.where} if: true {self.taken[True]}, false {self.taken[False]}"
        counts = sorted(self.iterations)
        span = f"{counts[0]}..{counts[-1]}" if counts else "never run"
        return f"{self.where} while: {span} iterations over {sum(self.iterations.values())} runs"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class BranchCoverage:
    """Collects cond/while decisions of observed programs, keyed by the user's line."""

    def __init__(self) -> None:
        self.sites: dict[tuple, SiteCoverage] = {}

    def _site(self, kind: str, op) -> SiteCoverage:
        loc = op.location or ("<unknown>", 0, "?")
        key = (kind, loc[0], loc[1])
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = SiteCoverage(kind, tuple(loc))
        return site

    # observer protocol (autostatic_runtime.static.observe)
    def on_cond(self, op, taken: bool) -> None:
        self._site("cond", op).taken[bool(taken)] += 1

    def on_while(self, op, iterations: int) -> None:
        self._site("while", op).iterations[int(iterations)] += 1

    @contextlib.contextmanager
    def observing(self) -> Iterator[BranchCoverage]:
        """Observe programs compiled (and run) inside the block."""
        with observe.observe(self):
            yield self

    def untaken(self) -> list[str]:
        """One message per branch never taken / loop body never run."""
        out = []
        for site in self.sites.values():
            if site.kind == "cond":
                for branch, label in ((True, "true"), (False, "else")):
                    if not site.taken[branch]:
                        n = site.taken[not branch]
                        out.append(
                            f"{site.where}: the {label} branch of this tensor-dependent 'if' "
                            f"was never taken in {n} runs; widen the inputs (elements=, "
                            "more examples) so the tests exercise it"
                        )
            elif set(site.iterations) <= {0}:
                out.append(
                    f"{site.where}: the body of this tensor-dependent loop never ran; widen "
                    "the inputs so the tests exercise it"
                )
        return out

    def warn_untaken(self, stacklevel: int = 2) -> list[str]:
        """Emit a BranchCoverageWarning per untaken branch; returns the messages."""
        messages = self.untaken()
        for m in messages:
            warnings.warn(m, BranchCoverageWarning, stacklevel=stacklevel + 1)
        return messages

    def summary(self) -> str:
        return "\n".join(s.describe() for s in self.sites.values()) or "(no cond/while ops)"

    def __repr__(self) -> str:
        return f"<BranchCoverage {len(self.sites)} sites>"
