"""What the Python code generator knows about a function's own block before writing it.

A block compiled whole (block 0 of a training step: forward, backward, update) is seen at
once, which eager execution never is. ``BlockPlan`` uses that for three things the
generated code does differently from running the same ops one by one:

- **common subexpressions**: an op equal to an earlier one (same pure op, the same versions
  of the same inputs, the same attributes) is not emitted; its outputs are the earlier op's
  (a gradient rule that recomputes ``g * xhat`` the forward or another rule computed);
- **liveness**: after each op, the variables no later op reads, which the code deletes, so
  an intermediate's memory is reused by the next instead of staying until the end;
- **views**: the variables an op read that may have returned a view of them (a reshape, a
  slice), so an elementwise op is computed into an operand only when nothing else can see
  its memory (``CodeWriter._reusable``).

Only ops without sub-blocks take part in the first; reads inside a ``cond``/``while`` count
as the op's own for the others. Names are canonical: a removed op's outputs map to the kept
op's (``alias``).

    v67 = v58 * v65          # kept
    ...
    v75 = v58 * v65          # the same: not emitted, v75 reads v67
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.ops.registry import OPS
from autostatic_runtime.static.program import Literal, Variable

__all__ = ["BlockPlan"]

# ops (besides inline expressions and ops declared ``fresh``) that compute their outputs from
# their inputs and attributes alone: no effect, no random draw, no state
PURE = frozenset(
    {
        "reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "softmax", "log_softmax",
        "broadcast_reduced", "reduce_as", "reshape2", "transpose2", "squeeze2", "unsqueeze2",
        "flatten", "cast", "exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "abs", "sign",
    }
)  # fmt: skip
META = frozenset({"op_role", "side_effect"})


class BlockPlan:
    """The ops of a block to emit (equal ones removed), with liveness and views.

    Attributes:
        ops: the ops to emit, in order.
        alias: name of a removed op's output -> the kept op's output.
        dead: op index -> canonical names no later op (nor the results) reads.
        readers: canonical name -> how many of ``ops`` read it.
        viewed: canonical names some op reads that may return a view of them (any op but an
            inline expression or a single-output ``fresh`` one; a ``cond``/``while``).
    """

    def __init__(self, ops: list, results: list[str]):
        self.alias: dict[str, str] = {}
        self.ops = self._without_repeats(ops)
        self.readers: dict[str, int] = {}
        self.viewed: set[str] = set()
        last: dict[str, int] = {}
        for i, op in enumerate(self.ops):
            names = self.reads(op)
            if _may_view(op):
                self.viewed |= names
            for name in names:
                last[name] = i
                self.readers[name] = self.readers.get(name, 0) + 1
            for v in op.outputs:
                last.setdefault(v.name, i)
        keep = {self.canon(r) for r in results}
        self.dead: dict[int, list[str]] = {}
        for name, i in last.items():
            if name not in keep:
                self.dead.setdefault(i, []).append(name)

    def canon(self, name: str) -> str:
        return self.alias.get(name, name)

    def reads(self, op) -> set[str]:
        """Canonical names ``op`` reads, inside its sub-blocks too."""
        found = {self.canon(x.name) for x in op.inputs if isinstance(x, Variable)}
        for sub in op.sub_blocks():
            for inner in sub.ops:
                found |= self.reads(inner)
        return found

    def _without_repeats(self, ops: list) -> list:
        seen: dict[tuple, Any] = {}
        version: dict[str, int] = {}  # writes of a name so far (persistables are rewritten)
        kept = []
        for op in ops:
            key = self._key(op, version)
            earlier = seen.get(key) if key is not None else None
            if earlier is not None and not any(v.persistable for v in op.outputs):
                for v, e in zip(op.outputs, earlier.outputs):
                    self.alias[v.name] = self.canon(e.name)
                continue
            if key is not None:
                seen[key] = op
            for v in op.outputs:
                version[v.name] = version.get(v.name, 0) + 1
            kept.append(op)
        return kept

    def _key(self, op, version: dict) -> tuple | None:
        """What makes ``op`` equal to another (None: never merged)."""
        opdef = OPS.get(op.type)
        if opdef is None or op.sub_blocks() or any(v.persistable for v in op.outputs):
            return None
        if opdef.expr is None and not opdef.fresh and op.type not in PURE:
            return None
        inputs = []
        for x in op.inputs:
            if isinstance(x, Variable):
                name = self.canon(x.name)
                inputs.append((name, version.get(name, 0)))
            elif isinstance(x, Literal):
                inputs.append((type(x.value), x.value))
            else:
                return None
        attrs = tuple(sorted((k, v) for k, v in op.attrs.items() if k not in META))
        key = (op.type, tuple(inputs), attrs)
        try:
            hash(key)
        except TypeError:
            return None
        return key


def _may_view(op) -> bool:
    """Whether an output of ``op`` may share memory with an input (a reshape, a slice...)."""
    opdef = OPS.get(op.type)
    if opdef is None or op.sub_blocks():
        return True
    return not (opdef.expr is not None or (opdef.fresh and not opdef.multi_output))
