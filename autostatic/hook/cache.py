"""The import hook's on-disk cache: module code and tracing-factory code.

Files live beside the ordinary bytecode, under a tag of their own, so they never replace or
corrupt a ``.pyc`` Python itself reads::

    pkg/__pycache__/model.cpython-311.pyc                          # Python's
    pkg/__pycache__/model.cpython-311-autostatic-0.1.0.pyc         # the module, entry-checked
    pkg/__pycache__/model.cpython-311-autostatic-0.1.0-tracing.pyc # its functions' tracing
                                                                   # factories, as traced

Layout: ``MAGIC_NUMBER`` (4 bytes) ``b"ASTC"`` (``b"ASTF"`` for modules converted whole,
``b"ASTT"`` for tracing factories) (4) compiler fingerprint (8) source hash (8) payload length
(4, little endian) payload CRC-32 (4, little endian) source key: ``st_mtime_ns``, ``st_size``,
``st_ctime_ns`` (8 + 8 + 8; zero: none) payload word sum (8, see ``word_sum``) the
modification time given to the entry's file (8, ns) payload (``marshal`` of ``(warnings,
code, enabled)`` - ``enabled``: the source has ``# autostatic: enable``, so a warm import
need not read it -, with the functions' equal local-name tuples written once
(``shared_names``); or of ``{key: (reason, factory code)}``).

Both checksums change with any single-bit flip, so a damaged payload is a miss, never
different code. They are checked when the entry's file has changed since it was written: the
writer gives the file the modification time its header records (whole microseconds), and any
later write of the file gives it another, so a file still carrying it holds the bytes written
(as Python trusts a ``.pyc`` it wrote; checking costs a warm import of a fresh process a tenth
of its time). A file whose time differs - rewritten, damaged in place through a write,
restored by a tool, or on a file system that cannot keep the time - is checked: with the
CRC-32 (~2 GB/s here) until the bytes checked so far in the process would have paid NumPy's
first reduction (~80 us), then with the word sum when NumPy is loaded (~10 GB/s); the hook
never imports NumPy.

An entry is used only when every field matches: the interpreter's magic number, this
compiler (version and the files that wrote the entry: see ``fingerprint``), and the module's
source: its source key (as Python's ``.pyc``, so a warm import never reads the source, but to
the nanosecond and with the change time, which tools that restore a modification time cannot
restore on POSIX systems), else a hash of its bytes (a touched file is still a hit). A key is
recorded only for a source last changed more than ``SETTLED_NS`` before it was read: an edit
within the same tick of the file system's clock keeps the modification time, so a recent
source is recognised by its hash until it has settled (then the entry is rewritten with its
key). Anything else - truncated, corrupt, stale, other version - is a miss. Writes go to a
temporary file in the same directory and ``os.replace`` it, so concurrent processes
(pytest-xdist) never read a partial file; an unwritable directory or
``sys.dont_write_bytecode`` just skips the write.
"""

from __future__ import annotations

import _imp
import array
import importlib.util
import marshal
import os
import struct
import sys
import time
import types
import zlib

from autostatic import __version__
from autostatic.hook.shared_names import share_local_names

MARK = b"ASTC"  # a module entry: (warnings, module code, enabled)
FORCED_MARK = b"ASTF"  # a module converted whole (AUTOSTATIC_FORCE_CONVERTED=1)
TRACING_MARK = b"ASTT"  # a module's tracing factories: {key: (reason, code)}
_HEADER = 4 + 4 + 8 + 8 + 4 + 4 + 24 + 8 + 8
_WORDS = (1 << 64) - 1
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
#: a source changed less than this before it was read gets no source key: file systems keep
#: times in ticks of whole seconds (FAT: 2 s; ext3, HFS+: 1 s) or of their clock's (ext4 and
#: tmpfs: the kernel's tick, 1-10 ms; NTFS: Windows', 15.6 ms)
SETTLED_NS = 50_000_000
SETTLED_WHOLE_SECONDS_NS = 2_000_000_000  # times without a fraction of a second
_HOOK = os.path.dirname(os.path.abspath(__file__))
#: the files whose code writes a module entry (``instrument_code``, ``instrument``, the
#: shared names, this format): the entry's fingerprint stats these alone
_WRITERS = tuple(
    os.path.join(_HOOK, name)
    for name in ("bytecode.py", "entry.py", "names.py", "shared_names.py", "cache.py", "finder.py")
)
_fingerprints: dict = {}


