"""The runtime's core never imports static mode: static mode registers itself with it."""

from __future__ import annotations

import ast
from pathlib import Path

import autostatic_runtime

ROOT = Path(autostatic_runtime.__file__).parent
CORE = ["tensor.py", "autograd.py", "dispatch.py", "dtypes.py", "errors.py", "mode.py"]
CORE += [str(p.relative_to(ROOT)) for p in sorted((ROOT / "backends").glob("*.py"))]


def imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """Every module an import statement in ``path`` (a module of ``package``) names, at any
    depth (function-level imports too), relative imports resolved."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
            found.append((node.lineno, base))
    return found


def test_core_modules_never_import_static():
    offenders = [
        f"{name}:{line} imports {module}"
        for name in CORE
        for line, module in imported_modules(ROOT / name, _package(name))
        if module == "autostatic_runtime.static" or module.startswith("autostatic_runtime.static.")
    ]
    assert not offenders, offenders


def _package(name: str) -> str:
    return ".".join(("autostatic_runtime",) + Path(name).parent.parts)


def test_the_scan_sees_function_level_and_relative_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..static import builder\n    import x.y\n")
    found = imported_modules(probe, "autostatic_runtime.backends")
    assert (2, "autostatic_runtime.static.builder") in found
    assert (3, "x.y") in found
