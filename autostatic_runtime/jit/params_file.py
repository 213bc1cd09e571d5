"""The weights file (``.pdiparams``): the safetensors layout, written and read with NumPy.

    [8 bytes: little-endian u64 N][N bytes: JSON header][raw little-endian tensor bytes]

The header maps each name to ``{"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}``
(offsets relative to the end of the header) plus ``"__metadata__"`` with the format name and
version. Reading never unpickles and never trusts the file: the header size, JSON, dtypes,
shapes, offsets (inside the file, in order, not overlapping, matching shape x itemsize) are
all checked, and anything wrong is a ``ProgramFormatError`` saying what.
"""

from __future__ import annotations

import json
import reprlib
import struct
from typing import Any

import numpy as np

from autostatic_runtime.errors import ProgramFormatError

__all__ = ["dumps", "loads", "loads_with_metadata", "FORMAT", "VERSION"]

FORMAT = "autostatic.params"
VERSION = 1
_MAX_HEADER = 64 * 1024 * 1024

_CODES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
}
_DTYPES = {code: np.dtype(name) for name, code in _CODES.items()}


def dumps(tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> bytes:
    """The file's bytes for ``name -> array`` (arrays are written little-endian, C order);
    ``metadata`` adds string entries to the header's ``__metadata__``."""
    meta = {"format": FORMAT, "version": str(VERSION), **(metadata or {})}
    header: dict[str, Any] = {"__metadata__": meta}
    chunks = []
    offset = 0
    for name, arr in tensors.items():
        arr = np.asarray(arr)
        code = _CODES.get(str(arr.dtype))
        if code is None:
            raise TypeError(f"cannot save {name!r}: dtype {arr.dtype} is not supported")
        data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": code,
            "shape": [int(d) for d in arr.shape],
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # align the data to 8 bytes, as safetensors does
    return struct.pack("<Q", len(raw)) + raw + b"".join(chunks)


def loads(data: bytes, what: str = "weights file") -> dict[str, np.ndarray]:
    """``name -> array`` from ``dumps`` bytes, or a ProgramFormatError saying what is wrong."""
    return loads_with_metadata(data, what)[0]


def loads_with_metadata(data: bytes, what: str = "weights file") -> tuple[dict, dict]:
    """``(name -> array, metadata)`` from ``dumps`` bytes (metadata: the header's
    ``__metadata__`` entries)."""
    view = memoryview(data)
    if len(view) < 8:
        raise ProgramFormatError(f"{what} is truncated ({len(view)} bytes, no header)")
    (n,) = struct.unpack("<Q", view[:8])
    if n > _MAX_HEADER or 8 + n > len(view):
        raise ProgramFormatError(
            f"{what}: header length {n} does not fit the file ({len(view)} bytes); "
            "it is truncated or not a weights file"
        )
    try:
        header = json.loads(bytes(view[8 : 8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProgramFormatError(f"{what}: the header is not valid JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ProgramFormatError(f"{what}: the header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ProgramFormatError(f"{what} is not an autostatic weights file (no format tag)")
    version = meta.get("version")
    # ASCII digits only (str.isdigit takes '²'), and few: int() refuses 4,300 digits or more
    if not isinstance(version, str) or not (version.isascii() and version.isdigit()):
        raise ProgramFormatError(f"{what}: bad format version {reprlib.repr(version)}")
    if len(version) > 9 or int(version) > VERSION:
        raise ProgramFormatError(
            f"{what} has format version {reprlib.repr(version)[1:-1]}, newer than this "
            f"autostatic_runtime supports ({VERSION}); upgrade it"
        )
    body = view[8 + n :]
    spans = []
    out = {}
    for name, entry in header.items():
        arr, span = _read_entry(name, entry, body, what)
        out[name] = arr
        spans.append(span)
    spans.sort()
    for (_b0, e0), (b1, _e1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise ProgramFormatError(f"{what}: tensors overlap in the file")
    return out, meta


def _read_entry(name: str, entry: Any, body: memoryview, what: str):
    if not isinstance(entry, dict):
        raise ProgramFormatError(f"{what}: entry {name!r} is not an object")
    code = entry.get("dtype")
    dtype = _DTYPES.get(code) if isinstance(code, str) else None  # JSON may give a list
    if dtype is None:
        raise ProgramFormatError(f"{what}: {name!r} has unknown dtype {entry.get('dtype')!r}")
    shape = entry.get("shape")
    if not isinstance(shape, list) or not all(type(d) is int and 0 <= d < 2**40 for d in shape):
        raise ProgramFormatError(f"{what}: {name!r} has a bad shape {shape!r}")
    offsets = entry.get("data_offsets")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(type(o) is int for o in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= len(body)
    ):
        raise ProgramFormatError(
            f"{what}: {name!r} has data offsets {offsets!r} outside the file "
            f"({len(body)} data bytes); it is truncated or corrupt"
        )
    count = 1
    for d in shape:
        count *= d
    begin, end = offsets
    if end - begin != count * dtype.itemsize:
        raise ProgramFormatError(
            f"{what}: {name!r} has shape {shape} ({count * dtype.itemsize} bytes) but "
            f"{end - begin} bytes of data"
        )
    arr = np.frombuffer(body[begin:end], dtype=dtype.newbyteorder("<")).reshape(shape)
    return arr.astype(dtype, copy=True), (begin, end)
