"""``Graph``: one ONNX graph being built from a block of a Program (the lowering context).

A lowering (``lowerings/``) reads its op's operands with ``g.x(op, i)``, emits ONNX nodes with
``g.node(...)`` and writes each result to ``g.out(i)``, the name the op's output Variable gets
in the ONNX graph. Names are unique across the whole model (ONNX subgraphs see the names of
the graphs around them), so a Variable written twice (an ``assign`` to a persistable) simply
gets a second name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from autostatic_runtime import dtypes
from autostatic_runtime.errors import ExportError, format_location
from autostatic_runtime.static.program import Block, Literal, Operator, Variable

__all__ = ["Graph", "Names", "onnx_dtype", "value_info"]


def onnx_dtype(dtype: Any) -> int:
    """The ``TensorProto`` element type of an autostatic dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(str(dtypes.convert_dtype(dtype))))


def value_info(name: str, dtype: Any, shape: Any) -> onnx.ValueInfoProto:
    """A typed value; ``-1``/``None`` dims are left unknown, strings name symbolic dims."""
    dims = None if shape is None else [None if d is None or d == -1 else d for d in shape]
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), dims)


class Names:
    """Unique value names for one model (a Variable's own name when it is still free)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self._next: dict[str, int] = {}  # the next suffix to try per base name

    def fresh(self, base: str) -> str:
        name, k = base, self._next.get(base, 0)
        if k:
            name = f"{base}__{k}"
        while name in self.used:
            k += 1
            name = f"{base}__{k}"
        self._next[base] = k + 1
        self.used.add(name)
        return name


class Graph:
    """Nodes of one ONNX graph and the names the Program's Variables have in it."""

    def __init__(
        self,
        names: Names,
        opset: int,
        table: dict,
        parent: Graph | None = None,
        live: set[int] | None = None,
    ):
        self.names = names
        self.opset = opset
        self.table = table
        self.parent = parent
        self.live = live if parent is None else parent.live  # ids of the ops to lower
        self.nodes: list[onnx.NodeProto] = []
        self.bound: dict[str, str] = {}
        self._outs: list[str] = []
        self._op: Operator | None = None
        self._consts: dict[tuple, str] = {}

    # -- names ---------------------------------------------------------------------------
    def lookup(self, var: str) -> str:
        graph: Graph | None = self
        while graph is not None:
            if var in graph.bound:
                return graph.bound[var]
            graph = graph.parent
        raise KeyError(var)

    def bind(self, var: str, name: str) -> None:
        self.bound[var] = name

    def fresh(self, base: str) -> str:
        return self.names.fresh(base)

    def out(self, i: int = 0) -> str:
        """The ONNX name of output ``i`` of the op being lowered."""
        return self._outs[i]

    # -- operands ------------------------------------------------------------------------
    def x(self, op: Operator, i: int, dtype: Any = None) -> str:
        """Operand ``i`` of ``op`` (a Literal becomes a constant), cast to ``dtype`` if given."""
        v = op.inputs[i]
        if isinstance(v, Literal):
            want = dtype if dtype is not None else _literal_dtype(v.value, op)
            return self.const(v.value, want)
        name = self.lookup(v.name)
        return self.cast(name, v.dtype, dtype) if dtype is not None else name

    @staticmethod
    def is_none(op: Operator, i: int) -> bool:
        return i >= len(op.inputs) or (
            isinstance(op.inputs[i], Literal) and op.inputs[i].value is None
        )

    @staticmethod
    def shape(op: Operator, i: int) -> list[int]:
        v = op.inputs[i]
        return v.shape if isinstance(v, Variable) else list(np.shape(v.value))

    # -- nodes ---------------------------------------------------------------------------
    def node(self, op_type: str, inputs: list[str], n_out: int = 1, outputs=None, **attrs):
        """Append an ONNX node; returns its output name (or names when ``n_out`` > 1)."""
        if outputs is None:
            outputs = [self.fresh(f"{op_type.lower()}") for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, list(inputs), list(outputs), **attrs)
        if self._op is not None:
            node.name = self.fresh(f"{self._op.type}/{op_type}")
            loc = self._op.location
            if loc and loc[0]:
                node.doc_string = f"{loc[0]}:{loc[1]}"
        self.nodes.append(node)
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def const(self, value: Any, dtype: Any) -> str:
        """A constant tensor of ``dtype`` (one Constant node per distinct value and graph)."""
        array = np.asarray(value, dtype=np.dtype(str(dtypes.convert_dtype(dtype))))
        key = (array.dtype.str, array.shape, array.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self.fresh("const")
            tensor = numpy_helper.from_array(array, name)
            self.nodes.append(helper.make_node("Constant", [], [name], value=tensor))
            self._consts[key] = name
        return name

    def ints(self, values: Any) -> str:
        """A 1-D int64 constant (shapes, axes, starts...)."""
        return self.const(np.asarray(list(values), dtype=np.int64), dtypes.int64)

    def scalar(self, value: Any, dtype: Any) -> str:
        return self.const(np.asarray(value), dtype)

    def cast(self, name: str, src: Any, dst: Any) -> str:
        if dst is None or dtypes.convert_dtype(src) == dtypes.convert_dtype(dst):
            return name
        return self.node("Cast", [name], to=onnx_dtype(dst))

    def to(self, name: str, src: Any, i: int = 0) -> str:
        """Write ``name`` (of dtype ``src``) to output ``i``, cast to the output's dtype."""
        var = self._op.outputs[i]
        if dtypes.convert_dtype(src) != var.dtype:
            return self.node("Cast", [name], outputs=[self.out(i)], to=onnx_dtype(var.dtype))
        return self.node("Identity", [name], outputs=[self.out(i)])

    def reduce(self, op_type: str, data: str, axes: Any, keepdims: bool, outputs=None) -> str:
        """A Reduce* node over ``axes`` (None: all) in this opset's spelling."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.node(op_type, [data], outputs=outputs, keepdims=keep)
        as_input = op_type == "ReduceSum" or self.opset >= 18
        if as_input:
            return self.node(op_type, [data, self.ints(axes)], outputs=outputs, keepdims=keep)
        return self.node(op_type, [data], outputs=outputs, keepdims=keep, axes=list(axes))

    def unsqueeze(self, name: str, axes: Any) -> str:
        return self.node("Unsqueeze", [name, self.ints(axes)])

    def squeeze(self, name: str, axes: Any, outputs=None) -> str:
        return self.node("Squeeze", [name, self.ints(axes)], outputs=outputs)

    # -- blocks --------------------------------------------------------------------------
    def lower_block(self, block: Block, skip: set[int] = frozenset()) -> None:
        """Lower the live ops of ``block`` (but those whose ``id`` is in ``skip``)."""
        for op in block.ops:
            if id(op) not in skip and (self.live is None or id(op) in self.live):
                self.lower_op(op)

    def lower_op(self, op: Operator) -> None:
        outs = [self.fresh(v.name) for v in op.outputs]
        saved = self._op, self._outs
        self._op, self._outs = op, outs
        try:
            self.table[op.type].lower(self, op)
        except ExportError:
            raise
        except Exception as exc:  # a lowering's own gap: name the op, never a bare traceback
            loc = op.location if op.location and op.location[0] else None
            raise ExportError(
                f"cannot export the {op.type} op{format_location(loc)} to ONNX "
                f"({type(exc).__name__}: {exc})",
                loc,
            ) from exc
        finally:
            self._op, self._outs = saved
        for v, name in zip(op.outputs, outs):
            self.bind(v.name, name)

    def subgraph(self) -> Graph:
        """A graph nested in this one (an ``If`` branch, a ``Loop`` body)."""
        return Graph(self.names, self.opset, self.table, parent=self)

    def scope(self) -> Graph:
        """Names bound apart from this graph's, nodes appended to it (a block inlined)."""
        inner = Graph(self.names, self.opset, self.table, parent=self)
        inner.nodes, inner._consts = self.nodes, self._consts
        return inner

    def make(self, name: str, inputs: list, outputs: list, initializers=()) -> onnx.GraphProto:
        return helper.make_graph(self.nodes, name, inputs, outputs, list(initializers))


def _literal_dtype(value: Any, op: Operator) -> dtypes.DType:
    """A Literal's dtype: the op's output dtype for arithmetic, the other operand's for a
    comparison (``x > 0`` on a float ``x`` compares floats)."""
    others = [v.dtype for v in op.inputs if isinstance(v, Variable)]
    out = op.outputs[0].dtype if op.outputs else None
    if out is not None and out != dtypes.bool_:
        return out
    if others:
        return dtypes.scalar_result(others[0], value)
    if isinstance(value, bool):
        return dtypes.bool_
    return dtypes.int64 if isinstance(value, int) else dtypes.get_default_dtype()
