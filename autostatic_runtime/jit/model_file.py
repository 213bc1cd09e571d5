"""Saved models on disk: ``path.pdmodel``, ``path.pdiparams`` and ``path.pdmeta``.

- ``.pdmodel``: the forward Program as ProgramDesc protobuf (``static/serialize.py``).
- ``.pdiparams``: the values of its persistable variables (``params_file``, safetensors layout).
- ``.pdmeta``: JSON with the format version, the input specs (names, shapes with ``null`` for
  any size, dtypes), the outputs and how to rebuild the returned structure, and the SHA-256
  of the other two files, so a set mixed from two saves (or cut short) is detected.

Each file is written to a temporary name in the same directory and moved into place with
``os.replace``; the metadata goes last. Loading checks everything and never runs code from
the files: op types must be registered ops, values are plain data.
"""

from __future__ import annotations

import hashlib
import json
import os
import reprlib
import stat
from typing import Any

import numpy as np

from autostatic_runtime.errors import ProgramFormatError
from autostatic_runtime.jit import params_file
from autostatic_runtime.static.program import Program

__all__ = ["save_model", "read_model", "SUFFIXES", "encode_structure", "decode_structure"]

FORMAT = "autostatic.model"
VERSION = 1
SUFFIXES = (".pdmodel", ".pdiparams", ".pdmeta")
_MAX_META = 16 * 1024 * 1024
_MAX_MODEL = 2**31 - 1  # protobuf's limit for one message
_BINARY = getattr(os, "O_BINARY", 0)
_META_FIELDS = ("inputs", "outputs", "structure", "leaves", "pdmodel_sha256", "pdiparams_sha256")


def _write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``: readers see the old file or the new one, never half of one.

    The temporary file is created with mode 0666 and the process umask applied by the OS
    (as ``open(path, "wb")`` would), not ``mkstemp``'s 0600, so saved models are as readable
    as any other file the user writes.
    """
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for _ in range(100):
        tmp = os.path.join(directory, f"{base}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random names taken
        raise FileExistsError(f"cannot create a temporary file beside {path}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_model(
    path: str,
    program: Program,
    inputs: list[dict],
    outputs: list[str],
    structure: Any,
    leaves: list,
    params: dict[str, np.ndarray],
) -> None:
    """Write the three files of a model (see the module docstring)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    model = program.serialize()
    weights = params_file.dumps(params)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "inputs": inputs,
        "outputs": outputs,
        "structure": structure,
        "leaves": leaves,
        "pdmodel_sha256": hashlib.sha256(model).hexdigest(),
        "pdiparams_sha256": hashlib.sha256(weights).hexdigest(),
    }
    _write_atomic(path + ".pdiparams", weights)
    _write_atomic(path + ".pdmodel", model)
    _write_atomic(path + ".pdmeta", json.dumps(meta, indent=1).encode("utf-8"))


