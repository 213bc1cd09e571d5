"""Recurrent cells (Paddle 2.x ``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``).

Weights follow Paddle's layout: ``weight_ih [G * hidden, input]``, ``weight_hh
[G * hidden, hidden]``, ``bias_ih``/``bias_hh [G * hidden]``, with gate blocks in the order
LSTM ``i, f, g, o`` and GRU ``r, z, c``; every one starts ``Uniform(-1/sqrt(hidden),
1/sqrt(hidden))``. The equations (``@`` is ``x @ W.T``):

    LSTM: i, f, g, o = split(x @ W_ih + b_ih + h @ W_hh + b_hh, 4)
          c' = sigmoid(f) * c + sigmoid(i) * tanh(g);  h' = sigmoid(o) * tanh(c')
    GRU:  x_r, x_z, x_c = split(x @ W_ih + b_ih, 3);  h_r, h_z, h_c = split(h @ W_hh + b_hh, 3)
          r = sigmoid(x_r + h_r);  z = sigmoid(x_z + h_z);  c = tanh(x_c + r * h_c)
          h' = (h - c) * z + c
"""

from __future__ import annotations

import math
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.initializer import Uniform
from autostatic_runtime.nn.layer.layers import Layer

__all__ = ["RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell"]


def _ops():
    import autostatic_runtime as rt

    return rt


class RNNCellBase(Layer):
    """Base of RNN cells (Paddle's ``paddle.nn.RNNCellBase``): zero initial states shaped by
    ``state_shape``. A cell of your own defines ``state_shape`` and
    ``forward(inputs, states) -> (outputs, new_states)``, and runs in ``rt.nn.RNN``."""

    def __init__(self, name_scope: str | None = None, dtype: Any = None):
        super().__init__(name_scope, dtype=dtype or dtypes.get_default_dtype())

    @property
    def state_shape(self) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} must define state_shape (the shape of one state without "
            "the batch dim, or a nested tuple of them) for its initial states"
        )

    def get_initial_states(
        self,
        batch_ref: Any,
        shape: Any = None,
        dtype: Any = None,
        init_value: float = 0.0,
        batch_dim_idx: int = 0,
    ) -> Any:
        """Zero (or ``init_value``) states of ``shape`` for the batch size of ``batch_ref``."""
        rt = _ops()
        shape = self.state_shape if shape is None else shape
        batch = batch_ref.shape[batch_dim_idx]
        if batch < 0:  # a batch known only when the program runs
            batch = rt.shape(batch_ref)[batch_dim_idx]
        if isinstance(shape[0], (tuple, list)):
            return tuple(
                self.get_initial_states(batch_ref, s, dtype, init_value, batch_dim_idx)
                for s in shape
            )
        return rt.full([batch, *shape], init_value, dtype=dtype or batch_ref.dtype)


class _WeightedCell(RNNCellBase):
    """The built-in cells' parameters, in Paddle's layout."""

    _gates = 1

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        weight_ih_attr: Any = None,
        weight_hh_attr: Any = None,
        bias_ih_attr: Any = None,
        bias_hh_attr: Any = None,
    ):
        super().__init__()
        if input_size <= 0 or hidden_size <= 0:
            raise ValueError(
                f"{type(self).__name__}: input_size ({input_size}) and hidden_size "
                f"({hidden_size}) must be positive"
            )
        self.input_size, self.hidden_size = input_size, hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        init = Uniform(-bound, bound)
        rows = self._gates * hidden_size
        self.weight_ih = self.create_parameter(
            [rows, input_size], weight_ih_attr, default_initializer=init
        )
        self.weight_hh = self.create_parameter(
            [rows, hidden_size], weight_hh_attr, default_initializer=init
        )
        self.bias_ih = self.create_parameter(
            [rows], bias_ih_attr, is_bias=True, default_initializer=init
        )
        self.bias_hh = self.create_parameter(
            [rows], bias_hh_attr, is_bias=True, default_initializer=init
        )

    @property
    def state_shape(self) -> Any:
        return (self.hidden_size,)

    def _project(self, x: Any, weight: Any, bias: Any) -> Any:
        out = _ops().matmul(x, weight, transpose_y=True)
        return out if bias is None else out + bias

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class SimpleRNNCell(_WeightedCell):
    """``h' = act(x @ W_ih + b_ih + h @ W_hh + b_hh)``, ``activation`` 'tanh' or 'relu'."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        activation: str = "tanh",
        weight_ih_attr: Any = None,
        weight_hh_attr: Any = None,
        bias_ih_attr: Any = None,
        bias_hh_attr: Any = None,
        name: str | None = None,
    ):
        if activation not in ("tanh", "relu"):
            raise ValueError(
                f"SimpleRNNCell: activation must be 'tanh' or 'relu', got {activation!r}"
            )
        self.activation = activation
        super().__init__(
            input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr
        )

    def forward(self, inputs: Any, states: Any = None) -> tuple[Any, Any]:
        if states is None:
            states = self.get_initial_states(inputs)
        pre = self._project(inputs, self.weight_ih, self.bias_ih) + self._project(
            states, self.weight_hh, self.bias_hh
        )
        h = F.tanh(pre) if self.activation == "tanh" else F.relu(pre)
        return h, h

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, activation={self.activation}"


class LSTMCell(_WeightedCell):
    """One LSTM step: ``forward(inputs, states=None) -> (h, (h, c))``."""

    _gates = 4

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        weight_ih_attr: Any = None,
        weight_hh_attr: Any = None,
        bias_ih_attr: Any = None,
        bias_hh_attr: Any = None,
        name: str | None = None,
    ):
        super().__init__(
            input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr
        )

    @property
    def state_shape(self) -> Any:
        return ((self.hidden_size,), (self.hidden_size,))

    def forward(self, inputs: Any, states: Any = None) -> tuple[Any, tuple[Any, Any]]:
        if states is None:
            states = self.get_initial_states(inputs)
        pre_h, pre_c = states
        gates = self._project(inputs, self.weight_ih, self.bias_ih) + self._project(
            pre_h, self.weight_hh, self.bias_hh
        )
        i, f, g, o = _ops().split(gates, 4, axis=-1)
        c = F.sigmoid(f) * pre_c + F.sigmoid(i) * F.tanh(g)
        h = F.sigmoid(o) * F.tanh(c)
        return h, (h, c)


class GRUCell(_WeightedCell):
    """One GRU step: ``forward(inputs, states=None) -> (h, h)``."""

    _gates = 3

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        weight_ih_attr: Any = None,
        weight_hh_attr: Any = None,
        bias_ih_attr: Any = None,
        bias_hh_attr: Any = None,
        name: str | None = None,
    ):
        super().__init__(
            input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr
        )

    def forward(self, inputs: Any, states: Any = None) -> tuple[Any, Any]:
        if states is None:
            states = self.get_initial_states(inputs)
        rt = _ops()
        x_r, x_z, x_c = rt.split(self._project(inputs, self.weight_ih, self.bias_ih), 3, axis=-1)
        h_r, h_z, h_c = rt.split(self._project(states, self.weight_hh, self.bias_hh), 3, axis=-1)
        r = F.sigmoid(x_r + h_r)
        z = F.sigmoid(x_z + h_z)
        c = F.tanh(x_c + r * h_c)
        h = (states - c) * z + c
        return h, h
