"""The import hook: everything between ``import mymodel`` and a marked module's code.

```
finder.py             sys.meta_path finder + loader, pragma / include rules, settings
module_conversion.py  a marked module as Python compiles it, plus one entry check per function
cache.py              the on-disk cache: module code and tracing-factory code, beside __pycache__
runner.py             python -m autostatic run: a script or module as __main__, hook installed
cli.py                the command line (run, show, explain)
```

Importing this package loads neither gast nor the converter: a warm-cache import of a marked
module never needs them.
"""

from __future__ import annotations

from autostatic.hook.finder import (
    AutostaticFinder,
    AutostaticLoader,
    ConversionError,
    ConversionWarning,
    Settings,
    install,
    installed,
    uninstall,
)

__all__ = [
    "install",
    "uninstall",
    "installed",
    "AutostaticFinder",
    "AutostaticLoader",
    "ConversionWarning",
    "ConversionError",
    "Settings",
]