def _read(path: str, limit: int | None = None) -> bytes:
    """The bytes of one of a model's files (at most ``limit`` + 1). Anything but a readable
    regular file is a ProgramFormatError saying what is there: a directory, a FIFO (opened
    without blocking: reading one would wait for a writer), a device (``/dev/zero`` never
    ends), a symlink loop, a file this process may not read."""
    try:
        fd = os.open(path, os.O_RDONLY | _BINARY | _NONBLOCK)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path} does not exist; autostatic.save(layer, prefix) writes "
            f"prefix.pdmodel, prefix.pdiparams and prefix.pdmeta"
        ) from None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        with os.fdopen(fd, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise ProgramFormatError(
                    f"{path} is {_KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, not a "
                    "file written by autostatic.save"
                )
            if limit is None:
                return f.read()
            size = os.fstat(f.fileno()).st_size  # read(limit) would reserve limit bytes
            return f.read(min(size, limit) + 1)
    except OSError as exc:
        raise _unreadable(path, exc) from None


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once (POSIX)
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _unreadable(path: str, exc: OSError) -> ProgramFormatError:
    return ProgramFormatError(
        f"{path} cannot be read ({exc.strerror or type(exc).__name__}); it must be a readable "
        "file written by autostatic.save"
    )


def read_model(path: str) -> tuple[Program, dict[str, np.ndarray], dict]:
    """(program, weights, metadata) of a saved model, all checked."""
    raw = _read(path + ".pdmeta", _MAX_META)
    if len(raw) > _MAX_META:
        raise ProgramFormatError(f"{path}.pdmeta is too large to be model metadata")
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProgramFormatError(
            f"{path}.pdmeta is not valid JSON ({exc}); it is truncated or corrupt"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ProgramFormatError(f"{path}.pdmeta is not autostatic model metadata")
    version = meta.get("version")
    if type(version) is not int or version < 1:
        raise ProgramFormatError(f"{path}.pdmeta has a bad format version {reprlib.repr(version)}")
    if version > VERSION:
        raise ProgramFormatError(
            f"{path} was saved in model format version {reprlib.repr(version)}, newer than this "
            f"autostatic_runtime supports ({VERSION}); upgrade it"
        )
    missing = [f for f in _META_FIELDS if f not in meta]
    if missing:
        raise ProgramFormatError(
            f"{path}.pdmeta has no {', '.join(repr(f) for f in missing)} field; it is "
            "truncated, edited, or not written by autostatic.save"
        )
    model = _read(path + ".pdmodel", _MAX_MODEL)
    if len(model) > _MAX_MODEL:
        raise ProgramFormatError(f"{path}.pdmodel is larger than a program can be (2 GiB)")
    weights = _read(path + ".pdiparams")
    for suffix, data in ((".pdmodel", model), (".pdiparams", weights)):
        if hashlib.sha256(data).hexdigest() != meta.get(f"{suffix[1:]}_sha256"):
            raise ProgramFormatError(
                f"{path}{suffix} does not match {path}.pdmeta (its checksum differs): the "
                "file is corrupt, truncated, or from another save; save the model again"
            )
    program = Program.parse(model)
    params = params_file.loads(weights, f"{path}.pdiparams")
    _check_meta(meta, program, params, path)
    return program, params, meta


def _check_meta(meta: dict, program: Program, params: dict, path: str) -> None:
    block = program.global_block()
    inputs = meta.get("inputs")
    if not isinstance(inputs, list):
        raise ProgramFormatError(f"{path}.pdmeta: 'inputs' must be a list")
    for spec in inputs:
        if (
            not isinstance(spec, dict)
            or not isinstance(spec.get("name"), str)
            or not isinstance(spec.get("shape"), list)
            or not all(d is None or type(d) is int for d in spec["shape"])
            or not isinstance(spec.get("dtype"), str)
        ):
            raise ProgramFormatError(f"{path}.pdmeta: bad input spec {spec!r}")
        var = block.vars.get(spec["name"])
        if var is None or not var.is_data:
            raise ProgramFormatError(
                f"{path}.pdmeta: input {spec['name']!r} is not a data variable of the program"
            )
        shape = [-1 if d is None else d for d in spec["shape"]]
        if spec["dtype"] != str(var.dtype) or shape != list(var._shape):
            raise ProgramFormatError(
                f"{path}.pdmeta: input {spec['name']!r} is {spec['dtype']}{spec['shape']} but "
                f"the program declares {var.dtype}{list(var._shape)}"
            )
    outputs = meta.get("outputs")
    if not isinstance(outputs, list) or not all(
        isinstance(o, str) and o in block.vars for o in outputs
    ):
        raise ProgramFormatError(f"{path}.pdmeta: outputs {outputs!r} are not program variables")
    for v in block.vars.values():
        if not v.persistable:
            continue
        value = params.get(v.name)
        if value is None:
            raise ProgramFormatError(
                f"{path}.pdiparams has no value for the program's variable {v.name!r}"
            )
        if list(value.shape) != list(v._shape) or str(value.dtype) != str(v.dtype):
            raise ProgramFormatError(
                f"{path}.pdiparams: {v.name!r} is {value.dtype}{list(value.shape)} but the "
                f"program declares {v.dtype}{list(v._shape)}"
            )
    decode_structure(meta["structure"], meta["leaves"], len(outputs), path)


# ---- the returned structure ----------------------------------------------------------------


def encode_structure(structure: Any) -> Any:
    """JSON for a ``control_flow.flatten`` structure (namedtuples become tuples)."""
    if structure is None:
        return None
    if structure[0] == "namedtuple":
        return {"tuple": [encode_structure(s) for s in structure[2]]}
    if structure[0] == "tensor_array":  # a list appended to in a loop: loads as a list
        return {"tensor_array": str(structure[1])}
    if structure[0] is dict:
        for k, _ in structure[1]:
            if not isinstance(k, str):
                raise TypeError(f"cannot save an output dict with the non-string key {k!r}")
        return {"dict": [[k, encode_structure(s)] for k, s in structure[1]]}
    kind = "list" if structure[0] is list else "tuple"
    return {kind: [encode_structure(s) for s in structure[1]]}


def decode_structure(data: Any, leaves: Any, n_outputs: int, path: str = "model") -> Any:
    """The ``flatten`` structure back from JSON, checking it against the leaves."""
    count = [0]

    def build(s: Any, depth: int) -> Any:
        if depth > 64:
            raise ProgramFormatError(f"{path}.pdmeta: the output structure is nested too deep")
        if s is None:
            count[0] += 1
            return None
        if isinstance(s, dict) and len(s) == 1:
            ((kind, items),) = s.items()
            if kind == "tensor_array" and isinstance(items, str):
                count[0] += 1
                return ("tensor_array", items)
            if kind in ("list", "tuple") and isinstance(items, list):
                return (
                    list if kind == "list" else tuple,
                    tuple(build(x, depth + 1) for x in items),
                )
            if kind == "dict" and isinstance(items, list):
                if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                           for p in items):  # fmt: skip
                    raise ProgramFormatError(f"{path}.pdmeta: bad output dict {items!r}")
                return (dict, tuple((k, build(v, depth + 1)) for k, v in items))
        raise ProgramFormatError(f"{path}.pdmeta: bad output structure {s!r}")

    structure = build(data, 0)
    if not isinstance(leaves, list) or len(leaves) != count[0]:
        raise ProgramFormatError(f"{path}.pdmeta: the output leaves do not match the structure")
    outs = 0
    for leaf in leaves:
        if leaf == "out":
            outs += 1
        elif not (isinstance(leaf, dict) and set(leaf) == {"const"}):
            raise ProgramFormatError(f"{path}.pdmeta: bad output leaf {leaf!r}")
    if outs != n_outputs:
        raise ProgramFormatError(f"{path}.pdmeta: {outs} output leaves for {n_outputs} outputs")
    return structure
