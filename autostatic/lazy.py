"""Tracing functions, built when tracing first reaches a function: what ``traced`` does.

A converted function (the hook's, or ``autostatic.convert``'s) starts with an entry check::

    def f(a, b=2, *args, c, **kw):
        if __jst__.tracing and __jst__.traces_here():
            return __jst__.traced()(a, b, *args, c=c, **kw)   # convert's: traced(KEY)
        <original body, untouched>

Eagerly it costs two attribute loads. While a program is traced, the runtime's ``traced``
hands its key (None from the hook) and the caller's frame to ``traced`` here (registered on
the first trace once ``autostatic`` is imported; the runtime never imports the compiler),
which returns the function's *tracing function*; the entry check calls it with its own
parameters, so the only extra frame in a traceback is the function's own entry (no frame of
autostatic's). At entry the frame's locals are exactly the parameters and the values of the
free variables (``__class__`` for a zero-argument ``super()`` included; an unbound free
variable is absent), so:

1. find the *factory code* of the function: in memory, else on disk beside the module's
   cache (``<module>...-tracing.pyc``, keyed by the source hash), else re-read the source file,
   refuse it if its hash is not the one the module was imported with (a stale tracing body
   can never run), parse it once per trace session, find the ``def`` by its first line and
   name and convert it (``tracing_factory``);
2. ``factory(convert_ops, Variable)`` with the closure cells the factory needs - new cells
   holding the frame's values for the hook, the function's own cells for ``convert`` - gives
   the tracing function (kept per code object when the function has no free variables).

A function the converter cannot handle traces as written (a ``ConversionWarning`` says why).
The hook's check calls ``traced()`` with no key: it is ``("autostatic.entry", source hash,
first line, name)``, from the caller's code and its module's ``__autostatic_source__``. For
``autostatic.convert`` it is ``CONVERTED`` when the function has no free variables (the
runtime module is then a constant of the entry code: the cheapest check), else the converted
function itself (a closure cell of its own); the record of the entry code holds the parsed
function.
"""

from __future__ import annotations

import ast
import atexit
import functools
import importlib.util
import re
import types
import unicodedata
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any

import autostatic_runtime.convert_ops as convert_ops
from autostatic.hook import cache as hook_cache
from autostatic.hook.entry import MARK, SOURCE, entry_check, is_checked
from autostatic_runtime import mode
from autostatic_runtime.errors import StaticBuildError

_FUTURE_FLAGS = 0x1000000 | 0x2000000 | 0x4000000 | 0x8000000
ENTRY_ALIAS = "__jst__"  # closure cell names of ``convert``'s entry functions
ENTRY_SELF = "__jst_fn__"
#: ``convert``'s entry functions without free variables hold the runtime module as a constant
#: of their code (a constant load is the cheapest check): compiled as this string, swapped
CONST_ALIAS = "__autostatic_convert_ops__"
#: their key: the tracing function is found by the entry code in the caller's frame
CONVERTED = ("autostatic.converted",)


# -- caches ------------------------------------------------------------------------------------

#: code object of a checked function -> (globals, tracing function), free-variable-less only
_functions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: (filename, source hash) -> {(line, name, ...): (reason or None, factory code)}
_factories: dict[tuple[str, str], dict] = {}
#: filename -> its ``_File`` of the trace session; cleared when tracing ends
_trees: dict[str, _File] = {}


#: (disk cache path, source hash) -> the file's factories, not written yet: a write carries
#: all of a file's entries (merged with the file on disk), so they are written once when
#: tracing ends (and at exit), not once per converted function (quadratic in a session)
_unwritten: dict[tuple[str, str], dict] = {}


def _end_of_session(static: bool) -> None:
    if not static:
        _trees.clear()
        _write_unwritten()


def _write_unwritten() -> None:
    while _unwritten:
        (where, digest), entries = _unwritten.popitem()
        _write_disk(where, digest, entries)


mode.on_switch(_end_of_session)
atexit.register(_write_unwritten)