def fingerprint(mark: bytes = MARK) -> bytes:
    """8 bytes naming the compiler that writes entries of kind ``mark``: its version and the
    size and mtime of the files that write them. A module entry depends on the hook's files
    alone (``_WRITERS``: six stats, once per process); tracing factories and modules converted
    whole on all of the compiler's source files and the runtime's ``convert_*`` modules, which
    converted code calls."""
    found = _fingerprints.get(mark)
    if found is None:
        parts = [__version__]
        if mark == MARK:
            for path in _WRITERS:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                parts.append(f"{os.path.basename(path)}:{st.st_size}:{st.st_mtime_ns}")
        else:
            parts += _compiler_files()
        found = _fingerprints[mark] = importlib.util.source_hash(";".join(parts).encode())
    return found


def _compiler_files() -> list[str]:
    root = os.path.dirname(_HOOK)
    spec = importlib.util.find_spec("autostatic_runtime")  # found, not imported
    runtime = os.path.dirname(spec.origin) if spec and spec.origin else ""
    parts = []
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
    return parts


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

    ``importlib.util.cache_from_source`` (which honours ``sys.pycache_prefix`` and the
    optimization level) with ``-autostatic-<version><tag>`` added to the cache tag.
    """
    cache_tag = sys.implementation.cache_tag
    if cache_tag is None:
        return None
    if sys.pycache_prefix is None and not sys.flags.optimize:  # its plain case, in short
        head, sep, name = source_path.rpartition(os.sep)
        stem, dot, _ = name.rpartition(".")
        if head and dot and stem and (os.altsep is None or os.altsep not in name):
            ours = f"{stem}.{cache_tag}-autostatic-{__version__}{tag}.pyc"
            return f"{head}{sep}__pycache__{sep}{ours}"
    try:
        standard = importlib.util.cache_from_source(source_path)
    except (NotImplementedError, ValueError):
        return None
    head, name = os.path.split(standard)
    ours = name.replace(f".{cache_tag}", f".{cache_tag}-autostatic-{__version__}{tag}", 1)
    return os.path.join(head, ours)


def source_hash(data: bytes) -> bytes:
    return importlib.util.source_hash(data)


def source_key(path: str) -> tuple[int, int, int]:
    """``(st_mtime_ns, st_size, st_ctime_ns)`` of the source file at ``path``."""
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size, st.st_ctime_ns


def settled(key: tuple[int, int, int], now_ns: int | None = None) -> bool:
    """Whether the file of ``key`` was last changed long enough before ``now_ns`` (a time
    taken before the file was read; default: now) that an edit after the read changes its
    times: an edit in the same tick of the file system's clock may keep them (``SETTLED_NS``,
    or ``SETTLED_WHOLE_SECONDS_NS`` for times in whole seconds)."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    changed = max(key[0], key[2])
    whole = key[0] % 1_000_000_000 == 0 and key[2] % 1_000_000_000 == 0
    return now_ns - changed >= (SETTLED_WHOLE_SECONDS_NS if whole else SETTLED_NS)


def _read(path: str, mark: bytes, digest: bytes | None, key=None, source: str | None = None):
    """``(source hash, unmarshalled payload)`` of a valid entry, or ``None``. The entry must
    be for the source hash ``digest`` or, with ``digest=None``, for a source file whose
    ``source_key`` is ``key`` (with ``source``: the file at that path, stated only when the
    entry exists). Written for the warm import, which runs it once per module: C calls, one
    read, one comparison per header field."""
    try:  # os-level calls: a third cheaper than open().read() (a short read is a miss below)
        fd = os.open(path, _READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        blob = os.read(fd, st.st_size + 1)
        written = st.st_mtime_ns
        if source is not None:
            st = os.stat(source)
            key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns)
    except OSError:
        return None
    finally:
        os.close(fd)
    prefix = _prefixes.get(mark) or _prefix(mark)
    if len(blob) < _HEADER or not blob.startswith(prefix):
        return None
    if digest is not None:
        if blob[16:24] != digest:
            return None
    elif key is None or blob[32:56] != _key_bytes(key) or blob[32:56] == _NO_KEY:
        return None
    size, crc = _SIZE_CRC.unpack_from(blob, 24)
    if len(blob) != _HEADER + size:
        return None
    payload = memoryview(blob)[_HEADER:]
    if written != _WRITTEN.unpack_from(blob, 64)[0] and not _intact(payload, crc, blob):
        return None  # (checked only when the file changed since it was written: see above)
    try:
        return blob[16:24], marshal.loads(payload)
    except Exception:  # ValueError, EOFError, TypeError, SystemError...: not our entry
        return None


