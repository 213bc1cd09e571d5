"""The import hook: a ``sys.meta_path`` finder that converts marked modules as they are imported.

``install()`` puts one ``AutostaticFinder`` first on ``sys.meta_path``. It does not find
anything itself: it asks the other finders, and when the answer is a plain source file whose
module is *marked* - ``# autostatic: enable`` in its leading comment lines, or its name matches
an ``include`` pattern (and neither an ``exclude`` pattern nor ``# autostatic: disable``) - it
swaps the spec's loader for an ``AutostaticLoader``, a ``SourceFileLoader`` whose ``get_code``
returns the module compiled as Python compiles it plus one entry check per function
(``entry.py``; from the on-disk cache when it is current). A function's tracing body is
converted only when tracing first reaches it (``autostatic.lazy``). Every other spec is
returned untouched, so namespace packages, extension, frozen and zip-imported modules,
``importlib.resources``, ``pkgutil`` and ``reload`` behave as without the hook. A module that
pytest's assertion rewriter claims gets both: converted, then its asserts rewritten.

Conversion never makes an import fail: a function (or module) that cannot be converted runs
as written and a ``ConversionWarning`` names the module, the line and the reason; with
``strict`` (or ``AUTOSTATIC_STRICT=1``) a ``ConversionError`` is raised instead. A module with a
syntax error raises exactly the ``SyntaxError`` Python raises for it.

gast and the converter are imported only when tracing reaches a function: an import, cold or
warm, parses and compiles with the standard library alone.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import time
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from importlib.machinery import ModuleSpec, SourceFileLoader

import autostatic_switch as _switch  # imports nothing
from autostatic.hook import cache as hook_cache

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

ENV_HOOK = "AUTOSTATIC_HOOK"  # JSON settings: ``import autostatic`` installs the hook
ENV_STRICT = "AUTOSTATIC_STRICT"
_PRAGMA = re.compile(rb"#\s*autostatic:\s*(enable|disable)\b")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_HEAD = 4096  # bytes of a module read to look for the pragma
_NEVER = frozenset(
    {"autostatic", "autostatic_runtime", "autostatic_switch", "gast", "_pytest", "pytest", "pluggy"}
)


class ConversionWarning(UserWarning):
    """A function or module was imported unconverted (it runs exactly as written)."""


class ConversionError(ImportError):
    """Strict mode: a marked module could not be converted."""


@dataclass(frozen=True)
class Settings:
    """What the hook converts and how (see ``install``)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    cache: bool = True
    strict: bool = False

    def to_env(self) -> str:
        import json

        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, text: str) -> Settings:
        import json

        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):  # AUTOSTATIC_HOOK=1: defaults
            return cls()
        return cls(
            include=tuple(data.get("include", ())),
            exclude=tuple(data.get("exclude", ())),
            cache=bool(data.get("cache", True)),
            strict=bool(data.get("strict", False)),
        )


# -- which modules --------------------------------------------------------------------------


def matches(name: str, patterns: Iterable[str]) -> bool:
    """``"pkg"`` matches ``pkg`` and everything under it; a pattern with ``*``/``?``/``[`` is
    matched against the whole dotted name (``"pkg.*"``: the submodules of ``pkg``)."""
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            if fnmatch.fnmatchcase(name, pattern):
                return True
        elif name == pattern or name.startswith(pattern + "."):
            return True
    return False


def pragma(head: bytes) -> str | None:
    """``"enable"``, ``"disable"`` or ``None`` from the leading comment lines of ``head``."""
    if b"autostatic" not in head:  # most modules: no need to look at lines
        return None
    found, at, end = None, 0, len(head)
    while at < end:  # line by line, only as far as the leading comments go
        stop = _LINE_END.search(head, at)
        line = head[at : stop.start() if stop else end].strip()
        if line:
            if not line.startswith(b"#"):
                break
            m = _PRAGMA.match(line)
            if m:
                found = m.group(1).decode()
        at = stop.end() if stop else end
    return found


_STDLIB = os.path.dirname(os.__file__) + os.sep


def _in_stdlib(path: str) -> bool:
    """The standard library never carries the pragma: skip reading it (site-packages may)."""
    return path.startswith(_STDLIB) and "site-packages" not in path and "dist-packages" not in path