@dataclass(eq=False)
class Entry:
    """What ``autostatic.convert`` keeps for one converted code object."""

    node: Any  # the gast def (or lambda) of the original function
    filename: str
    qualname: str
    flags: int
    freevars: tuple[str, ...]
    taken: set[str]
    source_hash: str | None = None  # of the file ``node`` is from (``file_source_hash``)
    factory: types.CodeType | None = None
    functions: dict = field(default_factory=dict)  # id(globals) -> (globals, tracing fn)


#: entry code made by ``convert`` -> Entry; original code -> {file name: entry code}
_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_entry_codes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# -- traced ------------------------------------------------------------------------------------


def traced(target: Any, frame: types.FrameType) -> Any:
    """The tracing function of the function ``frame`` is running (see the docstring)."""
    code = frame.f_code
    f_globals = frame.f_globals
    if target is None:  # the hook's: keyed by the caller's code and its module's source
        target = _hook_key(code, f_globals)
    elif type(target) is not tuple:  # convert's, with free variables: the function itself
        del frame
        return _convert_tracing_function(target.__code__, target.__globals__, target.__closure__)
    if target == CONVERTED:  # convert's, without free variables: found by its code
        del frame
        return _convert_tracing_function(code, f_globals, None)
    found = _functions.get(code)
    if found is not None and found[0] is f_globals:
        return found[1]
    values = frame.f_locals if code.co_freevars else {}
    del frame
    return _hook_tracing_function(target, code, f_globals, values)


def _hook_key(code: types.CodeType, f_globals: dict) -> tuple:
    """``(MARK, source hash, first line, name)`` of a hook-checked function's code."""
    digest = f_globals.get(SOURCE)
    if type(digest) is not str:
        raise StaticBuildError(
            f"'{code.co_qualname}' was compiled by autostatic's import hook, but the globals it "
            f"runs with have no {SOURCE} (the hash of the source it was compiled from), so its "
            "tracing body cannot be found; call it with its module's globals, or convert it "
            "with autostatic.convert",
            (code.co_filename, code.co_firstlineno, ""),
        )
    return (MARK, digest, code.co_firstlineno, code.co_name)


_variable: list = []  # the Variable class, imported on the first tracing function


def _tracing_function(factory: types.CodeType, f_globals: dict, cells: dict) -> Any:
    if not _variable:
        from autostatic_runtime.static.program import Variable

        _variable.append(Variable)
    closure = tuple(cells[v] if v in cells else types.CellType() for v in factory.co_freevars)
    function = types.FunctionType(factory, f_globals, closure=closure or None)
    return function(convert_ops, _variable[0])


#: code object of a hook-checked function with free variables -> {its file: its factory code}
#: (a nested function's tracing function is made anew per call, with its frame's values;
#: equal code objects of two files are one key: the file tells their factories apart)
_factory_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _hook_tracing_function(key: tuple, code: types.CodeType, f_globals: dict, values: dict):
    by_file = _factory_of.get(code)
    factory = None if by_file is None else by_file.get(code.co_filename)
    if factory is None:
        factory = hook_factory(key, code, f_globals)
        if code.co_freevars:
            _factory_of.setdefault(code, {})[code.co_filename] = factory
    cells = {v: types.CellType(values[v]) for v in factory.co_freevars if v in values}
    fn = _tracing_function(factory, f_globals, cells)
    if not code.co_freevars:
        _functions[code] = (f_globals, fn)
    return fn


def _convert_tracing_function(code: types.CodeType, f_globals: dict, closure: tuple | None):
    entry = _entries[code]
    found = entry.functions.get(id(f_globals))
    if found is not None and found[0] is f_globals:
        return found[1]
    if entry.factory is None:
        reason, entry.factory = _build(
            entry.node, entry.filename, entry.qualname, entry.freevars, entry.flags, entry.taken,
            source_hash=entry.source_hash,
        )  # fmt: skip
        if reason is not None:
            _warn_once(entry.filename, entry.node.lineno, entry.qualname, reason)
    cells = dict(zip(code.co_freevars, closure or ()))
    fn = _tracing_function(entry.factory, f_globals, cells)
    if not entry.freevars:
        entry.functions[id(f_globals)] = (f_globals, fn)
    return fn


