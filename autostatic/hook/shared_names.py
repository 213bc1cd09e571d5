"""Marshalled code with the local-name tuples of equal functions written once.

Python's compiler gives functions with the same local names one ``co_localsplusnames`` tuple,
which ``marshal`` then writes once and refers to after that. ``code.replace()`` (how
``bytecode.py`` puts entry checks in) always builds a new tuple, so every function of a
module compiled by the hook carried its own copy: for a module of 40 functions with 45
locals each, 9 KiB more to read and 40 more tuples to build on every warm import.

``share_local_names(payload)`` rewrites a ``marshal.dumps`` result (format 4, as CPython 3.11
writes code objects) so that a names tuple equal to one written before is a reference to
it: the first one gets the reference flag, and every reference after it is renumbered. Only
tuples whose items are all references to strings written before are replaced (dropping one
drops no object another reference could name). The result is used only if ``marshal.loads``
gives code equal to the original (``code == code`` compares instructions, constants, names
and tables); otherwise, or on anything unexpected, the payload is returned as it was.
"""

from __future__ import annotations

import marshal
import struct
import sys

_FLAG_REF = 0x80
_INT = struct.Struct("<i")
_SIZES = {"i": 4, "g": 8, "y": 16}  # int32, binary float, binary complex


class _Unexpected(Exception):
    pass


class _Rewriter:
    """One pass over a marshal stream, copying it with the names tuples shared."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0
        self.out = bytearray()
        self.renumbered: list[int] = []  # old reference index -> new one
        self.strings: list = []  # old reference index -> the str it names (else None)
        self.count = 0  # references the output has so far
        self.shared: dict[tuple, int] = {}  # names tuple -> its new reference index

    # -- reading ----------------------------------------------------------------------------
    def _take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise _Unexpected("truncated")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def _int(self) -> int:
        return _INT.unpack(self._take(4))[0]

    def _reserve(self, flagged: bool, value=None) -> None:
        if flagged:
            self.renumbered.append(self.count)
            self.strings.append(value)
            self.count += 1

    # -- copying ----------------------------------------------------------------------------
    def copy(self):
        """Copy one object; returns its value for strings and tuples of strings."""
        start = self.pos
        code = self._take(1)[0]
        flagged, kind = bool(code & _FLAG_REF), chr(code & ~_FLAG_REF)
        if kind == "r":
            old = self._int()
            if old >= len(self.renumbered):
                raise _Unexpected("reference ahead")
            self.out += b"r" + _INT.pack(self.renumbered[old])
            return _Ref(self.strings[old])
        if kind in "0NFTS.":
            self.out += self.data[start : self.pos]
            return None
        if kind in "iglyfx":  # numbers: fixed sizes, 15-bit digits, or text (complex: two)
            if kind == "l":
                self._take(2 * abs(self._int()))
            elif kind in "fx":
                for _ in range(1 + (kind == "x")):
                    self._take(self._take(1)[0])
            else:
                self._take(_SIZES[kind])
            self._reserve(flagged)
            self.out += self.data[start : self.pos]
            return None
        if kind in "stuaAzZ":
            n = self._take(1)[0] if kind in "zZ" else self._int()
            raw = self._take(n)
            if kind == "s":
                value = None
            elif kind in "tu":  # as marshal writes str: lone surrogates pass
                value = raw.decode("utf-8", "surrogatepass")
            else:
                value = raw.decode("latin-1")
            self._reserve(flagged, value)
            self.out += self.data[start : self.pos]
            return value
        if kind in "()[<>":
            n = self._take(1)[0] if kind == ")" else self._int()
            self._reserve(flagged)
            self.out += self.data[start : self.pos]
            return self._items(n, kind in "()")
        if kind == "{":
            self._reserve(flagged)
            self.out += self.data[start : self.pos]
            while self.data[self.pos : self.pos + 1] != b"0":
                self.copy()
                self.copy()
            self.out += self._take(1)
            return None
        if kind == "c":
            self._reserve(flagged)
            self.out += self.data[start : self.pos] + self._take(5 * 4)
            for _ in range(3):  # instructions, constants, names
                self.copy()
            self._names()
            for _ in range(4):  # local kinds, file name, name, qualified name
                self.copy()
            self.out += self._take(4)  # first line
            self.copy()  # location table
            self.copy()  # exception table
            return None
        raise _Unexpected(f"type {kind!r}")

    def _items(self, n: int, keep: bool):
        values, plain = [], keep
        for _ in range(n):
            value = self.copy()
            if isinstance(value, _Ref) and isinstance(value.value, str):
                values.append(value.value)
            else:
                plain = False
        return _Names(tuple(values)) if plain else None

    def _names(self) -> None:
        """Copy a code object's local names, or refer to an equal tuple written before."""
        at, count = len(self.out), self.count
        found = self.copy()
        if not isinstance(found, _Names) or self.count != count:
            return  # it (or an item) defines a reference: keep the tuple as written
        index = self.shared.get(found.names)
        if index is not None:  # written before: a reference to it
            del self.out[at:]
            self.out += b"r" + _INT.pack(index)
            return
        # the first of its kind: flag it; it takes the next number (its items defined none)
        self.out[at] |= _FLAG_REF
        self.shared[found.names] = count
        self.count += 1


class _Ref:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Names:
    __slots__ = ("names",)

    def __init__(self, names: tuple):
        self.names = names


def share_local_names(payload: bytes) -> bytes:
    """``payload`` (a ``marshal.dumps`` result) with equal local-name tuples written once, or
    ``payload`` itself when that changes nothing or cannot be done exactly."""
    if sys.version_info[:2] != (3, 11):
        return payload
    try:
        rewriter = _Rewriter(payload)
        rewriter.copy()
        if rewriter.pos != len(payload) or not rewriter.shared:
            return payload
        shared = bytes(rewriter.out)
        if len(shared) >= len(payload) or marshal.loads(shared) != marshal.loads(payload):
            return payload
        return shared
    except Exception:  # noqa: BLE001 - any surprise: the payload as marshal wrote it
        return payload