def _read_head(path: str) -> bytes:
    try:  # os-level calls: this runs for every module imported while the hook is installed
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return b""
    try:
        return os.read(fd, _HEAD)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _is_pytest_hook(finder: object) -> bool:
    cls = type(finder)
    return cls.__name__ == "AssertionRewritingHook" and cls.__module__.startswith("_pytest.")


# -- settings from pyproject.toml -------------------------------------------------------------


def _pyproject_settings(start: str) -> dict:
    """``[tool.autostatic]`` of the nearest ``pyproject.toml`` at or above ``start``."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as f:
                    data = f.read()
                if not _may_configure(data):
                    return {}
                import tomllib

                table = tomllib.loads(data.decode()).get("tool", {}).get("autostatic", {})
            except (OSError, ValueError) as exc:  # TOMLDecodeError, UnicodeDecodeError
                warnings.warn(f"autostatic: cannot read {candidate}: {exc}", stacklevel=3)
                return {}
            return table if isinstance(table, dict) else {}
        parent = os.path.dirname(directory)
        if parent == directory:
            return {}
        directory = parent


def _may_configure(data: bytes) -> bool:
    """Whether a ``pyproject.toml`` can hold ``[tool.autostatic]``: ``autostatic`` in a table
    header (a line starting with ``[``) or as a key (``autostatic =``, ``autostatic.include
    =``, quoted or not), or a key spelled with escapes. Most files (a project that merely
    depends on autostatic) are not parsed: importing ``tomllib`` and parsing at ``install()``
    costs more than the warm imports that follow."""
    return _CONFIGURES.search(data) is not None or b"\\u" in data or b"\\U" in data


_CONFIGURES = re.compile(rb"(?m)^[ \t]*\[[^\]\n]*autostatic|autostatic['\"]?[ \t]*[.=]")


def _as_tuple(value) -> tuple[str, ...]:
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def resolve_settings(include=(), exclude=(), cache=True, strict=False, start=None) -> Settings:
    """Arguments merged with ``[tool.autostatic]`` and ``AUTOSTATIC_STRICT``.

    Patterns add up; ``cache`` is off and ``strict`` on when any source says so.
    """
    table = _pyproject_settings(start or os.getcwd())
    env_strict = os.environ.get(ENV_STRICT, "").strip().lower() in ("1", "true", "yes", "on")
    return Settings(
        include=_as_tuple(include) + _as_tuple(table.get("include")),
        exclude=_as_tuple(exclude) + _as_tuple(table.get("exclude")),
        cache=bool(cache) and bool(table.get("cache", True)),
        strict=bool(strict) or bool(table.get("strict", False)) or env_strict,
    )


# -- conversion of one module ---------------------------------------------------------------


def _warn_or_raise(settings: Settings, fullname: str, path: str, notes: tuple) -> None:
    for lineno, text in notes:
        message = f"autostatic: {fullname} ({path}:{lineno}): {text}"
        if settings.strict:
            raise ConversionError(message, name=fullname, path=path)
        warnings.warn_explicit(message, ConversionWarning, path, lineno, module=fullname)


def _convert(loader: AutostaticLoader, fullname: str, path: str, data: bytes, digest=None):
    """``(notes, code)``: the module with its entry checks, or the plain one with notes saying
    why. (Functions are converted later, when tracing first reaches them.)"""
    try:
        from autostatic.hook.entry import instrument
    except Exception as exc:  # a broken installation must not break imports
        return _fallback(loader, path, data, 1, f"the converter failed to load ({exc!r})")
    digest = digest or hook_cache.source_hash(data)
    if _switch.FORCE_CONVERTED:
        return _convert_all(loader, path, data)
    if type(loader).rewrite is AutostaticLoader.rewrite:  # no AST rewriter after us
        try:
            from autostatic.hook.bytecode import instrument_code

            code = instrument_code(data, path, digest)
        except SyntaxError:
            code = None  # the ast path raises it as Python does
        except Exception:
            code = None
        if code is not None:
            return (), code
    try:
        result = instrument(data, path, digest)
    except SyntaxError:
        result = None  # compiled below, outside this handler: no chained traceback
    except Exception as exc:
        return _fallback(loader, path, data, 1, f"cannot be converted ({_reason(exc)})")
    if result is None:
        code = loader.plain_code(data, path)  # raises Python's own SyntaxError
        return ((1, "module cannot be parsed by the converter; it is imported unconverted"),), code
    try:
        loader.rewrite(result.tree, data, path)
        code = compile(result.tree, path, "exec", dont_inherit=True)
    except Exception as exc:
        return _fallback(
            loader, path, data, 1, f"the converted module does not compile ({_reason(exc)})"
        )
    return (), code


def _convert_all(loader: AutostaticLoader, path: str, data: bytes):
    """``AUTOSTATIC_FORCE_CONVERTED=1``: every function replaced by its tracing function at
    import (``module_conversion.convert_tree``), so every call runs the converted body in the
    function's own frame - frame-inspecting code (``sys._getframe(1)``, namedtuple's module
    lookup, traceback walkers) sees exactly the frames it sees unconverted."""
    try:
        from autostatic.hook.module_conversion import convert_tree

        result = convert_tree(data, path, source_hash=hook_cache.source_hash(data).hex())
    except SyntaxError:
        code = loader.plain_code(data, path)  # raises Python's own SyntaxError
        return ((1, "module cannot be parsed by the converter; it is imported unconverted"),), code
    except Exception as exc:
        return _fallback(loader, path, data, 1, f"cannot be converted ({_reason(exc)})")
    notes = tuple(
        (f.lineno, f"function {f.qualname!r} cannot be converted ({f.reason}); it runs as written")
        for f in result.failures
    )
    try:
        loader.rewrite(result.tree, data, path)
        code = compile(result.tree, path, "exec", dont_inherit=True)
    except Exception as exc:
        plain_notes, code = _fallback(
            loader, path, data, 1, f"the converted module does not compile ({_reason(exc)})"
        )
        return notes + plain_notes, code
    return notes, code


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _fallback(loader, path, data, lineno, reason):
    code = loader.plain_code(data, path)  # a SyntaxError here is the user's, and raised
    return ((lineno, f"module {reason}; it is imported unconverted"),), code


def _guarded(operation, *args):
    """A cache read or write; any failure is a miss (the cache never breaks an import)."""
    try:
        return operation(*args)
    except Exception:
        return None


class AutostaticLoader(SourceFileLoader):
    """Loads a marked module: its converted code, from the cache when the cache is current."""

    cache_tag = ""

    def __init__(self, fullname: str, path: str, settings: Settings):
        super().__init__(fullname, path)
        self.settings = settings
        self._cached: tuple | None = None  # ((path, tag), cache path) found with the spec
        self._entry: tuple | None = None  # (cache path, tag, entry) read to find the spec

    def get_code(self, fullname: str):
        path = self.get_filename(fullname)
        found = self._entry
        if found is not None:  # read to find the spec: a warm import
            self._entry = None  # once: a reload reads the cache again
            if found[1] == self.cache_tag + ("-forced" if _switch.FORCE_CONVERTED else ""):
                notes, code = found[2][:2]
                if notes:
                    _warn_or_raise(self.settings, fullname, path, notes)
                return hook_cache.relocate(code, path)  # the project may have moved
        forced = _switch.FORCE_CONVERTED
        tag = self.cache_tag + ("-forced" if forced else "")
        where = key = entry = now = None
        known = self._cached
        if self.settings.cache:
            where = (
                known[1] if known and known[0] == (path, tag) else hook_cache.cache_path(path, tag)
            )
            now = time.time_ns()  # before the source is stated and read (see cache.settled)
            try:
                key = hook_cache.source_key(path)
            except OSError:
                pass
            entry = _guarded(hook_cache.read_by_stat, where, key, None, forced) if key else None
        if entry is None:  # read the source: its hash may still match (a touched file)
            data = self.get_data(path)
            if pragma(data[:_HEAD]) == "disable":  # changed since it was found (reload)
                return self.plain_code(data, path)
            digest = hook_cache.source_hash(data)
            entry = _guarded(hook_cache.read, where, data, digest, forced) if where else None
            if entry is None:
                try:
                    notes, code = _convert(self, fullname, path, data, digest)
                except SyntaxError as error:  # the module's own error, as Python raises it
                    raise error.with_traceback(None) from None
            else:
                notes, code = entry
            # the source key only of a settled source; a hit by hash is rewritten only to
            # record one (a recent source is recognised by its hash until it has settled)
            key = key if key and hook_cache.settled(key, now) else None
            if where and (entry is None or key):
                enabled = pragma(data[:_HEAD]) == "enable"
                write = hook_cache.write
                _guarded(write, where, data, notes, code, digest, key, enabled, forced)
        else:
            notes, code = entry[:2]
        _warn_or_raise(self.settings, fullname, path, notes)
        return hook_cache.relocate(code, path)  # as Python's loader: the project may have moved

    def plain_code(self, data: bytes, path: str):
        """The unconverted module, compiled as Python compiles it."""
        return super().source_to_code(data, path)

    def rewrite(self, tree, data: bytes, path: str) -> None:
        """A hook for other AST rewriters (pytest's assertion rewriting) after conversion."""


def _pytest_tag() -> str:
    """The cache tag of modules pytest's assertion rewriting also compiles."""
    from _pytest._version import version

    return f"-pytest-{version}"


class _AssertRewritingLoader(AutostaticLoader):
    """A marked module pytest also rewrites: converted first, then its asserts rewritten."""

    def __init__(self, fullname: str, path: str, settings: Settings, hook):
        super().__init__(fullname, path, settings)
        self.hook = hook
        self.cache_tag = _pytest_tag()

    def rewrite(self, tree, data: bytes, path: str) -> None:
        from _pytest.assertion.rewrite import rewrite_asserts

        rewrite_asserts(tree, data, path, self.hook.config)

    def plain_code(self, data: bytes, path: str):
        """Unconverted but still assertion-rewritten (as pytest compiles it)."""
        import ast

        try:
            tree = ast.parse(data, path)
        except SyntaxError:
            return super().plain_code(data, path)  # Python's own error
        self.rewrite(tree, data, path)
        return compile(tree, path, "exec", dont_inherit=True)

    def exec_module(self, module) -> None:
        from pathlib import Path

        self.hook._rewritten_names[module.__name__] = Path(self.path)  # pytest's bookkeeping
        super().exec_module(module)


class AutostaticFinder:
    """The ``sys.meta_path`` entry: finds nothing itself, converts what others find."""

    def __init__(self, settings: Settings):
        self.settings = settings
        # the compiler names itself once, when installed (six stats): imports then state only
        # the modules' own files
        mark = hook_cache.FORCED_MARK if _switch.FORCE_CONVERTED else hook_cache.MARK
        _guarded(hook_cache.fingerprint, mark)

    def __repr__(self) -> str:
        return f"<AutostaticFinder {self.settings}>"

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        if fullname.partition(".")[0] in _NEVER:
            return None
        meta_path = sys.meta_path
        if meta_path and meta_path[0] is not self:
            self._stay_ahead_of_pytest(meta_path)
        spec = None
        for finder in list(meta_path):
            if finder is self or isinstance(finder, AutostaticFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.origin is None:
            return spec
        loader = spec.loader
        if type(loader) is SourceFileLoader:
            hook = None
        elif _is_pytest_hook(loader):
            hook = loader
        else:
            return spec
        origin = spec.origin
        try:
            found = self._warm_entry(fullname, origin, hook)
            if found is None and not self.marked(fullname, origin):
                return spec
            if hook is None:
                new = AutostaticLoader(fullname, origin, self.settings)
            else:
                new = _AssertRewritingLoader(fullname, origin, self.settings, hook)
            if found is not None:
                new._entry = found
            if found is not None and found[1] == new.cache_tag:
                cached = found[0]  # (not forced)
            else:
                cached = hook_cache.cache_path(origin, new.cache_tag)
            new._cached = ((origin, new.cache_tag), cached)
        except Exception:  # finding must never fail because of autostatic
            return spec
        spec.loader = new
        if spec.has_location and self.settings.cache and cached:
            spec.cached = cached
        return spec

    def _warm_entry(self, fullname: str, origin: str, hook) -> tuple | None:
        """``(cache path, tag, entry)`` when the module's cache entry is current and says the
        module is converted (it enables itself, or the settings include it): a warm import
        then reads neither the source nor the cache again. ``None`` otherwise (and at once
        when there is no entry: one failed ``open``)."""
        settings = self.settings
        if not settings.cache or _in_stdlib(origin):
            return None
        if settings.exclude and matches(fullname, settings.exclude):
            return None
        forced = _switch.FORCE_CONVERTED
        tag = ("" if hook is None else _pytest_tag()) + ("-forced" if forced else "")
        where = hook_cache.cache_path(origin, tag)
        try:
            entry = hook_cache.read_by_stat(where, None, origin, forced) if where else None
        except Exception:  # any failure is a miss (the cache never breaks an import)
            return None
        if entry is None:
            return None
        if not entry[3] and not (settings.include and matches(fullname, settings.include)):
            return None  # converted by settings that no longer include it
        return where, tag, entry

    def marked(self, fullname: str, origin: str) -> bool:
        """Whether the module ``fullname`` at ``origin`` is converted."""
        settings = self.settings
        if settings.exclude and matches(fullname, settings.exclude):
            return False
        found = None if _in_stdlib(origin) else pragma(_read_head(origin))
        if found is not None:
            return found == "enable"
        return bool(settings.include) and matches(fullname, settings.include)

    def _stay_ahead_of_pytest(self, meta_path: list) -> None:
        """Move this finder before pytest's hook (which claims test modules) if it is behind.

        Safe while the import system iterates ``meta_path``: everything that moves was
        already asked.
        """
        try:
            index = meta_path.index(self)
        except ValueError:
            return
        if any(_is_pytest_hook(f) for f in meta_path[:index]):
            del meta_path[index]
            meta_path.insert(0, self)

    def invalidate_caches(self) -> None:
        pass


# -- install / uninstall --------------------------------------------------------------------


class _Installation:
    """What ``install`` returns: the finder, usable as a context manager."""

    def __init__(self, finder: AutostaticFinder, previous: Settings | None):
        self.finder = finder
        self.previous = previous

    @property
    def settings(self) -> Settings:
        return self.finder.settings

    def __enter__(self) -> _Installation:
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is None:
            uninstall()
        else:
            self.finder.settings = self.previous


def installed() -> AutostaticFinder | None:
    """The installed finder, if any."""
    for finder in sys.meta_path:
        if isinstance(finder, AutostaticFinder):
            return finder
    return None


def install(
    include: str | Iterable[str] = (),
    exclude: str | Iterable[str] = (),
    cache: bool = True,
    strict: bool = False,
) -> _Installation:
    """Convert marked modules as they are imported (from now on).

    A module is converted when its leading comment lines say ``# autostatic: enable`` or its
    name matches an ``include`` pattern, unless it matches ``exclude`` or says
    ``# autostatic: disable``. Settings from ``[tool.autostatic]`` in the nearest
    ``pyproject.toml`` (searched from the working directory) and ``AUTOSTATIC_STRICT=1`` are
    merged in. Calling it again replaces the settings (one finder stays installed); as a
    context manager (``with autostatic.install(...):``) it restores the previous state on exit.

    Args:
        include: module name patterns to convert: ``"pkg"`` (the package and everything in
            it), ``"pkg.*"`` (its submodules), any ``fnmatch`` pattern.
        exclude: patterns never converted, even with the pragma.
        cache: keep converted code in ``__pycache__`` (``*-autostatic-<version>.pyc``).
        strict: raise ``ConversionError`` instead of warning when conversion fails.

    Returns:
        A handle with the finder and its settings; a context manager.
    """
    settings = resolve_settings(include, exclude, cache, strict)
    finder = installed()
    if finder is not None:
        previous = finder.settings
        finder.settings = settings
        return _Installation(finder, previous)
    finder = AutostaticFinder(settings)
    sys.meta_path.insert(0, finder)
    return _Installation(finder, None)


def uninstall() -> None:
    """Remove the hook; modules already converted stay converted."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AutostaticFinder)]


def install_from_env() -> None:
    """Install the hook when ``AUTOSTATIC_HOOK`` is set (``python -m autostatic run`` sets it,
    so child processes - multiprocessing's spawn, subprocesses - keep the hook)."""
    text = os.environ.get(ENV_HOOK)
    if text and installed() is None:
        settings = Settings.from_env(text)
        finder = AutostaticFinder(settings)
        sys.meta_path.insert(0, finder)
