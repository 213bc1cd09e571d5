"""The import hook's on-disk cache: module code and tracing-factory code.

Files live beside the ordinary bytecode, under a tag of their own, so they never replace or
corrupt a ``.pyc`` Python itself reads::

    pkg/__pycache__/model.cpython-311.pyc                          # Python's
    pkg/__pycache__/model.cpython-311-autostatic-0.1.0.pyc         # the module, entry-checked
    pkg/__pycache__/model.cpython-311-autostatic-0.1.0-tracing.pyc # its functions' tracing
                                                                   # factories, as traced

Layout: ``MAGIC_NUMBER`` (4 bytes) ``b"ASTC"`` (``b"ASTT"`` for tracing factories) (4)
compiler fingerprint (8) source hash (8) payload length (4, little endian) payload CRC-32 (4,
little endian) source ``st_mtime_ns`` and ``st_size`` (8 + 8) payload word sum (8, see
``word_sum``) payload (``marshal`` of ``(warnings, code, enabled)`` - ``enabled``: the source
has ``# autostatic: enable``, so a warm import need not read it -, with the functions' equal
local-name tuples written once (``shared_names``); or of ``{key: (reason, factory code)}``).
Both checksums change with any single-bit flip, so a damaged payload is a miss,
never different code; a read checks the word sum when NumPy is loaded (4 us for 90 KiB) and
the CRC otherwise (20 us: a sixth of a plain import). An entry is
used only when every field matches: the interpreter's magic number, this compiler (version and
its own source files, so an edited transformer invalidates old entries), and the module's
source: its modification time to the nanosecond and size (as Python's ``.pyc``, so a warm
import never reads the source), else a hash of its bytes (a touched file is still a hit). Anything
else - truncated, corrupt, stale, other version - is a miss. Writes go to a temporary file in
the same directory and ``os.replace`` it, so concurrent processes (pytest-xdist) never read a
partial file; an unwritable directory or ``sys.dont_write_bytecode`` just skips the write.
"""

from __future__ import annotations

import _imp
import array
import importlib.util
import marshal
import os
import sys
import types
import zlib

from autostatic import __version__
from autostatic.hook.shared_names import share_local_names

MARK = b"ASTC"  # a module entry: (warnings, module code)
TRACING_MARK = b"ASTT"  # a module's tracing factories: {key: (reason, code)}
_HEADER = 4 + 4 + 8 + 8 + 4 + 4 + 8 + 8 + 8
_WORDS = (1 << 64) - 1
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
_fingerprint: bytes | None = None


def fingerprint() -> bytes:
    """8 bytes naming this compiler: its version and the size and mtime of its source files,
    and of the runtime's ``convert_*`` modules, which converted code calls."""
    global _fingerprint
    if _fingerprint is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        spec = importlib.util.find_spec("autostatic_runtime")  # found, not imported
        runtime = os.path.dirname(spec.origin) if spec and spec.origin else ""
        parts = [__version__]
        dirs = [(sub, os.path.join(root, sub)) for sub in ("", "hook", "pyct", "transformers")]
        for sub, folder in dirs + [("runtime", runtime)]:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(".py") and (
                    sub != "runtime" or entry.name.startswith("convert_")
                ):
                    st = entry.stat()
                    parts.append(f"{sub}/{entry.name}:{st.st_size}:{st.st_mtime_ns}")
        _fingerprint = importlib.util.source_hash(";".join(parts).encode())
    return _fingerprint


def relocate(code: types.CodeType, path: str) -> types.CodeType:
    """``code`` read from the cache, naming ``path``: as Python's loader, its code objects get
    the module's current file name (the project may have moved or been copied with its
    ``__pycache__``), and so do the source locations converted code passes to the runtime
    (``(filename, line, name)`` constants, which name the user's file in error messages)."""
    old = code.co_filename
    _imp._fix_co_filename(code, path)
    if old == path:
        return code
    return _relocated(code, old, path)


