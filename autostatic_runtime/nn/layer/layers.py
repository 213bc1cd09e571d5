"""``Layer``: the base class of every model and layer (Paddle 2.x ``paddle.nn.Layer``).

Assigning attributes registers them, as in Paddle:

    class MLP(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(4, 8)        # a sublayer
            self.scale = self.create_parameter([8], is_bias=True)   # a parameter
            self.register_buffer("steps", rt.zeros([1]))             # a persistable buffer
        def forward(self, x):
            return self.fc(x) * self.scale

A plain Tensor assigned to an attribute becomes a *non-persistable* buffer (kept out of the
state dict); ``register_buffer`` makes persistable ones. ``state_dict`` holds parameters then
persistable buffers, each layer before its sublayers, under dotted names (``fc.weight``).
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import numpy as np

from autostatic_runtime import backends, dtypes
from autostatic_runtime.nn.parameter import ParamAttr, Parameter, create_parameter, unique_name
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = ["Layer", "HookRemoveHelper"]

_INTERNAL = ("_parameters", "_sub_layers", "_buffers")


def _check_buffer_write(layer: str, name: str, buffer: Tensor, value: Any) -> None:
    """A program writes a buffer in place: the traced value must keep its shape and dtype."""
    shape, want = tuple(value.shape), tuple(buffer.shape)
    fits = len(shape) == len(want) and all(a in (b, -1) for a, b in zip(shape, want))
    if value.dtype != buffer.dtype or not fits:
        from autostatic_runtime.errors import StaticBuildError, user_location

        raise StaticBuildError(
            f"{layer}.{name} is a buffer of shape {list(want)} and dtype {buffer.dtype}, but "
            f"the traced code assigns it a value of shape {list(shape)} and dtype "
            f"{value.dtype}; a program updates a buffer in place, so the new value must keep "
            f"its shape and dtype: cast or reshape it (.astype('{buffer.dtype}')), or keep "
            "the value in a local variable",
            user_location(),
        )


def _camel_to_snake(name: str) -> str:
    s1 = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z0-9])([A-Z])", r"\1_\2", s1).lower()


class HookRemoveHelper:
    """Returned by ``register_forward_*_hook``; ``remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: OrderedDict):
        self._hooks = hooks
        self._id = HookRemoveHelper._next_id
        HookRemoveHelper._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self._id, None)


