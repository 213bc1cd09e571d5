"""The suite's hypothesis profile: derandomized, so ``python -m pytest`` draws the same examples
on every run and in CI (a failure never depends on luck; ``@example``s pin what random searches
once found). ``HYPOTHESIS_PROFILE=explore`` searches at random instead."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("autostatic-suite", derandomize=True, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "autostatic-suite"))