def prepare(fn: Any) -> None:
    """Build ``fn``'s tracing body now (before a trace starts; a no-op for other callables)."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType) or not is_checked(code):
        return
    if code in _entries:
        entry = _entries[code]
        if entry.factory is None:
            reason, entry.factory = _build(
                entry.node, entry.filename, entry.qualname, entry.freevars, entry.flags,
                entry.taken, source_hash=entry.source_hash,
            )  # fmt: skip
            if reason is not None:
                _warn_once(entry.filename, entry.node.lineno, entry.qualname, reason)
        return
    for const in code.co_consts:
        if type(const) is tuple and len(const) in (4, 5) and const[0] == MARK:
            hook_factory(const, code, fn.__globals__)
            return
    if isinstance(fn.__globals__.get(SOURCE), str):  # the hook's check: ``traced()``
        hook_factory(_hook_key(code, fn.__globals__), code, fn.__globals__)


# -- the hook's functions: factory codes from memory, disk or the source -----------------------


def _tracing_cache_path(f_globals: dict) -> str | None:
    """Beside the module's own cache entry (``None``: the module was imported uncached)."""
    cached = f_globals.get("__cached__")
    if not isinstance(cached, str) or "-autostatic-" not in cached or not cached.endswith(".pyc"):
        return None
    return cached[:-4] + "-tracing.pyc"


def hook_factory(key: tuple, code: types.CodeType, f_globals: dict) -> types.CodeType:
    """The factory code of the hook-checked function ``code`` (``key`` from its entry check)."""
    digest, line, name = key[1:4]
    qualname = key[4] if len(key) > 4 else code.co_qualname  # (a nested def's check: key[4])
    filename = code.co_filename
    where = _tracing_cache_path(f_globals)
    known = _factories.get((filename, digest))
    if known is None:
        known = _factories[(filename, digest)] = _read_disk(where, digest, filename)
    sub = (line, name, qualname, code.co_freevars, code.co_flags & _FUTURE_FLAGS)
    found = known.get(sub)
    if found is None:
        from autostatic.conversion import converting
        from autostatic.pyct.to_gast import to_gast

        # the trees are made and dropped inside: the collector, enabled again on the way
        # out, has none of their nodes left to look at
        with converting():
            tree, taken = _locate(filename, digest, line, name, qualname)
            found = known[sub] = _build(
                _own_tree(filename, line, name, tree),
                filename,
                qualname,
                code.co_freevars,
                sub[4],
                taken,
                again=lambda: to_gast(_locate(filename, digest, line, name, qualname)[0]),
                source_hash=digest,
            )  # (a tree of its own: the conversion changes it)
            del tree
        if where is not None:
            _unwritten[(where, digest)] = known  # (written when tracing ends)
    reason, factory = found
    if reason is not None:
        _warn_once(filename, line, qualname, reason)
    return factory


def _read_disk(where: str | None, digest: str, filename: str) -> dict:
    if where is None:
        return {}
    try:
        entries = hook_cache.read_tracing(where, bytes.fromhex(digest))
    except Exception:  # any damage is a miss
        entries = None
    if not entries:
        return {}
    for key, (reason, factory) in entries.items():  # the project may have moved since
        entries[key] = (reason, hook_cache.relocate(factory, filename))  # they were written
    return entries


def _write_disk(where: str, digest: str, entries: dict) -> None:
    try:
        hook_cache.write_tracing(where, bytes.fromhex(digest), entries)
    except Exception:  # the cache never breaks tracing
        pass


@dataclass(eq=False)
class _File:
    """A source file as tracing reads it: its lines and the names it uses (a superset: every
    identifier of the text), and once a def could not be read by itself, its whole tree:
    ``index`` ({(line, name): ast def}), ``alone`` (ids of the defs no other def holds or is
    in) and ``given`` (the (line, name) of those given away)."""

    digest: str
    lines: list
    taken: set
    index: dict | None = None
    alone: set | None = None
    given: set = field(default_factory=set)
    fresh: dict = field(default_factory=dict)  # id -> a def parsed alone, not handed out yet


