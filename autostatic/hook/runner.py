"""Run a script or module as ``__main__`` the way ``python script.py`` / ``python -m`` would,
with the import hook installed and the script itself converted when it is marked.

``runpy.run_path`` compiles the script without consulting import hooks, so the runner reads
and compiles it itself (as coverage's runner does). ``sys.argv``, ``sys.path[0]``, the
``__main__`` module's attributes, the exit code, ``KeyboardInterrupt`` and tracebacks (which
start at the user's first frame, not the runner's) match plain Python's.

Child processes keep the hook: the settings travel in ``AUTOSTATIC_HOOK`` (``import
autostatic`` installs the hook when it is set) and, for multiprocessing's *spawn* and
*forkserver* start methods, in the preparation data a child unpickles before it imports
anything (``_Reinstall`` below), which also converts the re-run main script in the child.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types

from autostatic.hook import finder as import_hook

_old_mains: list = []  # keep the replaced ``__main__`` (the runner's own) alive


class UsageError(Exception):
    """A user mistake on the command line: printed as one line, exit status ``status``."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def activate(settings: import_hook.Settings) -> None:
    """Install the hook with ``settings`` here and in every child process."""
    import_hook.install(settings.include, settings.exclude, settings.cache, settings.strict)
    finder = import_hook.installed()
    finder.settings = settings  # exactly these (install merged pyproject settings already)
    os.environ[import_hook.ENV_HOOK] = settings.to_env()
    _patch_multiprocessing()


def script_code(path: str, data: bytes, settings: import_hook.Settings) -> types.CodeType:
    """The script's code: converted when it is marked (never cached, like Python's)."""
    loader = import_hook.AutostaticLoader("__main__", path, settings)
    mark = import_hook.pragma(data[:4096])
    if mark == "enable":
        notes, code = import_hook._convert(loader, "__main__", path, data)
        import_hook._warn_or_raise(settings, "__main__", path, notes)
        return code
    return loader.plain_code(data, path)


def run_path(path: str, args: list[str], settings: import_hook.Settings) -> None:
    """``python path args...`` with the hook installed."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise UsageError(f"can't open file {path!r}: [Errno {exc.errno}] {exc.strerror}") from None
    filename = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    sys.argv[:] = [path, *args]
    if not sys.flags.safe_path:  # python -P adds no script directory (and ours is not there)
        sys.path[0] = os.path.dirname(os.path.realpath(filename))
    activate(settings)
    try:
        code = script_code(filename, data, settings)
    except BaseException as exc:  # a SyntaxError prints as Python prints it, without our frames
        _print_from_user_frames(exc)
        raise
    main = _new_main(filename)
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    _execute(code, main)


def run_module(name: str, args: list[str], settings: import_hook.Settings) -> None:
    """``python -m name args...`` with the hook installed."""
    if not sys.flags.safe_path:
        sys.path[0] = os.getcwd()
    activate(settings)
    spec = _module_spec(name)
    loader = spec.loader
    code = loader.get_code(spec.name)
    if code is None:
        raise UsageError(f"No module named {name} (no code object)", 1)
    sys.argv[:] = [spec.origin, *args]
    main = _new_main(spec.origin)
    main.__spec__ = spec
    main.__loader__ = loader
    main.__package__ = spec.parent
    main.__cached__ = spec.cached
    _execute(code, main)


def _module_spec(name: str):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise UsageError(
            f"Error while finding module specification for {name!r} ({exc})", 1
        ) from None
    if spec is None:
        raise UsageError(f"No module named {name}", 1)
    if spec.submodule_search_locations is not None:
        if name == "__main__" or name.endswith(".__main__"):
            raise UsageError(f"Cannot use package as __main__ module: {name}", 1)
        try:
            importlib.import_module(name)  # the package runs first, as with python -m
        except Exception as exc:
            raise UsageError(f"Error while importing package {name!r} ({exc!r})", 1) from exc
        main_spec = _module_spec(name + ".__main__")
        return main_spec
    if spec.loader is None or not hasattr(spec.loader, "get_code"):
        raise UsageError(f"No code object available for {name}", 1)
    return spec


def _new_main(filename: str) -> types.ModuleType:
    main = types.ModuleType("__main__")
    main.__file__ = filename
    main.__cached__ = None
    main.__builtins__ = builtins
    _old_mains.append(sys.modules.get("__main__"))
    sys.modules["__main__"] = main
    return main


def _execute(code: types.CodeType, main: types.ModuleType) -> None:
    """Run ``code`` in ``main``; an escaping exception is printed from the user's first frame."""
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        _print_from_user_frames(exc)
        raise


def _print_from_user_frames(exc: BaseException) -> None:
    """Make the exception, when it ends the process, print without the runner's frames.

    Re-raising keeps Python's own handling of an uncaught exception (exit status 1, or death
    by SIGINT for ``KeyboardInterrupt``); only the traceback ``sys.excepthook`` sees is cut.
    """
    here = os.path.dirname(__file__)
    ours = {__file__, os.path.join(here, "cli.py"), os.path.join(here, "finder.py")}
    tb = exc.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in ours
        or tb.tb_frame.f_code.co_filename.startswith("<frozen importlib")
    ):
        tb = tb.tb_next
    previous = sys.excepthook

    def excepthook(kind, value, traceback):
        sys.excepthook = previous
        if value is exc:  # Python prints ``value.__traceback__``, whatever it is passed
            value.__traceback__ = traceback = tb
        previous(kind, value, traceback)

    sys.excepthook = excepthook


# -- multiprocessing -------------------------------------------------------------------------


class _Reinstall:
    """Travels in multiprocessing's preparation data; unpickling it in the child re-installs
    the hook before the child imports the main module or the target's module."""

    def __init__(self, env: str):
        self.env = env

    def __reduce__(self):
        return _reinstall, (self.env,)


def _reinstall(env: str) -> _Reinstall:
    os.environ[import_hook.ENV_HOOK] = env
    import_hook.install_from_env()
    _patch_multiprocessing()
    return _Reinstall(env)


def _patch_multiprocessing() -> None:
    try:
        from multiprocessing import spawn
    except ImportError:  # pragma: no cover - platforms without multiprocessing
        return
    if getattr(spawn.get_preparation_data, "_autostatic", False):
        return
    original = spawn.get_preparation_data
    original_fixup = spawn._fixup_main_from_path

    def get_preparation_data(name):
        data = original(name)
        env = os.environ.get(import_hook.ENV_HOOK)
        if env:
            data["autostatic_hook"] = _Reinstall(env)
        return data

    def fixup_main_from_path(main_path):
        """As multiprocessing's, but a marked main script is converted in the child too."""
        finder = import_hook.installed()
        current = sys.modules["__main__"]
        if finder is None or getattr(current, "__file__", None) == main_path:
            return original_fixup(main_path)
        if os.path.splitext(os.path.basename(main_path))[0] == "ipython":
            return original_fixup(main_path)
        with open(main_path, "rb") as f:
            data = f.read()
        spawn.old_main_modules.append(current)
        module = types.ModuleType("__mp_main__")
        module.__file__ = main_path
        module.__builtins__ = builtins
        sys.modules["__main__"] = sys.modules["__mp_main__"] = module
        exec(script_code(main_path, data, finder.settings), module.__dict__)

    get_preparation_data._autostatic = True
    spawn.get_preparation_data = get_preparation_data
    spawn._fixup_main_from_path = fixup_main_from_path