def _prefix(mark: bytes) -> bytes:
    """The first 16 bytes of every entry of kind ``mark`` this compiler writes."""
    found = _prefixes[mark] = _MAGIC + mark + fingerprint(mark)
    return found


_MAGIC = importlib.util.MAGIC_NUMBER
_READ = os.O_RDONLY | _BINARY
_SIZE_CRC = struct.Struct("<II")  # payload length, payload CRC-32
_KEY = struct.Struct("<QQQ")  # the source key
_WRITTEN = struct.Struct("<q")  # the modification time the entry's file was given
_NO_KEY = bytes(24)
_prefixes: dict = {}
#: bytes left to check with the CRC-32 before the word sum pays: NumPy's first reduction in a
#: process costs what the CRC of ~160 KB costs (~80 us), later ones a fifth of the CRC's
crc_left = 160 * 1024


def _intact(payload: memoryview, crc: int, blob: bytes) -> bool:
    """Whether ``payload`` has the checksums of its header: the CRC-32 until the bytes
    checked so far would have paid NumPy's setup (as renting until the rent paid the price),
    then the word sum when NumPy is loaded (faster per byte)."""
    global crc_left
    if crc_left > 0 or sys.modules.get("numpy") is None:
        crc_left -= len(payload)
        return zlib.crc32(payload) == crc
    return word_sum(payload) == int.from_bytes(blob[56:64], "little")


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


def _set_written(fd: int, path: str, written: int) -> None:
    """Give the entry's file the modification time its header records (a file system that
    cannot keep it leaves the entry checked by its checksums at every read)."""
    try:
        os.utime(fd if os.utime in os.supports_fd else path, ns=(written, written))
    except OSError:
        pass


def _key_bytes(key: tuple[int, int, int] | None) -> bytes:
    if key is None:
        return _NO_KEY
    return _KEY.pack(key[0] & _WORDS, key[1] & _WORDS, key[2] & _WORDS)


def read_by_stat(path: str, key=None, source: str | None = None, forced: bool = False):
    """``(warnings, code, source hash, enabled)`` of the entry written for a source file whose
    ``source_key`` is ``key`` (or, with ``source``, is that file's now; the source need not be
    read: as Python's own ``.pyc``, but to the nanosecond and with the change time), or
    ``None``. ``enabled``: the module enabled itself (its ``# autostatic: enable`` line);
    ``forced``: the entry of a module converted whole."""
    found = _read(path, FORCED_MARK if forced else MARK, None, key, source)
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


def read(path: str, data: bytes, digest: bytes | None = None, forced: bool = False):
    """The cached ``(warnings, code)`` for source bytes ``data`` (whose ``source_hash`` is
    ``digest``, when the caller has it), or ``None`` on any mismatch."""
    found = _read(path, FORCED_MARK if forced else MARK, digest or source_hash(data))
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
    key=None,
    enabled: bool = False,
    forced: bool = False,
) -> bool:
    """Write a module entry atomically; ``False`` (and no file) when it cannot be written.
    ``key``: the source's ``source_key`` taken *before* ``data`` was read, if ``settled``
    (``None``: a warm import recognises the source by its hash); ``enabled``: the source
    enables itself (a warm import then need not read it at all); ``forced``: the module was
    converted whole."""
    payload = share_local_names(marshal.dumps((warnings, code, bool(enabled))))
    mark = FORCED_MARK if forced else MARK
    return _write(path, mark, digest or source_hash(data), payload, key)


def write_tracing(path: str, digest: bytes, entries: dict) -> bool:
    """Write a module's tracing factories atomically, with those another process wrote since
    (the last writer of a key wins; a lost one is only a miss)."""
    merged = dict(read_tracing(path, digest) or {})
    merged.update(entries)
    return _write(path, TRACING_MARK, digest, marshal.dumps(merged))


def _write(path: str, mark: bytes, digest: bytes, payload: bytes, key=None) -> bool:
    if sys.dont_write_bytecode:
        return False
    written = time.time_ns() // 1000 * 1000  # (whole microseconds: kept by every file system)
    blob = b"".join(
        (
            _MAGIC,
            mark,
            fingerprint(mark),
            digest,
            len(payload).to_bytes(4, "little"),
            zlib.crc32(payload).to_bytes(4, "little"),
            _key_bytes(key),
            word_sum(payload).to_bytes(8, "little"),
            _WRITTEN.pack(written),
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
            f.flush()
            _set_written(f.fileno(), tmp, written)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