def _locate(filename: str, digest: str, line: int, name: str, qualname: str):
    """The ``ast`` def ``name`` starting at ``line`` (decorators included) of ``filename``, from
    a source whose hash is ``digest``, and the names its module uses. The def's own lines
    are parsed (``parser.def_at``); the whole file only when they do not parse alone."""
    found = _trees.get(filename)
    if found is None or found.digest != digest:
        found = _trees[filename] = _read(filename, digest, line, qualname)
    if found.index is None:
        from autostatic.pyct.parser import def_at

        alone = def_at(found.lines, line)
        node = alone[2].body[0] if alone is not None and alone[2].body else None
        if type(node) is ast.FunctionDef and node.name == name:
            found.fresh[id(node)] = node
            return node, found.taken
        _parse_whole(found, filename)
    node = found.index.get((line, name))
    if node is None and (line, name) in found.given:  # given away: the file parsed again
        _parse_whole(found, filename)
        node = found.index.get((line, name))
    if node is None:
        raise StaticBuildError(
            f"cannot trace {qualname!r}: no function at {filename}:{line} (re-import the module)",
            (filename, line, qualname),
        )
    return node, found.taken


def _read(filename: str, digest: str, line: int, qualname: str) -> _File:
    """The ``_File`` of ``filename``, which must still hash to ``digest``."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise StaticBuildError(
            f"cannot trace {qualname!r}: its source {filename!r} cannot be read "
            f"({exc.strerror}); tracing needs the source a converted module was imported from"
        ) from None
    if importlib.util.source_hash(data).hex() != digest:
        raise StaticBuildError(
            f"cannot trace {qualname!r}: {filename} has changed since its module was "
            "imported, and tracing would convert the new source; re-import the module "
            "(or restart the program) to trace it",
            (filename, line, qualname),
        )
    text = importlib.util.decode_source(data)
    return _File(digest, text.splitlines(keepends=True), _identifiers(text))


def _identifiers(text: str) -> set:
    """Every identifier of ``text`` (comments and strings too: generated names avoid a few
    more than they must), as Python reads them (NFKC)."""
    words = set(_IDENTIFIER.findall(text))
    odd = [w for w in words if not w.isascii()]
    words.update(unicodedata.normalize("NFKC", w) for w in odd)
    return words


_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def _parse_whole(found: _File, filename: str) -> None:
    """Python's own parser for the whole file (gast only for the function traced)."""
    tree = ast.parse("".join(found.lines), filename)
    found.index = {
        (min([d.lineno for d in n.decorator_list] + [n.lineno]), n.name): n
        for n in _statements(tree)
        if isinstance(n, ast.FunctionDef)
    }
    found.alone, found.given = _alone(tree), set()


def _own_tree(filename: str, line: int, name: str, node: ast.FunctionDef):
    """The gast form of the def ``node`` from ``_locate``, for the converter to change: ``node``
    itself, converted in place, when it was parsed alone, or when no other def of the file's
    tree holds it or is in it (nothing else of that tree can be traced through it: it is
    dropped from the index); else a copy."""
    from autostatic.pyct.to_gast import as_gast, to_gast

    found = _trees.get(filename)
    if found is not None and found.fresh.get(id(node)) is node:
        del found.fresh[id(node)]
        return as_gast(node)
    if (
        found is None
        or found.index is None
        or id(node) not in found.alone
        or found.index.get((line, name)) is not node
    ):
        return to_gast(node)
    del found.index[(line, name)]  # (asked again, the file is parsed again: ``_locate``)
    found.given.add((line, name))
    return as_gast(node)


def _alone(tree: ast.Module) -> set:
    """``id``\\s of the defs of ``tree`` with no def around them or in them."""
    alone = set()
    stack = [(tree, False)]  # (node, inside a def)
    while stack:
        node, inside = stack.pop()
        values = node.__dict__
        for block_name in _BLOCKS:
            block = values.get(block_name)
            if block.__class__ is not list:
                continue
            for sub in block:
                is_def = isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
                if is_def and not inside and not _holds_def(sub):
                    alone.add(id(sub))
                stack.append((sub, inside or is_def))
    return alone


def _holds_def(node: ast.AST) -> bool:
    """Whether a def (or lambda) is among the statements under ``node``."""
    return any(
        isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) for sub in _statements(node)
    )