class Layer:
    """Base class of layers: holds parameters, buffers and sublayers; ``__call__`` runs ``forward``.

    Args:
        name_scope: prefix of the layer's ``full_name()`` and its parameters' names
            (default: the class name in snake case).
        dtype: default dtype of the parameters it creates.
    """

    training: bool

    def __init__(self, name_scope: str | None = None, dtype: Any = "float32"):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_sub_layers", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        self._non_persistable_buffer_names_set: set[str] = set()
        self._forward_pre_hooks: OrderedDict = OrderedDict()
        self._forward_post_hooks: OrderedDict = OrderedDict()
        self._state_dict_hooks: OrderedDict = OrderedDict()
        self._full_name = unique_name(name_scope or _camel_to_snake(type(self).__name__))
        self._dtype = dtypes.convert_dtype(dtype)

    # -- forward -----------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        return self._call_with(self.forward, *inputs, **kwargs)

    def _call_with(self, forward: Callable, *inputs: Any, **kwargs: Any) -> Any:
        """``self(*inputs)`` running ``forward`` (a converted one while tracing) with hooks."""
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        outputs = forward(*inputs, **kwargs)
        for hook in list(self._forward_post_hooks.values()):
            result = hook(self, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    def register_forward_pre_hook(self, hook: Callable) -> HookRemoveHelper:
        """Call ``hook(layer, inputs)`` before ``forward``; a non-None result replaces inputs."""
        handle = HookRemoveHelper(self._forward_pre_hooks)
        self._forward_pre_hooks[handle._id] = hook
        return handle

    def register_forward_post_hook(self, hook: Callable) -> HookRemoveHelper:
        """Call ``hook(layer, inputs, outputs)`` after ``forward``; a non-None result replaces
        the outputs."""
        handle = HookRemoveHelper(self._forward_post_hooks)
        self._forward_post_hooks[handle._id] = hook
        return handle

    def register_state_dict_hook(self, hook: Callable) -> HookRemoveHelper:
        """Call ``hook(state_dict)`` at the end of ``state_dict()`` (``use_hook=True``); a
        non-None result replaces it (``amp.decorate``'s ``save_dtype`` casts this way)."""
        handle = HookRemoveHelper(self._state_dict_hooks)
        self._state_dict_hooks[handle._id] = hook
        return handle

    @property
    def _helper(self) -> Any:
        """Paddle 1.x's ``LayerHelper`` of this layer (``nn/layer_helper.py``)."""
        from autostatic_runtime.nn.layer_helper import LayerHelper

        return LayerHelper(self)

    # -- attribute registration ----------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), property):  # its setter decides
            object.__setattr__(self, name, value)
            return
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            _require_init(params, name)
            _discard(name, d, d["_buffers"], d["_sub_layers"])
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"assignment to parameter '{name}' should be of type Parameter "
                    f"or None, but got '{type(value).__name__}'"
                )
            params[name] = None
        elif isinstance(value, Layer):
            _require_init(d.get("_sub_layers"), name)
            _discard(name, d, params, d["_buffers"])
            d["_sub_layers"][name] = value
        elif d.get("_sub_layers") is not None and name in d["_sub_layers"]:
            if value is not None:
                raise TypeError(
                    f"assignment to sublayer '{name}' should be of type Layer or "
                    f"None, but got '{type(value).__name__}'"
                )
            d["_sub_layers"][name] = None
        elif isinstance(value, Tensor):
            _require_init(d.get("_buffers"), name)
            _discard(name, d, params, d["_sub_layers"])
            if name not in d["_buffers"]:
                self._non_persistable_buffer_names_set.add(name)
                value.name = value.name or unique_name(f"_buffers_{name}")
            d["_buffers"][name] = value
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, TensorLike):  # a traced value
                raise TypeError(
                    f"assignment to buffer '{name}' should be of type Tensor or "
                    f"None, but got '{type(value).__name__}'"
                )
            if value is not None and not isinstance(value, Tensor):  # a program is built
                from autostatic_runtime.static.builder import write_captured

                check = partial(_check_buffer_write, type(self).__name__, name)
                write_captured(d["_buffers"], name, value, check)  # as Paddle's assign
                return
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in _INTERNAL:
            found = d.get(store)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for store in _INTERNAL:
            if name in d.get(store, ()):
                del d[store][name]
                self._non_persistable_buffer_names_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        extra = [k for store in _INTERNAL for k in self.__dict__.get(store, ())]
        return sorted(set(super().__dir__()) | set(extra))

    def add_sublayer(self, name: str, sublayer: Layer | None) -> Layer | None:
        """Register ``sublayer`` under ``name`` and return it."""
        if sublayer is not None and not isinstance(sublayer, Layer):
            raise TypeError(
                f"add_sublayer: '{name}' must be a Layer, not {type(sublayer).__name__}"
            )
        _require_init(self.__dict__.get("_sub_layers"), name)
        self._sub_layers[str(name)] = sublayer
        return sublayer

    def add_parameter(self, name: str, parameter: Parameter | None) -> Parameter | None:
        """Register ``parameter`` under ``name`` and return it."""
        _require_init(self.__dict__.get("_parameters"), name)
        _check_name("parameter", name)
        if name not in self._parameters and hasattr(self, name):
            raise KeyError(f"add_parameter: attribute '{name}' already exists")
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(
                f"add_parameter: '{name}' must be a Parameter, not "
                f"{type(parameter).__name__}; make one with create_parameter"
            )
        self._parameters[name] = parameter
        return parameter

    def register_buffer(self, name: str, tensor: Tensor | None, persistable: bool = True) -> None:
        """Register ``tensor`` as a buffer: state that is not trained (e.g. running statistics).

        Persistable buffers are saved in ``state_dict``; others are not.
        """
        _require_init(self.__dict__.get("_buffers"), name)
        _check_name("buffer", name)
        if name not in self._buffers and hasattr(self, name):
            raise KeyError(f"register_buffer: attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"register_buffer: '{name}' must be a Tensor, not {type(tensor).__name__}"
            )
        _discard(name, self.__dict__, self._parameters, self._sub_layers)
        self._buffers[name] = tensor
        if persistable:
            self._non_persistable_buffer_names_set.discard(name)
        else:
            self._non_persistable_buffer_names_set.add(name)
        if tensor is not None:
            tensor.persistable = persistable
            tensor.name = tensor.name or unique_name(f"_buffers_{name}")

    def create_parameter(
        self,
        shape: Any,
        attr: Any = None,
        dtype: Any = None,
        is_bias: bool = False,
        default_initializer: Any = None,
    ) -> Parameter | None:
        """A new Parameter named ``<full_name>.w_N`` (``.b_N`` for a bias); None if ``attr=False``.

        It is not registered until assigned to an attribute (or passed to ``add_parameter``).
        """
        attr = ParamAttr._to_attr(attr)
        if attr is False:
            return None
        name = attr.name or unique_name(f"{self._full_name}.{'b' if is_bias else 'w'}")
        return create_parameter(
            shape,
            dtype or self._dtype,
            name=name,
            attr=attr,
            is_bias=is_bias,
            default_initializer=default_initializer,
        )

    def create_tensor(
        self, name: str | None = None, persistable: bool | None = None, dtype: Any = None
    ) -> Tensor:
        """An empty tensor of the layer's dtype (Paddle's ``create_variable``)."""
        t = Tensor(np.zeros((0,), str(dtypes.convert_dtype(dtype or self._dtype))))
        t.name = name or unique_name(f"{self._full_name}.tmp")
        t.persistable = bool(persistable)
        return t

    create_variable = create_tensor

    # -- traversal -----------------------------------------------------------------------------
    def named_sublayers(
        self, prefix: str = "", include_self: bool = False, layers_set: set | None = None
    ) -> Iterator[tuple[str, Layer]]:
        """(dotted name, layer) for every sublayer, depth first, each layer once."""
        seen = set() if layers_set is None else layers_set
        if include_self and id(self) not in seen:
            seen.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            sub_prefix = f"{prefix}.{key}" if prefix else key
            yield from layer.named_sublayers(sub_prefix, True, seen)

    def sublayers(self, include_self: bool = False) -> list[Layer]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self) -> Iterator[tuple[str, Layer]]:
        seen: set[int] = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield name, layer

    def children(self) -> Iterator[Layer]:
        for _, layer in self.named_children():
            yield layer

    def named_parameters(
        self, prefix: str = "", include_sublayers: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, each parameter once."""
        yield from self._named_members("_parameters", prefix, include_sublayers)

    def parameters(self, include_sublayers: bool = True) -> list[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(
        self, prefix: str = "", include_sublayers: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, include_sublayers)

    def buffers(self, include_sublayers: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def _named_members(self, store: str, prefix: str, include_sublayers: bool):
        layers = (
            self.named_sublayers(prefix, include_self=True)
            if include_sublayers
            else [(prefix, self)]
        )
        seen: set[int] = set()
        for layer_prefix, layer in layers:
            for name, value in layer.__dict__[store].items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{layer_prefix}.{name}" if layer_prefix else name), value

    def apply(self, fn: Callable[[Layer], Any]) -> Layer:
        """Call ``fn`` on every sublayer (children first) and then on this layer."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    def full_name(self) -> str:
        return self._full_name

    # -- modes and gradients -------------------------------------------------------------------
    def train(self) -> Layer:
        """Training mode for this layer and all sublayers (dropout active, batch stats used)."""
        for layer in self.sublayers(include_self=True):
            object.__setattr__(layer, "training", True)
        return self

    def eval(self) -> Layer:
        """Evaluation mode for this layer and all sublayers."""
        for layer in self.sublayers(include_self=True):
            object.__setattr__(layer, "training", False)
        return self

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        """Reset the gradient of every trainable parameter (to zeros, or to None)."""
        for p in self.parameters():
            if p.trainable:
                p.clear_gradient(set_to_zero)

    clear_grad = clear_gradients

    # -- state -----------------------------------------------------------------------------------
    def state_dict(
        self,
        destination: dict | None = None,
        include_sublayers: bool = True,
        structured_name_prefix: str = "",
        use_hook: bool = True,
        keep_vars: bool = True,
    ) -> OrderedDict:
        """Parameters and persistable buffers by dotted name (the Tensors themselves)."""
        out = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[structured_name_prefix + name] = p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistable_buffer_names_set:
                out[structured_name_prefix + name] = b
        if include_sublayers:
            for name, layer in self._sub_layers.items():
                if layer is not None:
                    layer.state_dict(out, True, f"{structured_name_prefix}{name}.", use_hook)
        if use_hook:
            for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
                replaced = hook(out)
                if replaced is not None:
                    out = replaced
        return out

    def set_state_dict(
        self, state_dict: dict, use_structured_name: bool = True, strict: bool = True
    ) -> tuple[list[str], list[str]]:
        """Load values (Tensors or NumPy arrays) into the parameters and persistable buffers.

        Keys are the dotted names of ``state_dict()`` (or the parameters' own names when
        ``use_structured_name=False``). With ``strict`` (the default) a missing key, an
        unexpected key or a shape mismatch is an error naming every offending key and nothing
        is loaded; ``strict=False`` loads what matches and warns about the rest, as Paddle does.

        Returns:
            (missing_keys, unexpected_keys)
        """
        own = self.state_dict(use_hook=False)  # the tensors themselves
        missing, mismatched, matched, used = [], [], [], set()
        for key, target in own.items():
            lookup = key if use_structured_name else target.name
            if lookup not in state_dict:
                missing.append(lookup)
                continue
            used.add(lookup)
            value = _as_host(state_dict[lookup])
            if list(value.shape) != target.shape:
                mismatched.append(
                    f"'{lookup}' has shape {list(value.shape)} in the state dict "
                    f"but {target.shape} in the layer"
                )
                continue
            matched.append((target, value))
        unexpected = [k for k in state_dict if k not in used]
        _report_mismatch(type(self).__name__, missing, unexpected, mismatched, strict)
        for target, value in matched:
            _assign(target, value)
        return missing, unexpected

    set_dict = load_dict = set_state_dict

    # -- devices and dtypes ----------------------------------------------------------------------
    def to(self, device: Any = None, dtype: Any = None, blocking: Any = None) -> Layer:
        """Move parameters and buffers to ``device`` and/or cast floating ones to ``dtype``."""
        backend = None if device is None else _backend_for(device)
        want = None if dtype is None else dtypes.convert_dtype(dtype)
        for t in self.parameters() + self.buffers():
            _convert(t, backend, want)
            if t.grad is not None:
                _convert(t.grad, backend, want)
        if want is not None:
            for layer in self.sublayers(include_self=True):
                layer._dtype = want
        return self

    def astype(self, dtype: Any) -> Layer:
        return self.to(dtype=dtype)

    def float(self) -> Layer:
        return self.to(dtype="float32")

    def double(self) -> Layer:
        return self.to(dtype="float64")

    def half(self) -> Layer:
        return self.to(dtype="float16")

    float16 = half

    # -- printing --------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """Extra information shown inside this layer's ``repr`` (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        subs = [
            f"({name}): " + _indent(repr(layer), 2)
            for name, layer in self._sub_layers.items()
            if layer is not None
        ]
        out = type(self).__name__ + "("
        if len(lines) > 1:
            out += "\n  " + "\n  ".join(lines) + "\n"
        elif lines:
            out += lines[0]
        if subs:
            out += "\n  " + "\n  ".join(subs) + "\n"
        return out + ")"


