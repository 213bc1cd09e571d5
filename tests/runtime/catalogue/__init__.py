"""Every op's samples, one module per op family. Each module defines ``SAMPLES``.

``EXEMPT`` maps op names that need no sample of their own to the reason (for example, an op
only ever built by another op's gradient and covered there).
"""

from __future__ import annotations

import importlib
import pkgutil

SAMPLES = []
EXEMPT: dict[str, str] = {}
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _mod = importlib.import_module(f"{__name__}.{_info.name}")
    SAMPLES.extend(getattr(_mod, "SAMPLES", []))
    EXEMPT.update(getattr(_mod, "EXEMPT", {}))
