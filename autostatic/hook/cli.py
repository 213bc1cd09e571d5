"""``python -m autostatic`` (also the ``autostatic`` console script).

    autostatic run [--include PKG] [--exclude PKG] [--strict] [--no-cache] script.py [args...]
    autostatic run [options] -m module [args...]
    autostatic show TARGET [--diff] [--level N]     # TARGET: file.py, module, module:qualname
    autostatic explain TARGET
    autostatic export MODEL OUT.onnx [--opset N]     # MODEL: a saved model's prefix or .pdmodel
    autostatic launch [--nproc_per_node N] [--log_dir DIR] script.py [args...]   # see launch.py
    autostatic --version | --help

User mistakes (a missing file, an unknown module or function) print one line and exit non-zero
without a traceback.
"""

from __future__ import annotations

import argparse
import sys

from autostatic import __version__

USAGE = """\
usage: autostatic run [--include PKG] [--exclude PKG] [--strict] [--no-cache] script.py [args...]
       autostatic run [options] -m module [args...]
       autostatic show TARGET [--diff] [--level N]
       autostatic explain TARGET
       autostatic export MODEL OUT.onnx [--opset N]
       autostatic launch [--nproc_per_node N] [--log_dir DIR] [run options] script.py [args...]
       autostatic --version

Convert eager model code into static programs.

commands:
  run      run a script (or -m module) as __main__ with the import hook installed: modules
           marked '# autostatic: enable' (and --include patterns) are converted on import,
           the script too when it is marked
  show     print the converted source of a file, module or module:qualname
           (--diff: against the original; --level N: after transformer N)
  explain  list each if/while/for of the target: can it become a static op, and if not, why
  export   convert a model saved by autostatic.save (its path prefix or .pdmodel file) into
           an ONNX file for ONNX Runtime, TensorRT, OpenVINO or Triton (--opset N, default
           17; needs the onnx extra)
  launch   start N processes of one training job on this host (each 'autostatic run
           script.py args...', joined by rt.distributed.init_parallel_env()); each rank's
           output goes to DIR/workerlog.RANK (default ./log); a failed rank stops the job
           with its exit status (see 'autostatic launch --help')

options of run:
  --include PKG   convert modules matching PKG ('pkg' = the package and everything in it,
                  'pkg.*' = its submodules); may repeat
  --exclude PKG   never convert modules matching PKG; may repeat
  --strict        fail instead of warning when a module cannot be converted
  --no-cache      do not read or write converted code in __pycache__
"""


def _error(message: str, status: int = 2) -> int:
    print(f"autostatic: error: {message}", file=sys.stderr)
    return status


def _parse_run(argv: list[str]):
    """Options up to the script or ``-m module``; everything after belongs to the script."""
    include, exclude, strict, cache = [], [], False, True
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--include", "--exclude"):
            if i + 1 >= len(argv):
                raise ValueError(f"{arg} needs a value")
            (include if arg == "--include" else exclude).append(argv[i + 1])
            i += 2
        elif arg.startswith(("--include=", "--exclude=")):
            key, _, value = arg.partition("=")
            (include if key == "--include" else exclude).append(value)
            i += 1
        elif arg == "--strict":
            strict, i = True, i + 1
        elif arg == "--no-cache":
            cache, i = False, i + 1
        elif arg == "-m":
            if i + 1 >= len(argv):
                raise ValueError("-m needs a module name")
            return include, exclude, strict, cache, ("module", argv[i + 1]), argv[i + 2 :]
        elif arg.startswith("-m") and len(arg) > 2:
            return include, exclude, strict, cache, ("module", arg[2:]), argv[i + 1 :]
        elif arg in ("-h", "--help"):
            print(USAGE, end="")
            raise SystemExit(0)
        elif arg.startswith("-") and arg != "-":
            raise ValueError(f"unknown option {arg!r} for run")
        else:
            return include, exclude, strict, cache, ("path", arg), argv[i + 1 :]
    raise ValueError("run needs a script or -m module")


def _run(argv: list[str]) -> int:
    from autostatic.hook import finder as import_hook
    from autostatic.hook import runner

    try:
        include, exclude, strict, cache, (kind, target), args = _parse_run(argv)
    except ValueError as exc:
        return _error(str(exc))
    settings = import_hook.resolve_settings(include, exclude, cache, strict)
    try:
        if kind == "path":
            runner.run_path(target, args, settings)
        else:
            runner.run_module(target, args, settings)
    except runner.UsageError as exc:
        return _error(str(exc), exc.status)
    return 0


def _report(command: str, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"autostatic {command}")
    parser.add_argument("target", help="path/to/file.py, module or module:qualname")
    if command == "show":
        parser.add_argument("--diff", action="store_true", help="diff against the original")
        parser.add_argument("--level", type=int, default=None, help="after transformer N")
    args = parser.parse_args(argv)
    from autostatic import report

    try:
        if command == "show":
            text = report.show(args.target, level=args.level, diff=args.diff)
        else:
            text = report.explain(args.target)
    except report.TargetError as exc:
        return _error(str(exc))
    except SyntaxError as exc:
        return _error(f"{exc.filename}:{exc.lineno}: {exc.msg}", 1)
    sys.stdout.write(text)
    return 0


def _export(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="autostatic export")
    parser.add_argument("model", help="a saved model: its path prefix or its .pdmodel file")
    parser.add_argument("out", help="the ONNX file to write")
    parser.add_argument("--opset", type=int, default=17, help="ONNX opset (default 17)")
    args = parser.parse_args(argv)
    from autostatic.onnx import export_saved
    from autostatic_runtime.errors import AutostaticError

    try:
        export_saved(args.model, args.out, args.opset)
    except ImportError as exc:  # the onnx extra is not installed
        return _error(str(exc))
    except FileNotFoundError as exc:
        return _error(f"no saved model at {args.model!r}: {exc}")
    except AutostaticError as exc:
        return _error(str(exc), 1)
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command in ("--version", "-V", "version"):
        print(f"autostatic {__version__}")
        return 0
    if command == "run":
        return _run(rest)
    if command in ("show", "explain"):
        return _report(command, rest)
    if command == "export":
        return _export(rest)
    if command == "launch":
        from autostatic.hook import launch

        return launch.main(rest)
    return _error(
        f"unknown command {command!r} (commands: run, show, explain, export, launch; see --help)"
    )