# ---- helpers ------------------------------------------------------------------------------------


def sublayer_call(layer: Any) -> Any:
    """How a library layer calls a sublayer it holds (``Sequential``'s, an RNN's cell): as
    converted code calls it while a program is traced (its ``forward`` converted, so a user's
    tensor ``if`` in it becomes an op), else the layer itself."""
    from autostatic_runtime.mode import static_here

    if static_here():
        from autostatic_runtime.convert_ops import convert_call

        return convert_call(layer)
    return layer


def _require_init(store: Any, name: str) -> None:
    if store is None:
        raise RuntimeError(
            f"cannot assign '{name}' before Layer.__init__() runs; call "
            "super().__init__() first in your layer's __init__"
        )


def _check_name(kind: str, name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"the name of a {kind} must be a string, not {type(name).__name__}")
    if "." in name:
        raise KeyError(f"the name of a {kind} cannot contain '.', got '{name}'")
    if not name:
        raise KeyError(f"the name of a {kind} cannot be empty")


def _discard(name: str, d: dict, *stores: Any) -> None:
    d.pop(name, None)
    for store in stores:
        if store is not None:
            store.pop(name, None)


def _indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    return lines[0] + "".join("\n" + " " * spaces + line for line in lines[1:])


def _as_host(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    return np.asarray(value)


def _assign(target: Tensor, value: Any) -> None:
    """Copy ``value`` into ``target`` keeping the target's dtype and device."""
    backend = backends.backend_of(target._data)
    if isinstance(value, Tensor):
        host = value.numpy()
    else:
        host = backends.backend_of(value).to_numpy(value)
    arr = np.array(host, dtype=str(target.dtype), copy=True)
    target._data = backend.from_numpy(arr)


def _report_mismatch(
    owner: str, missing: list, unexpected: list, mismatched: list, strict: bool
) -> None:
    problems = []
    if missing:
        problems.append("missing keys: " + ", ".join(f"'{k}'" for k in missing))
    if unexpected:
        problems.append("unexpected keys: " + ", ".join(f"'{k}'" for k in unexpected))
    problems.extend(mismatched)
    if not problems:
        return
    if strict:
        raise ValueError(
            f"set_state_dict: the state dict does not fit {owner}:\n  - "
            + "\n  - ".join(problems)
            + "\n(pass strict=False to load the matching entries only)"
        )
    for problem in problems:
        if not problem.startswith("unexpected"):
            warnings.warn(f"set_state_dict: skipped loading {problem}", stacklevel=3)


def _backend_for(device: Any):
    name = str(device).lower()
    if name.startswith("cpu"):
        return backends.get_backend("numpy")
    if name.startswith(("gpu", "cuda")):
        return backends.get_backend("cupy")
    return backends.get_backend(name.partition(":")[0])


def _convert(t: Tensor, backend: Any, want: Any) -> None:
    src = backends.backend_of(t._data)
    arr = t._data
    if backend is not None and backend is not src:
        arr = backend.from_numpy(src.to_numpy(arr))
        src = backend
    if want is not None and t.dtype.is_floating and t.dtype != want:
        arr = src.ns.astype(arr, src.to_dtype(want))
    t._data = arr
