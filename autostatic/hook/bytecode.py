"""The entry checks put into compiled bytecode: a cold import at the cost of a plain compile.

``entry.instrument`` parses a module into ``ast`` objects, which costs 2.5-3x what compiling
it costs. This module compiles the source as Python does and puts the same entry check in
front of each function's first instruction (after ``RESUME``)::

    LOAD_GLOBAL __jst__; LOAD_ATTR tracing; POP_JUMP_FORWARD_IF_FALSE body
    LOAD_GLOBAL __jst__; LOAD_METHOD traces_here; PRECALL 0; CALL 0; POP_JUMP_FORWARD_IF_FALSE body
    LOAD_GLOBAL __jst__; LOAD_METHOD traced; PRECALL 0; CALL 0
    LOAD_FAST a; LOAD_FAST b; ...; CALL n; RETURN_VALUE      # the parameters, passed on
    body: <the function's own instructions, unchanged>

The check is taken from a template compiled once per signature (so its inline caches, jumps
and argument passing are the compiler's; parameters that are cells in the function are cells
in the template too); its jumps are relative and land on the first instruction after it. The
function's own jumps are relative too (CPython 3.11), so only its exception table (absolute
offsets) and its location table (the check gets the location of ``RESUME``) are rewritten.
Which functions get a check are exactly ``entry.instrument``'s; the module starts with the
alias import and ``__autostatic_source__ = '<source hash>'``, as there.
``instrument_code`` returns ``None`` when it cannot do this (another Python version, a module
that needs the ``ast`` path: ``@not_to_static``, more than 256 names or constants); the caller
then uses ``entry``.
"""

from __future__ import annotations

import dis
import sys
import types

from autostatic.hook.entry import ALIAS, SOURCE, SWITCH

_CO_OPTIMIZED, _CO_NEWLOCALS = 0x1, 0x2
_UNCHECKED_FLAGS = 0x20 | 0x80 | 0x200  # generator, coroutine, async generator
_RESUME = dis.opmap.get("RESUME")
_LOAD_GLOBAL = dis.opmap.get("LOAD_GLOBAL")
_LOAD_CONST = dis.opmap.get("LOAD_CONST")
_DEREF_WRITES = {dis.opmap.get(n) for n in ("STORE_DEREF", "DELETE_DEREF")}
_TEMPLATE_KEY = ("autostatic.template",)


def _template(source: str, module: bool) -> tuple[bytes, types.CodeType]:
    """The instructions of ``source`` after ``RESUME``, up to its final ``return``."""
    code = compile(source, "t", "exec")
    if not module:
        code = next(c for c in code.co_consts if hasattr(c, "co_code"))
    raw = code.co_code
    start = next(i for i in range(0, len(raw), 2) if raw[i] == _RESUME) + 2
    end = raw.index(bytes([_LOAD_CONST, code.co_consts.index(7)]), start)
    return raw[start:end], code


_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08

if sys.version_info[:2] == (3, 11):
    _ALIAS_IMPORT = _template(
        f"import {SWITCH} as {ALIAS}\n{SOURCE} = {_TEMPLATE_KEY!r}\n_ = 7\n",
        True,
    )
else:  # another bytecode: the ast path
    _ALIAS_IMPORT = None

_checks: dict = {}


def _check_for(code: types.CodeType) -> tuple[bytes, types.CodeType]:
    """The entry check for ``code``'s signature (compiled once per signature): it passes the
    parameters on as they came, from the same local slots (cells where ``code`` has cells)."""
    names = code.co_varnames
    n, k, posonly = code.co_argcount, code.co_kwonlyargcount, code.co_posonlyargcount
    i = n + k
    vararg = names[i] if code.co_flags & _CO_VARARGS else None
    i += vararg is not None
    kwarg = names[i] if code.co_flags & _CO_VARKEYWORDS else None
    params = names[: i + (kwarg is not None)]
    cells = tuple(c for c in code.co_cellvars if c in params)
    shape = (params, n, k, posonly, vararg, kwarg, cells)
    found = _checks.get(shape)
    if found is None:
        signature = list(names[:posonly]) + (["/"] if posonly else []) + list(names[posonly:n])
        signature += [f"*{vararg}"] if vararg else (["*"] if k else [])
        signature += list(names[n : n + k]) + ([f"**{kwarg}"] if kwarg else [])
        forward = list(names[:n]) + ([f"*{vararg}"] if vararg else [])
        forward += [f"{a}={a}" for a in names[n : n + k]] + ([f"**{kwarg}"] if kwarg else [])
        source = (
            f"def _t({', '.join(signature)}):\n"
            f"    if {ALIAS}.tracing and {ALIAS}.traces_here():\n"
            f"        return {ALIAS}.traced()({', '.join(forward)})\n"
            "    return 7\n" + (f"    lambda: ({', '.join(cells)},)\n" if cells else "")
        )
        found = _checks[shape] = _template(source, module=False)
    return found