def _statements(tree: ast.Module) -> list:
    """Every statement of ``tree`` (``def``\\s are statements: no expression is walked)."""
    out = []
    stack = [tree]
    while stack:
        node = stack.pop()
        values = node.__dict__
        for block_name in _BLOCKS:
            block = values.get(block_name)
            if block.__class__ is list:
                out.extend(block)
                stack.extend(block)
    return out


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # fields holding statements


# -- building a factory ------------------------------------------------------------------------


def _build(
    node, filename, qualname, freevars, flags, taken, again=None, source_hash=None
) -> tuple[str | None, types.CodeType]:
    """``(None, factory code)``, or ``(reason, factory of the body as written)`` when the
    converter cannot handle the function (it then traces as Python runs it). ``again``, a
    function making ``node`` anew: the conversion uses ``node`` up (no copy), and the body as
    written comes from ``again()``. ``source_hash``: of the file ``node`` is from (its nested
    functions are then converted on their own first trace)."""
    try:
        from autostatic.tracing_factory import tracing_factory

        return None, tracing_factory(
            node, filename=filename, qualname=qualname, freevars=freevars, flags=flags,
            taken=taken, copy=again is None, source_hash=source_hash,
        )  # fmt: skip
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if again is not None:
        node = again()
    return reason, _plain_factory(node, filename, qualname, freevars, flags)


def _plain_factory(node, filename, qualname, freevars, flags) -> types.CodeType:
    import gast

    from autostatic.conversion import _lambda_as_def
    from autostatic.pyct.to_gast import to_ast
    from autostatic.tracing_factory import compile_factory

    if isinstance(node, gast.Lambda):
        node = _lambda_as_def(node)
    fdef = ast.fix_missing_locations(to_ast(node))
    fdef.decorator_list = []
    return compile_factory(
        fdef, "__jst_unused__", "__jst_unused_Variable__", filename=filename,
        qualname=qualname, freevars=freevars, flags=flags,
    )  # fmt: skip


_warned: set = set()


def _warn_once(filename: str, line: int, qualname: str, reason: str) -> None:
    from autostatic.hook.finder import ConversionWarning

    if (filename, line) in _warned:
        return
    _warned.add((filename, line))
    warnings.warn_explicit(
        f"autostatic: function {qualname!r} cannot be converted ({reason}); it is traced as "
        "written",
        ConversionWarning,
        filename,
        line,
    )


# -- autostatic.convert: an entry-checked copy of a function -----------------------------------


