"""Find the ``to_static`` functions (declared with an ``input_spec``) of a package.

Used by ``pytest --autostatic-check PKG``: every module of PKG is imported (through the import
hook when the plugin installed it), and every module-level ``StaticFunction`` with an
``input_spec`` is yielded, as is the ``forward`` of every ``Layer`` subclass decorated with
``@to_static(input_spec=...)`` that can be built without arguments.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any

__all__ = ["find_static_functions"]


def _modules(package: str) -> Iterator[tuple[str, Any, str | None]]:
    try:
        root = importlib.import_module(package)
    except Exception as exc:
        yield package, None, f"cannot import {package}: {type(exc).__name__}: {exc}"
        return
    yield package, root, None
    for info in pkgutil.walk_packages(getattr(root, "__path__", []) or [], package + "."):
        try:
            yield info.name, importlib.import_module(info.name), None
        except Exception as exc:
            yield info.name, None, f"cannot import {info.name}: {type(exc).__name__}: {exc}"


def find_static_functions(package: str) -> Iterator[tuple[str, Any, str | None]]:
    """Yield ``(qualified name, StaticFunction or None, error or None)`` for ``package``."""
    import autostatic_runtime as rt
    from autostatic.jit.static_function import StaticFunction

    seen: set[int] = set()
    for modname, module, error in _modules(package):
        if module is None:
            yield modname, None, error
            continue
        for value in list(vars(module).values()):
            if id(value) in seen:
                continue
            if isinstance(value, StaticFunction) and value.input_spec is not None:
                if getattr(value, "__module__", modname) != modname:
                    continue  # imported from elsewhere: found in its own module
                seen.add(id(value))
                yield f"{modname}.{value.__qualname__}", value, None
            elif inspect.isclass(value) and issubclass(value, rt.nn.Layer):
                if value.__module__ != modname:
                    continue
                forward = inspect.getattr_static(value, "forward", None)
                if not isinstance(forward, StaticFunction) or forward.input_spec is None:
                    continue
                seen.add(id(value))
                qual = f"{modname}.{value.__qualname__}.forward"
                try:
                    layer = value()
                except Exception as exc:
                    yield (
                        qual,
                        None,
                        (
                            f"{qual}: cannot build {value.__qualname__}() without arguments to "
                            f"check it ({type(exc).__name__}: {exc}); test it with "
                            "assert_equivalent(layer) instead"
                        ),
                    )
                    continue
                layer.eval()
                yield qual, layer.forward, None