def instrument_code(source: bytes, filename: str, digest: bytes) -> types.CodeType | None:
    """The module compiled with entry checks in its functions, or ``None`` (see above).

    Raises ``SyntaxError`` as ``compile`` does.
    """
    if _ALIAS_IMPORT is None or b"not_to_static" in source or ALIAS.encode() in source:
        return None
    if SOURCE.encode() in source:
        return None
    code = compile(source, filename, "exec", dont_inherit=True)
    _shared.clear()
    try:
        code = _instrument(code, False)
        return _insert(code, _ALIAS_IMPORT, digest.hex())  # first thing the module does
    except _Unsupported:
        return None
    finally:
        _shared.clear()


#: equal location tables, exception tables and name tuples share one object (marshal then
#: writes it once, as it does for the compiler's own)
_shared: dict = {}


class _Unsupported(Exception):
    pass


def _instrument(code: types.CodeType, nested: bool) -> types.CodeType:
    is_function = code.co_flags & (_CO_OPTIMIZED | _CO_NEWLOCALS) == _CO_OPTIMIZED | _CO_NEWLOCALS
    inner = nested or is_function
    consts = tuple(
        _instrument(c, inner) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    if consts != code.co_consts:
        code = code.replace(co_consts=consts)
    if is_function and _checked(code, nested):
        code = _insert(code, _check_for(code), None)
    return code


def _checked(code: types.CodeType, nested: bool) -> bool:
    if code.co_flags & _UNCHECKED_FLAGS or code.co_name.startswith("<"):
        return False  # generators, async, lambdas, comprehensions
    if nested and code.co_freevars:  # `nonlocal`: a write to a free variable
        free = set(code.co_freevars)
        for ins in dis.get_instructions(code):
            if ins.opcode in _DEREF_WRITES and ins.argval in free:
                return False
    return True


_HASNAME, _HASCONST = set(dis.hasname), set(dis.hasconst)


def _insert(code: types.CodeType, template: tuple, constant: object) -> types.CodeType:
    """``code`` with the template's instructions right after its ``RESUME`` (its constant
    ``_TEMPLATE_KEY`` becomes ``constant``)."""
    prefix_raw, source = template
    raw = code.co_code
    at = next(i for i in range(0, len(raw), 2) if raw[i] == _RESUME) + 2
    names = list(code.co_names)
    consts = list(code.co_consts)
    prefix = bytearray(prefix_raw)
    for i in range(0, len(prefix), 2):
        op, arg = prefix[i], prefix[i + 1]
        if op in _HASNAME:
            name = source.co_names[arg >> 1 if op == _LOAD_GLOBAL else arg]
            if name not in names:
                names.append(name)
            new = names.index(name)
            arg = (new << 1) | (arg & 1) if op == _LOAD_GLOBAL else new
        elif op in _HASCONST:
            value = source.co_consts[arg]
            if value == _TEMPLATE_KEY:
                value = constant
            consts.append(value)
            arg = len(consts) - 1
        else:
            continue
        if arg >= 256:
            raise _Unsupported  # would need EXTENDED_ARG, which moves the jumps
        prefix[i + 1] = arg
    units = len(prefix) // 2
    table = _splice_linetable(code.co_linetable, at // 2, units)
    if table is None:  # an entry spans RESUME and what follows: encode the table again
        positions = list(code.co_positions())
        check_at = positions[at // 2 - 1]  # where RESUME is: the def
        positions[at // 2 : at // 2] = [check_at] * units
        table = _linetable(positions, code.co_firstlineno)
    names = tuple(names)
    exceptions = _shift_exceptions(code.co_exceptiontable, at // 2, units)
    return code.replace(
        co_code=raw[:at] + bytes(prefix) + raw[at:],
        co_names=_shared.setdefault(names, names),
        co_consts=tuple(consts),
        co_stacksize=max(code.co_stacksize, source.co_stacksize),
        co_linetable=_shared.setdefault(table, table),
        co_exceptiontable=_shared.setdefault(exceptions, exceptions),
    )


# -- the location table (PEP 626 / 3.11 format) -------------------------------------------------


def _varint(value: int, out: bytearray) -> None:
    while value >= 64:
        out.append(0x40 | (value & 0x3F))
        value >>= 6
    out.append(value)


def _svarint(value: int, out: bytearray) -> None:
    _varint(((-value) << 1) | 1 if value < 0 else value << 1, out)


def _splice_linetable(table: bytes, at: int, units: int) -> bytes | None:
    """``table`` with ``units`` code units inserted at unit ``at`` (an entry boundary), on the
    line of the entry before them ("one line" entries with line delta 0: the line deltas of
    the entries after them stay right). ``None`` when ``at`` is inside an entry."""
    i = done = 0
    n = len(table)
    while done < at and i < n:
        first = table[i]
        kind = (first >> 3) & 15
        i += 1
        if kind == 14:
            for _ in range(4):
                while table[i] & 64:
                    i += 1
                i += 1
        elif kind == 13:
            while table[i] & 64:
                i += 1
            i += 1
        elif kind >= 10 and kind != 15:
            i += 2
        elif kind < 10:
            i += 1
        done += (first & 7) + 1
    if done != at:
        return None
    added = bytearray()
    while units:
        length = min(units, 8)
        added += bytes((0x80 | (10 << 3) | (length - 1), 0, 0))
        units -= length
    return table[:i] + bytes(added) + table[i:]


def _linetable(positions: list, firstlineno: int) -> bytes:
    """Encode per-code-unit ``(line, end_line, col, end_col)`` (long and no-location forms)."""
    out = bytearray()
    line = firstlineno
    i, n = 0, len(positions)
    while i < n:
        pos = positions[i]
        j = i + 1
        while j < n and j - i < 8 and positions[j] == pos:
            j += 1
        length = j - i
        start, end, col, end_col = pos
        if start is None:
            out.append(0x80 | (15 << 3) | (length - 1))
        else:
            out.append(0x80 | (14 << 3) | (length - 1))
            _svarint(start - line, out)
            line = start
            _varint((end if end is not None else start) - start, out)
            _varint(col + 1 if col is not None else 0, out)
            _varint(end_col + 1 if end_col is not None else 0, out)
        i = j
    return bytes(out)


# -- the exception table ------------------------------------------------------------------------


def _parse_exceptions(table: bytes) -> list[list[int]]:
    entries, it = [], iter(table)

    def varint(b: int) -> int:
        value = b & 63
        while b & 64:
            b = next(it)
            value = (value << 6) | (b & 63)
        return value

    for b in it:
        start = varint(b)
        size = varint(next(it))
        target = varint(next(it))
        depth_lasti = varint(next(it))
        entries.append([start, size, target, depth_lasti])
    return entries


def _emit(value: int, out: bytearray, first: bool) -> None:
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    for n, chunk in enumerate(chunks):
        byte = chunk | (64 if n < len(chunks) - 1 else 0)
        if first and n == 0:
            byte |= 128
        out.append(byte)


def _shift_exceptions(table: bytes, at: int, units: int) -> bytes:
    if not table:
        return table
    out = bytearray()
    for start, size, target, depth_lasti in _parse_exceptions(table):
        if start >= at:
            start += units
        if target >= at:
            target += units
        _emit(start, out, True)
        _emit(size, out, False)
        _emit(target, out, False)
        _emit(depth_lasti, out, False)
    return bytes(out)