def _relocated(code: types.CodeType, old: str, new: str) -> types.CodeType:
    consts = tuple(_relocated_const(c, old, new) for c in code.co_consts)
    if all(a is b for a, b in zip(consts, code.co_consts)):
        return code
    return code.replace(co_consts=consts)


def _relocated_const(value, old: str, new: str):
    if type(value) is types.CodeType:
        return _relocated(value, old, new)
    if type(value) is tuple and value:
        items = tuple(_relocated_const(v, old, new) for v in value)
        if (
            len(value) == 3 and type(value[0]) is str and value[0] == old and type(value[1]) is int
        ):  # a location: (filename, line, name)
            items = (new,) + items[1:]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items
    return value


def cache_path(source_path: str, tag: str = "") -> str | None:
    """Where the converted code of ``source_path`` is cached (``None``: no cache possible).

    Built from ``importlib.util.cache_from_source`` (which honours ``sys.pycache_prefix`` and
    the optimization level) by adding ``-autostatic-<version><tag>`` to the cache tag.
    """
    key = (source_path, tag, sys.pycache_prefix, sys.flags.optimize)
    found = _paths.get(key, _paths)
    if found is not _paths:
        return found
    cache_tag = sys.implementation.cache_tag
    if cache_tag is None:
        return None
    try:
        standard = importlib.util.cache_from_source(source_path)
    except (NotImplementedError, ValueError):
        return None
    head, name = os.path.split(standard)
    ours = name.replace(f".{cache_tag}", f".{cache_tag}-autostatic-{__version__}{tag}", 1)
    if len(_paths) > 4096:
        _paths.clear()
    found = _paths[key] = os.path.join(head, ours)
    return found


_paths: dict = {}  # cache_path's answers (a module's path is asked for at find and at load)


def source_hash(data: bytes) -> bytes:
    return importlib.util.source_hash(data)


