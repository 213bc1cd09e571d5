"""``TracedLayer``: a static program recorded from one eager run (Paddle's
``paddle.jit.TracedLayer``), with no source conversion.

    outs, traced = autostatic.TracedLayer.trace(layer, inputs=[x])
    (y,) = traced([x2])                        # runs the recorded program
    traced.save_inference_model("out/model")   # autostatic.load("out/model") runs it
    autostatic.save(traced, "out/model")       # the same; autostatic.onnx.export too

``trace`` runs ``layer(*inputs)`` eagerly, as usual, while a recording dispatch appends each
op it applies to a Program as well: a tensor is known by its array (ops never mutate arrays,
and an in-place op rebinds its tensor to a new one), the inputs become ``data`` variables of
their exact shapes, and tensors made elsewhere (parameters, buffers, constants) are captured as
persistable variables. Python control flow therefore takes the path these inputs take and is
frozen there; use ``to_static`` for programs whose branches depend on the data. The returned
outputs are the eager ones. Only ops called by the tracing thread are recorded.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import autostatic_runtime as rt
from autostatic_runtime.dispatch import eager_apply
from autostatic_runtime.jit.model_file import encode_structure, save_model
from autostatic_runtime.jit.translated_layer import TranslatedLayer
from autostatic_runtime.ops import registry
from autostatic_runtime.static import builder
from autostatic_runtime.static.control_flow import flatten
from autostatic_runtime.static.program import Program, Variable
from autostatic_runtime.tensor import Tensor

__all__ = ["TracedLayer"]


class _Recorder:
    """The dispatch used while tracing: run the op eagerly, append it to ``program`` too."""

    def __init__(self, program: Program):
        self.program = program
        self.vars: dict[int, Variable] = {}  # id(array) -> the variable holding it
        self.alive: list = []  # the arrays, so their ids stay unique while tracing
        self.thread = threading.get_ident()
        self.previous = registry._dispatch[0]

    def bind(self, tensor: Tensor, var: Variable) -> None:
        self.vars[id(tensor._data)] = var
        self.alive.append(tensor._data)

    def var_of(self, value: Any) -> Any:
        if isinstance(value, Tensor):
            return self.vars.get(id(value._data), value)  # unknown tensors are captured
        return value

    def __call__(self, op, inputs, attrs):
        if threading.get_ident() != self.thread:
            return self.previous(op, inputs, attrs)
        result = eager_apply(op, inputs, attrs)
        saved = builder._main[0]
        builder._main[0] = self.program
        try:
            outs = builder.static_apply(op, tuple(self.var_of(v) for v in inputs), attrs)
        finally:
            builder._main[0] = saved
        if op.multi_output:
            for t, v in zip(result, outs):
                self.bind(t, v)
        else:
            self.bind(result, outs)
        return result


class TracedLayer:
    """A program recorded from one eager call of a layer; call it with a list of inputs."""

    def __init__(self, program: Program, inputs: list, outputs: list, structure: Any):
        self._program = program
        self._inputs = inputs
        self._outputs = outputs
        self._structure = structure
        self._layer = TranslatedLayer(
            program, self._params(program), self._meta(inputs, outputs, structure), "TracedLayer"
        )

    @staticmethod
    def trace(layer: Any, inputs: Any) -> tuple[Any, TracedLayer]:
        """Run ``layer(*inputs)`` eagerly, recording its ops; returns ``(outputs, traced)``.

        Args:
            layer: an ``rt.nn.Layer`` (or any callable taking tensors).
            inputs: a tensor or a list/tuple of tensors.
        """
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if not all(isinstance(t, Tensor) for t in inputs):
            raise TypeError("TracedLayer.trace: inputs must be tensors (or a list of them)")
        if not rt.in_dynamic_mode():
            raise RuntimeError("TracedLayer.trace runs the layer eagerly; call rt.disable_static()")
        program = Program()
        recorder = _Recorder(program)
        data = []
        with builder.program_guard(program, Program()):
            for i, t in enumerate(inputs):
                var = builder.data(f"input_{i}", list(t.shape), t.dtype)
                recorder.bind(t, var)
                data.append(var)
        registry._dispatch[0] = recorder
        try:
            outputs = layer(*inputs)
        finally:
            registry._dispatch[0] = recorder.previous
        leaves, structure = flatten(outputs)
        fetch = []
        with builder.program_guard(program, Program()):
            for leaf in leaves:
                if not isinstance(leaf, Tensor):
                    raise TypeError(
                        f"TracedLayer.trace: the layer returned a {type(leaf).__name__}; "
                        "return tensors (or lists, tuples, dicts of them)"
                    )
                var = recorder.var_of(leaf)
                fetch.append(var if isinstance(var, Variable) else builder.capture(program, var))
        return outputs, TracedLayer(program, data, fetch, structure)

    @property
    def program(self) -> Program:
        """The recorded program."""
        return self._program

    @property
    def input_spec(self) -> list:
        """The InputSpecs of the recorded inputs (their exact shapes and dtypes)."""
        return self._layer.input_spec

    def __call__(self, inputs: Any) -> list:
        """Run the program on ``inputs`` (a tensor or list of tensors, shaped as traced);
        returns the list of output tensors, as Paddle's ``TracedLayer`` does."""
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        leaves, _ = flatten(self._layer(*inputs))
        return leaves

    def set_strategy(self, build_strategy: Any = None, exec_strategy: Any = None) -> None:
        """Accepted for Paddle compatibility (the executor has no strategies to set)."""

    def save_inference_model(
        self, path: str | os.PathLike, feed: list | None = None, fetch: list | None = None
    ) -> None:
        """Write the program for inference at ``path`` (``.pdmodel``, ``.pdiparams``,
        ``.pdmeta``; ``autostatic.load(path)`` runs it). ``feed``/``fetch`` pick inputs and
        outputs by index (default: all; with ``fetch`` the model returns a list)."""
        from autostatic_runtime.static.inference_model import prune_program

        inputs = self._inputs if feed is None else [self._inputs[i] for i in feed]
        outputs = self._outputs if fetch is None else [self._outputs[i] for i in fetch]
        structure = self._structure if fetch is None else (list, tuple(None for _ in outputs))
        program = prune_program(
            self._program.clone(for_test=True),
            [v.name for v in inputs],
            [v.name for v in outputs],
        )
        meta = self._meta(inputs, outputs, structure)
        params = {
            name: value
            for name, value in self._params(self._program).items()
            if name in program.global_block().vars
        }
        save_model(
            os.fspath(path),
            program,
            meta["inputs"],
            meta["outputs"],
            meta["structure"],
            meta["leaves"],
            params,
        )

    @staticmethod
    def _params(program: Program) -> dict:
        return {
            name: rt.backends.backend_of(t._data).to_numpy(t._data)
            for name, t in builder.captured_values(program).items()
        }

    @staticmethod
    def _meta(inputs: list, outputs: list, structure: Any) -> dict:
        return {
            "inputs": [
                {"name": v.name, "shape": list(v._shape), "dtype": str(v.dtype)} for v in inputs
            ],
            "outputs": [v.name for v in outputs],
            "structure": encode_structure(structure),
            "leaves": ["out"] * len(outputs),
        }
