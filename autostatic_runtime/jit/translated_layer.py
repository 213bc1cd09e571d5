"""``load``: a saved model back as a callable layer, without the model's source or the compiler.

    layer = autostatic_runtime.jit.load("out/model")     # or autostatic.load
    y = layer(x)                                         # inputs checked against the specs

The program runs as one ``run_program`` op on the device of its inputs; parameters are
``Parameter``s of the layer, so a loaded model can also be fine-tuned (``loss.backward()``
reaches them).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from autostatic_runtime import backends, dtypes
from autostatic_runtime.errors import AutostaticError, ProgramFormatError, is_raised_again
from autostatic_runtime.jit.model_file import decode_structure, read_model
from autostatic_runtime.jit.run_program import ProgramRunner
from autostatic_runtime.nn.layer.layers import Layer
from autostatic_runtime.nn.parameter import Parameter
from autostatic_runtime.static.compiler import get_compiler
from autostatic_runtime.static.control_flow import unflatten
from autostatic_runtime.static.input_spec import InputSpec
from autostatic_runtime.static.program import Program
from autostatic_runtime.static.verify import (
    DEFAULT_MAX_LOOP_ITERATIONS,
    check_sizes,
    loop_limit,
)
from autostatic_runtime.static.verify import memory_budget as memory_budget_of
from autostatic_runtime.tensor import Tensor

__all__ = [
    "load", "TranslatedLayer", "InputMismatchError", "INFER_MODEL_SUFFIX", "INFER_PARAMS_SUFFIX",
    "INFER_PARAMS_INFO_SUFFIX",
]  # fmt: skip

# the files of a saved model, by Paddle's names (``.pdmeta`` holds what Paddle keeps in
# ``.pdiparams.info`` and more; no file of that last name is written)
INFER_MODEL_SUFFIX = ".pdmodel"
INFER_PARAMS_SUFFIX = ".pdiparams"
INFER_PARAMS_INFO_SUFFIX = ".pdiparams.info"


class InputMismatchError(AutostaticError, ValueError):
    """An input of a loaded model does not match its saved spec (count, rank, dtype, dim)."""


def load(
    path: str,
    *,
    max_loop_iterations: int | None = DEFAULT_MAX_LOOP_ITERATIONS,
    memory_budget: int | None = None,
    backend: str | None = None,
) -> TranslatedLayer:
    """The model saved at ``path`` (the prefix given to ``autostatic.save``) as a layer.

    Args:
        path: the prefix given to ``autostatic.save``.
        max_loop_iterations: a ``while`` op of the model that runs more iterations than this
            (default 1,000,000) raises an ``ExecutionError`` naming the op and its source line,
            so a model from an untrusted source cannot loop forever; ``None``: no limit.
        memory_budget: bytes one value of the program may take (default 4 GiB, or
            ``AUTOSTATIC_MEMORY_BUDGET``); a declared or inferred size above it is a
            ``ProgramFormatError`` at load, before anything is allocated.
        backend: the block compiler running the model: None (the default executor) or
            ``"xla"`` (one ``jax.jit`` computation; needs the ``xla`` extra).
    """
    limit = loop_limit(max_loop_iterations)
    budget = memory_budget_of(memory_budget)
    program, params, meta = read_model(str(path))
    check_sizes(program, budget, f"{path}.pdmodel")
    program.max_loop_iterations = limit
    return TranslatedLayer(program, params, meta, where=f"{path}.pdmodel", backend=backend)


class TranslatedLayer(Layer):
    """A loaded static program as a layer: ``layer(*inputs)`` runs it."""

    def __init__(
        self,
        program: Program,
        params: dict[str, np.ndarray],
        meta: dict,
        where: str = "program",
        backend: str | None = None,
    ):
        super().__init__()
        compiler = get_compiler(backend)  # outside _checked: a missing JAX is no format error
        self._program = program
        self._where = where
        host = backends.current_backend()
        block = program.global_block()
        values: dict[str, Tensor] = {}
        for name, var in block.vars.items():
            if not var.persistable:
                continue
            data = host.from_numpy(params[name])
            key = name.replace(".", "_")
            if getattr(var, "trainable", False):
                t = Parameter(data, name=name)
                self._parameters[key] = t
            else:
                t = Tensor._rebuild(data, None, 0)
                t.name, t.persistable = name, True
                self._buffers[key] = t
            values[name] = t
        self._specs = [
            InputSpec(s["shape"], dtypes.convert_dtype(s["dtype"]), s["name"])
            for s in meta["inputs"]
        ]
        outputs = meta["outputs"]
        self._structure = decode_structure(meta["structure"], meta["leaves"], len(outputs))
        self._leaves = meta["leaves"]
        with self._checked():
            self._runner = ProgramRunner(
                program, [s.name for s in self._specs], outputs, values, compiler
            )
            self._runner.prepare(host)  # a program that cannot compile fails at load

    @contextlib.contextmanager
    def _checked(self):
        """Internal failures on a loaded program mean the file is inconsistent: say so."""
        try:
            yield
        except AutostaticError:
            raise
        except Exception as exc:
            if is_raised_again(exc):  # the model's own raise (a branch that raised)
                raise
            raise ProgramFormatError(
                f"{self._where}: the program is inconsistent ({type(exc).__name__}: {exc}); "
                "the file is corrupt or was not written by autostatic.save"
            ) from exc

    @property
    def input_spec(self) -> list[InputSpec]:
        """The saved input specs (names, shapes with None for any size, dtypes)."""
        return list(self._specs)

    def program(self) -> Program:
        """The loaded forward program."""
        return self._program

    def forward(self, *inputs: Any) -> Any:
        if len(inputs) != len(self._specs):
            raise InputMismatchError(
                f"the loaded model takes {len(self._specs)} inputs "
                f"({', '.join(s.name for s in self._specs)}), got {len(inputs)}"
            )
        feeds = []
        for spec, value in zip(self._specs, inputs):
            if not isinstance(value, Tensor):
                if not isinstance(value, np.ndarray):
                    raise InputMismatchError(
                        f"input {spec.name!r} must be a tensor or a NumPy array, "
                        f"got {type(value).__name__}"
                    )
                value = Tensor._rebuild(backends.current_backend().from_numpy(value), None, 0)
            _check_input(spec, value)
            feeds.append(value)
        with self._checked():
            results = self._runner(feeds)
        outs = iter(results)
        leaves = [next(outs) if leaf == "out" else leaf["const"] for leaf in self._leaves]
        return unflatten(self._structure, leaves)


def _check_input(spec: InputSpec, value: Tensor) -> None:
    shape = tuple(value._data.shape)
    dtype = dtypes.convert_dtype(value._data.dtype)
    want = list(spec.shape)
    if len(shape) != len(spec.shape):
        raise InputMismatchError(
            f"input {spec.name!r} must be {len(want)}-D with shape {want} (None = any size), "
            f"got shape {list(shape)}"
        )
    if dtype != spec.dtype:
        raise InputMismatchError(
            f"input {spec.name!r} must have dtype {spec.dtype}, got {dtype}; cast it first"
        )
    for i, (w, s) in enumerate(zip(spec.shape, shape)):
        if w is not None and w != s:
            raise InputMismatchError(
                f"input {spec.name!r} must have size {w} in dimension {i} (shape {want}), "
                f"got shape {list(shape)}"
            )