def _read(path: str, mark: bytes, digest: bytes | None, stat=None, source: str | None = None):
    """The unmarshalled payload of a valid entry, or ``None``. The entry must be for the
    source hash ``digest`` or, with ``digest=None``, for a source file whose
    ``(st_mtime_ns, st_size)`` is ``stat`` (with ``source``: the file at that path, stated
    only when the entry exists)."""
    try:  # os-level calls: a third cheaper than open().read() (a short read is a miss below)
        fd = os.open(path, os.O_RDONLY | _BINARY)
    except OSError:
        return None
    try:
        blob = os.read(fd, os.fstat(fd).st_size + 1)
        if source is not None:
            st = os.stat(source)
            stat = (st.st_mtime_ns, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(blob) < _HEADER:
        return None
    if blob[:4] != importlib.util.MAGIC_NUMBER or blob[4:8] != mark or blob[8:16] != fingerprint():
        return None
    if digest is not None:
        if blob[16:24] != digest:
            return None
    elif stat is None or blob[32:48] != _stat_bytes(stat):
        return None
    size = int.from_bytes(blob[24:28], "little")
    if len(blob) != _HEADER + size:
        return None
    payload = memoryview(blob)[_HEADER:]
    if sys.modules.get("numpy") is not None:
        if word_sum(payload) != int.from_bytes(blob[48:56], "little"):
            return None
    elif zlib.crc32(payload) != int.from_bytes(blob[28:32], "little"):
        return None
    try:
        return blob[16:24], marshal.loads(payload)
    except Exception:  # ValueError, EOFError, TypeError, SystemError...: not our entry
        return None


def word_sum(payload) -> int:
    """The sum of ``payload``'s little-endian 64-bit words (the last one zero-padded) modulo
    2**64: one NumPy reduction when NumPy is loaded (the hook never imports it), else Python."""
    whole = len(payload) // 8 * 8
    total = int.from_bytes(payload[whole:], "little")
    np = sys.modules.get("numpy")
    if np is not None:
        words = np.frombuffer(payload, dtype="<u8", count=whole // 8)
        return (int(words.sum(dtype=np.uint64)) + total) & _WORDS
    words = array.array("Q")  # in the machine's byte order
    words.frombytes(memoryview(payload)[:whole])
    if sys.byteorder == "big":
        words.byteswap()
    return (sum(words) + total) & _WORDS


def _stat_bytes(stat: tuple[int, int] | None) -> bytes:
    if stat is None:
        return bytes(16)
    mtime_ns, size = stat
    return (mtime_ns & (1 << 64) - 1).to_bytes(8, "little") + (size & (1 << 64) - 1).to_bytes(
        8, "little"
    )


def read_by_stat(path: str, stat: tuple[int, int] | None = None, source: str | None = None):
    """``(warnings, code, source hash, enabled)`` of the entry written for a source file whose
    ``(st_mtime_ns, st_size)`` is ``stat`` (or, with ``source``, is that file's now; the source
    need not be read: as Python's own ``.pyc``, but to the nanosecond), or ``None``.
    ``enabled``: the module enabled itself (its ``# autostatic: enable`` line)."""
    found = _read(path, MARK, None, stat, source)
    if found is None:
        return None
    digest, value = found
    checked = _module_entry(value)
    return None if checked is None else (checked[0], checked[1], digest, checked[2])


def _module_entry(found):
    if not isinstance(found, tuple) or len(found) != 3:
        return None
    warnings, code, enabled = found
    if (
        not isinstance(code, types.CodeType)
        or not isinstance(warnings, tuple)
        or type(enabled) is not bool
    ):
        return None
    return warnings, code, enabled


def read(path: str, data: bytes, digest: bytes | None = None):
    """The cached ``(warnings, code)`` for source bytes ``data`` (whose ``source_hash`` is
    ``digest``, when the caller has it), or ``None`` on any mismatch."""
    found = _read(path, MARK, digest or source_hash(data))
    entry = None if found is None else _module_entry(found[1])
    return None if entry is None else entry[:2]


def read_tracing(path: str, digest: bytes) -> dict | None:
    """The tracing factories cached for a module whose source hash is ``digest``:
    ``{key: (reason or None, factory code)}``, or ``None`` on any mismatch."""
    found = _read(path, TRACING_MARK, digest)
    if found is None or not isinstance(found[1], dict):
        return None
    found = found[1]
    for value in found.values():
        if not (
            isinstance(value, tuple)
            and len(value) == 2
            and isinstance(value[1], types.CodeType)
            and (value[0] is None or isinstance(value[0], str))
        ):
            return None
    return found


def write(
    path: str,
    data: bytes,
    warnings: tuple,
    code: types.CodeType,
    digest=None,
    stat=None,
    enabled: bool = False,
) -> bool:
    """Write a module entry atomically; ``False`` (and no file) when it cannot be written.
    ``stat``: the source's ``(st_mtime_ns, st_size)`` taken *before* ``data`` was read;
    ``enabled``: the source enables itself (a warm import then need not read it at all)."""
    payload = share_local_names(marshal.dumps((warnings, code, bool(enabled))))
    return _write(path, MARK, digest or source_hash(data), payload, stat)


def write_tracing(path: str, digest: bytes, entries: dict) -> bool:
    """Write a module's tracing factories atomically, with those another process wrote since
    (the last writer of a key wins; a lost one is only a miss)."""
    merged = dict(read_tracing(path, digest) or {})
    merged.update(entries)
    return _write(path, TRACING_MARK, digest, marshal.dumps(merged))


def _write(path: str, mark: bytes, digest: bytes, payload: bytes, stat=None) -> bool:
    if sys.dont_write_bytecode:
        return False
    blob = b"".join(
        (
            importlib.util.MAGIC_NUMBER,
            mark,
            fingerprint(),
            digest,
            len(payload).to_bytes(4, "little"),
            zlib.crc32(payload).to_bytes(4, "little"),
            _stat_bytes(stat),
            word_sum(payload).to_bytes(8, "little"),
            payload,
        )
    )
    directory = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666)
    except OSError:  # read-only directory, a file where the directory should be, ...
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
