"""Paddle's ``paddle.utils`` helpers that model code calls: nested structures
(``map_structure``, ``flatten``, ``pack_sequence_as``) and ``unique_name``.

    caches = rt.utils.map_structure(lambda t: t[:, :1], caches)   # a list of dicts of tensors
"""

from __future__ import annotations

import contextlib
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from autostatic_runtime.nn import parameter as _parameter

__all__ = ["map_structure", "flatten", "pack_sequence_as", "unique_name"]


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict))


def _items(value: Any) -> list:
    """The children of a list, tuple or dict (a dict's in sorted key order, as Paddle's)."""
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(nest: Any) -> list:
    """The leaves of a nest of lists, tuples and dicts (dicts by sorted key), in order."""
    if not _is_sequence(nest):
        return [nest]
    return [leaf for child in _items(nest) for leaf in flatten(child)]


def _rebuild(like: Any, children: list) -> Any:
    if isinstance(like, dict):
        by_key = dict(zip(sorted(like), children))
        return type(like)((k, by_key[k]) for k in like)
    if isinstance(like, tuple) and hasattr(like, "_fields"):  # a namedtuple
        return type(like)(*children)
    return type(like)(children)


def pack_sequence_as(structure: Any, flat_sequence: list) -> Any:
    """``flat_sequence`` put back into the shape of ``structure`` (``flatten``'s inverse)."""
    leaves = iter(flat_sequence)

    def build(s: Any) -> Any:
        if not _is_sequence(s):
            return next(leaves)
        return _rebuild(s, [build(c) for c in _items(s)])

    packed = build(structure)
    if next(leaves, _END) is not _END:
        raise ValueError(
            f"pack_sequence_as: {len(flat_sequence)} values for a structure of "
            f"{len(flatten(structure))} leaves"
        )
    return packed


_END = object()


def map_structure(func: Callable, *structure: Any) -> Any:
    """``func`` applied to the leaves of one or more nests of the same shape, in that shape
    (Paddle's ``paddle.utils.map_structure``)."""
    flat = [flatten(s) for s in structure]
    if len({len(f) for f in flat}) > 1:
        raise ValueError("map_structure: the structures have different numbers of leaves")
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flat)])


@contextlib.contextmanager
def _guard(new_generator: Any = None) -> Iterator[None]:
    """Names generated inside start from ``_0`` again (parameters of a model built twice
    get the same names); the previous counters come back after."""
    saved = dict(_parameter._name_counters)
    _parameter._name_counters.clear()
    try:
        yield
    finally:
        _parameter._name_counters.clear()
        _parameter._name_counters.update(saved)


def _switch(new_generator: Any = None) -> dict:
    old = defaultdict(itertools.count, _parameter._name_counters)
    _parameter._name_counters.clear()
    return old


unique_name = SimpleNamespace(generate=_parameter.unique_name, guard=_guard, switch=_switch)