def entry_function(fn: types.FunctionType) -> types.FunctionType:
    """``fn`` compiled from its source with the entry check: eager calls run its original
    body (same frames, file and lines); traced calls its tracing function, built lazily.

    The runtime alias and the function itself live in closure cells of the new function, so
    nothing is written into ``fn``'s globals. Raises ``SourceUnavailableError`` without source.
    """
    # code objects compare equal across files (co_filename is not compared): the same source
    # in two modules must not share an entry code, which names its file
    by_file = _entry_codes.get(fn.__code__)
    code = by_file.get(fn.__code__.co_filename) if by_file is not None else None
    if code is None:
        code = _compile_entry(fn)
        if by_file is None:
            by_file = _entry_codes.setdefault(fn.__code__, {})
        by_file[fn.__code__.co_filename] = code
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    own = types.CellType()
    if code.co_freevars:
        cells[ENTRY_ALIAS] = types.CellType(convert_ops)
        cells[ENTRY_SELF] = own
    closure = tuple(cells[v] for v in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(new, fn)
    new.__autostatic_original__ = fn
    own.cell_contents = new
    return new


def _compile_entry(fn: types.FunctionType) -> types.CodeType:
    import gast

    from autostatic.conversion import _lambda_as_def
    from autostatic.pyct import parser
    from autostatic.pyct.to_gast import to_ast
    from autostatic.tracing_factory import factory_module

    src = parser.parse_function(fn)
    original = fn.__code__
    node = src.node
    flags = original.co_flags & _FUTURE_FLAGS
    names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    for name in (ENTRY_ALIAS, ENTRY_SELF):
        if name in names or name in original.co_freevars:
            raise ValueError(f"{fn.__qualname__} uses the name {name!r}")
    fdef = to_ast(_lambda_as_def(node) if isinstance(node, gast.Lambda) else node)
    ast.fix_missing_locations(fdef)  # (factory_module expects a located tree)
    fdef.name = "__autostatic_entry__"  # its own name stays the module's global in its body
    fdef.decorator_list = []
    constant = not original.co_freevars and CONST_ALIAS not in original.co_consts
    if constant:  # the module and the key as constants: no closure
        check = entry_check(ast.Constant(CONST_ALIAS), CONVERTED, fdef)
    else:
        check = entry_check(ENTRY_ALIAS, ast.Name(id=ENTRY_SELF, ctx=ast.Load()), fdef)
    body = fdef.body
    doc = (
        1
        if body
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
        and isinstance(body[0].value.value, str)
        else 0
    )
    body.insert(doc, check)
    freevars = original.co_freevars + (() if constant else (ENTRY_ALIAS, ENTRY_SELF))
    module = factory_module(fdef, "__jst_unused__", "__jst_unused2__", fn.__qualname__, freevars)
    code = _find(compile(module, src.filename, "exec", flags=flags, dont_inherit=True), fdef.name)
    consts = code.co_consts
    if constant:
        consts = tuple(convert_ops if c == CONST_ALIAS else c for c in consts)
    code = code.replace(  # (its file name as a constant too: unequal to another file's)
        co_name=original.co_name,
        co_qualname=original.co_qualname,
        co_consts=consts + (src.filename,),
    )
    _entries[code] = Entry(
        node=node,
        filename=src.filename,
        qualname=fn.__qualname__,
        flags=flags,
        freevars=original.co_freevars,
        taken=set(fn.__globals__) - {ENTRY_ALIAS, ENTRY_SELF},
        source_hash=file_source_hash(src),
    )
    return code


def _find(code: types.CodeType, name: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_name != "__autostatic_factory__":
                return const
            found = _find(const, name)
            if found is not None:
                return found
    return None


# -- showing a tracing body --------------------------------------------------------------------


def tracing_source(fn: Any) -> str:
    """The source of ``fn``'s tracing function (converted now; nothing is cached)."""
    from autostatic.conversion import converting

    original = getattr(fn, "__autostatic_original__", fn)
    with converting():  # the trees are made and dropped inside: nothing left to collect
        return _tracing_source(original)


def _tracing_source(original: Any) -> str:
    from autostatic.pyct import parser
    from autostatic.pyct.to_gast import as_ast
    from autostatic.pyct.unparse import unparse
    from autostatic.tracing_factory import tracing_node

    src = parser.parse_function(original)
    node, _, _ = tracing_node(
        src.node,
        filename=src.filename,
        qualname=original.__qualname__,
        taken=set(getattr(original, "__globals__", {})),
        copy=False,  # a tree of its own
        source_hash=file_source_hash(src),
    )
    return unparse(as_ast(node))  # (the tree is dropped: made ``ast`` in place)


def file_source_hash(src) -> str | None:
    """The hex ``source_hash`` of the file a parsed function (``parser.FunctionSource``) is
    from, if the file holds that source at its lines (the key of its nested functions'
    entry checks: ``_locate`` finds them there); else None."""
    try:
        with open(src.filename, "rb") as f:
            data = f.read()
        lines = data.decode("utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return None
    own = src.source.splitlines(keepends=True)
    start = src.first_line - 1
    if [line.rstrip() for line in lines[start : start + len(own)]] != [
        line.rstrip() for line in own
    ]:
        return None
    return importlib.util.source_hash(data).hex()


def is_entry_checked(fn: Any) -> bool:
    """Whether ``fn`` (a function) already has an entry check (hook-loaded or converted)."""
    code = getattr(fn, "__code__", None)
    return isinstance(code, types.CodeType) and is_checked(code)


def install() -> None:
    """Make the runtime's ``traced`` reach this module (done by ``import autostatic``)."""
    convert_ops._traced_caller[0] = traced


__all__ = ["traced", "entry_function", "tracing_source", "is_entry_checked", "MARK"]
