"""Containers: ``Sequential``, ``LayerList``, ``LayerDict``, ``ParameterList``, ``ParameterDict``.

Each registers what it holds under string keys (``"0"``, ``"1"``... for the lists), so the
state dict of ``Sequential(Linear(2, 3))`` has ``0.weight`` and ``0.bias`` as in Paddle.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from autostatic_runtime.nn.layer.layers import Layer, sublayer_call
from autostatic_runtime.nn.parameter import Parameter

__all__ = ["Sequential", "LayerList", "LayerDict", "ParameterList", "ParameterDict"]


def _index(i: int, n: int, what: str) -> int:
    if not -n <= i < n:
        raise IndexError(f"{what} index {i} is out of range for length {n}")
    return i % n


class Sequential(Layer):
    """Layers applied in order: ``Sequential(l1, l2)``, ``Sequential(('a', l1), ('b', l2))``
    or ``Sequential(OrderedDict(a=l1, b=l2))``.

    Supports ``len``, iteration, ``seq[i]`` / ``seq['name']`` / ``seq[1:]`` (a new Sequential
    sharing the layers), assignment and deletion by index.
    """

    def __init__(self, *layers: Any):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], Mapping):
            layers = tuple(layers[0].items())
        if layers and isinstance(layers[0], (list, tuple)):
            for name, layer in layers:
                self.add_sublayer(name, layer)
        else:
            for i, layer in enumerate(layers):
                self.add_sublayer(str(i), layer)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return Sequential(*list(self._sub_layers.values())[key])
        if isinstance(key, str):
            return self._sub_layers[key]
        return list(self._sub_layers.values())[_index(key, len(self), "Sequential")]

    def __setitem__(self, key: Any, layer: Layer) -> None:
        if isinstance(key, str):
            self.add_sublayer(key, layer)
            return
        name = list(self._sub_layers)[_index(key, len(self), "Sequential")]
        self.add_sublayer(name, layer)

    def __delitem__(self, key: Any) -> None:
        names = list(self._sub_layers)
        if isinstance(key, str):
            del self._sub_layers[key]
            return
        if isinstance(key, slice):
            selected = names[key]
        else:
            selected = [names[_index(key, len(names), "Sequential")]]
        for name in selected:
            del self._sub_layers[name]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())

    def append(self, layer: Layer) -> Sequential:
        self.add_sublayer(str(len(self)), layer)
        return self

    def forward(self, input: Any) -> Any:
        for layer in self._sub_layers.values():
            input = sublayer_call(layer)(input)
        return input


class LayerList(Layer):
    """A list of layers registered as ``"0"``, ``"1"``, ... (Paddle's ``paddle.nn.LayerList``)."""

    def __init__(self, sublayers: Iterable[Layer] | None = None):
        super().__init__()
        if sublayers is not None:
            self.extend(sublayers)

    def _renumber(self, layers: list) -> None:
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def __getitem__(self, key: Any) -> Any:
        layers = list(self._sub_layers.values())
        if isinstance(key, slice):
            return type(self)(layers[key])
        return layers[_index(key, len(layers), "LayerList")]

    def __setitem__(self, key: int, layer: Layer) -> None:
        self.add_sublayer(str(_index(key, len(self), "LayerList")), layer)

    def __delitem__(self, key: Any) -> None:
        layers = list(self._sub_layers.values())
        if isinstance(key, slice):
            del layers[key]
        else:
            del layers[_index(key, len(layers), "LayerList")]
        self._renumber(layers)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())

    def append(self, sublayer: Layer) -> LayerList:
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._renumber(layers)

    def extend(self, sublayers: Iterable[Layer]) -> LayerList:
        for layer in sublayers:
            self.append(layer)
        return self


class LayerDict(Layer):
    """An ordered dict of layers (Paddle's ``paddle.nn.LayerDict``)."""

    def __init__(self, sublayers: Any = None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, sublayer: Layer) -> None:
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key: str) -> None:
        del self._sub_layers[key]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[str]:
        return iter(self._sub_layers)

    def __contains__(self, key: str) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        self._sub_layers.clear()

    def pop(self, key: str) -> Layer:
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers: Any) -> None:
        """Add (name, layer) pairs from a mapping or an iterable of pairs."""
        items = sublayers.items() if isinstance(sublayers, Mapping) else sublayers
        for i, pair in enumerate(items):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(
                    f"LayerDict.update: element {i} must be a (name, layer) pair, got {pair!r}"
                )
            self.add_sublayer(pair[0], pair[1])


class ParameterList(Layer):
    """A list of Parameters registered as ``"0"``, ``"1"``, ..."""

    def __init__(self, parameters: Iterable[Parameter] | None = None):
        super().__init__()
        for p in parameters or ():
            self.append(p)

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[_index(idx, len(self), "ParameterList")]

    def __setitem__(self, idx: int, param: Parameter) -> None:
        self.add_parameter(str(_index(idx, len(self), "ParameterList")), param)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def append(self, parameter: Parameter) -> ParameterList:
        self.add_parameter(str(len(self)), parameter)
        return self

    def extend(self, parameters: Iterable[Parameter]) -> ParameterList:
        for p in parameters:
            self.append(p)
        return self


class ParameterDict(Layer):
    """An ordered dict of Parameters."""

    def __init__(self, parameters: Any = None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, param: Parameter) -> None:
        self.add_parameter(key, param)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: str) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters: Any) -> None:
        items = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, p in items:
            self.add_parameter(key, p)
