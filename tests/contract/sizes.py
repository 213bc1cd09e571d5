"""Shared helpers: load generated source as a real module (the converter needs the source)
and measure the converted code's size and conversion time."""

from __future__ import annotations

import importlib.util
import inspect
import os
import time

import autostatic


def nonblank(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def load(tmp_dir, name: str, source: str):
    path = os.path.join(str(tmp_dir), f"{name}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(fn):
    """(source lines, converted lines, seconds of the first to_code)."""
    src = inspect.getsource(fn)
    t0 = time.perf_counter()
    code = autostatic.to_code(fn)
    dt = time.perf_counter() - t0
    return nonblank(src), nonblank(code), dt, code


def render(body: list, indent: str = "    ") -> str:
    """Source lines from nested lists of lines (a list is a block indented one level more)."""
    lines = []
    for item in body:
        if isinstance(item, list):
            lines.extend(render(item, indent + "    ").splitlines())
        else:
            lines.append(indent + item)
    return "\n".join(lines) + "\n"
