"""``rt.save(obj, path)`` / ``rt.load(path)``: state dicts and nested objects on disk, safely.

    rt.save(layer.state_dict(), "model.pdparams")
    rt.save(opt.state_dict(), "model.pdopt")
    layer.set_state_dict(rt.load("model.pdparams"))

One file in the safetensors layout (``jit/params_file.py``): every tensor or NumPy array is a
named entry, and the header's ``__metadata__`` holds ``structure``, JSON describing the
dicts, lists, tuples, strings, numbers, bools and ``None`` around them. Nothing is pickled,
so loading never runs code from the file; a truncated, corrupt or crafted file is a
``ProgramFormatError`` saying what is wrong. The file is written to a temporary name beside
``path`` and moved into place with ``os.replace``, so a crash never leaves half a file.
A weights file written by ``autostatic.save`` (``.pdiparams``) loads as ``name -> Tensor``.

As Paddle's ``paddle.io``, this module also holds the data pipeline (``Dataset``,
``DataLoader``, ...; see ``data_loader.py``) and the samplers (``BatchSampler``,
``DistributedBatchSampler``, ...; see ``samplers.py``).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from autostatic_runtime.data_loader import (
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    default_collate_fn,
)
from autostatic_runtime.errors import ProgramFormatError
from autostatic_runtime.samplers import (
    BatchSampler,
    DistributedBatchSampler,
    RandomSampler,
    Sampler,
    SequenceSampler,
)
from autostatic_runtime.tensor import Tensor

__all__ = [
    "save", "load", "Dataset", "IterableDataset", "TensorDataset", "DataLoader",
    "default_collate_fn", "Sampler", "SequenceSampler", "RandomSampler", "BatchSampler",
    "DistributedBatchSampler",
]  # fmt: skip

_MAX_DEPTH = 100


def save(obj: Any, path: str | os.PathLike, protocol: int = 4, **configs: Any) -> None:
    """Write ``obj`` (a state dict, or nested dicts/lists/tuples of tensors, NumPy arrays,
    numbers, strings and ``None``) to ``path`` (Paddle's ``paddle.save``).

    In a job of several processes only rank 0 writes; every rank may call it (and must,
    when the state is split over the processes: see ``distributed/checkpoint.py``)."""
    from autostatic_runtime.distributed.checkpoint import host_arrays, writes_here
    from autostatic_runtime.jit import params_file
    from autostatic_runtime.jit.model_file import _write_atomic

    path = os.fspath(path)
    if not path or path.endswith(os.sep):
        raise ValueError(f"save: {path!r} is a directory; give a file name like 'model.pdparams'")
    values: dict[str, Any] = {}
    structure = _encode(obj, values, 0)
    arrays = host_arrays(values)
    if not writes_here():
        return
    data = params_file.dumps(arrays, {"structure": json.dumps(structure)})
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    _write_atomic(path, data)


def load(path: str | os.PathLike, return_numpy: bool = False, **configs: Any) -> Any:
    """The object ``save`` wrote to ``path`` (tensors come back as Tensors, or NumPy arrays
    with ``return_numpy=True``; arrays saved as NumPy stay NumPy)."""
    from autostatic_runtime.jit import params_file

    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"load: {path} does not exist") from None
    arrays, meta = params_file.loads_with_metadata(data, path)
    raw = meta.get("structure")
    if raw is None:  # a weights file of autostatic.save: a flat state dict
        return {k: v if return_numpy else _tensor(v) for k, v in arrays.items()}
    if not isinstance(raw, str):
        raise ProgramFormatError(f"{path}: the structure entry is not a string")
    try:
        structure = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ProgramFormatError(f"{path}: the structure is not valid JSON ({exc})") from None
    used: set[str] = set()
    out = _decode(structure, arrays, return_numpy, used, path, 0)
    if used != set(arrays):
        raise ProgramFormatError(f"{path}: the file holds tensors its structure does not use")
    return out


def _tensor(arr: np.ndarray) -> Tensor:
    from autostatic_runtime.creation import to_tensor

    return to_tensor(arr)


def _encode(obj: Any, arrays: dict, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("save: the object is nested too deep (or refers to itself)")
    if isinstance(obj, Tensor):
        key = str(len(arrays))
        arrays[key] = obj  # made a host array by ``save`` (gathered where it is split)
        return {"tensor": key}
    if isinstance(obj, np.ndarray):
        key = str(len(arrays))
        arrays[key] = obj
        return {"ndarray": key}
    if isinstance(obj, np.generic):
        obj = obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (bool, int, float, str))):
                raise TypeError(f"save: dict key {k!r} must be a string, number, bool or None")
            items.append([k, _encode(v, arrays, depth + 1)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, arrays, depth + 1) for v in obj]}
    raise TypeError(
        f"save: cannot save a {type(obj).__name__}; save tensors, NumPy arrays, numbers, "
        "strings, None and dicts/lists/tuples of them (e.g. layer.state_dict())"
    )


def _decode(s: Any, arrays: dict, numpy: bool, used: set, path: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ProgramFormatError(f"{path}: the structure is nested too deep")
    if not (isinstance(s, dict) and len(s) == 1):
        raise ProgramFormatError(f"{path}: bad structure entry {str(s)[:80]!r}")
    ((kind, body),) = s.items()
    if kind in ("tensor", "ndarray"):
        if not isinstance(body, str) or body not in arrays:
            raise ProgramFormatError(f"{path}: the structure names a missing tensor {body!r}")
        used.add(body)
        return arrays[body] if numpy or kind == "ndarray" else _tensor(arrays[body])
    if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
        return body
    if kind in ("list", "tuple") and isinstance(body, list):
        items = [_decode(v, arrays, numpy, used, path, depth + 1) for v in body]
        return items if kind == "list" else tuple(items)
    if kind == "dict" and isinstance(body, list):
        out = {}
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2) or isinstance(pair[0], (list, dict)):
                raise ProgramFormatError(f"{path}: bad dict entry {str(pair)[:80]!r}")
            out[pair[0]] = _decode(pair[1], arrays, numpy, used, path, depth + 1)
        return out
    raise ProgramFormatError(f"{path}: bad structure entry {str(s)[:80]!r}")
