"""Recurrent networks over whole sequences (Paddle 2.x ``RNN``, ``BiRNN``, ``SimpleRNN``,
``LSTM``, ``GRU``), built from the cells of ``rnn.py``.

``RNN(cell)(inputs, initial_states=None, sequence_length=None)`` steps ``cell`` along the time
axis. With ``sequence_length``, a sequence's states stop changing after its last step and its
outputs there are zeros (the reverse direction runs over the flipped padded sequence, so it
starts at each sequence's last real step, as in Paddle). The loop is Python over a known
number of steps (eagerly, and while tracing a known length); while tracing a length known
only at run time (``InputSpec([None, None, 16])``) it is a ``while`` op writing each step's
output into a buffer, so one program serves every length and gradients flow through it.

``SimpleRNN``/``LSTM``/``GRU`` stack ``num_layers`` of them (``direction='bidirect'`` pairs a
forward and a backward RNN per layer, concatenating their outputs), with ``dropout`` between
layers in training; states are ``[num_layers * num_directions, batch, hidden]`` (LSTM: a
``(h, c)`` pair). Parameter names follow Paddle's (``0.cell.weight_ih``,
``0.cell_fw.weight_hh``...), so state dicts line up.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.layer.container import LayerList
from autostatic_runtime.nn.layer.layers import Layer, sublayer_call
from autostatic_runtime.nn.layer.rnn import GRUCell, LSTMCell, SimpleRNNCell

__all__ = ["RNN", "BiRNN", "SimpleRNN", "LSTM", "GRU"]


def _rt():
    import autostatic_runtime as rt

    return rt


def _flat(states: Any) -> list:
    return list(states) if isinstance(states, (list, tuple)) else [states]


def _pack(like: Any, flat: list) -> Any:
    return tuple(flat) if isinstance(like, (list, tuple)) else flat[0]


def _symbolic(x: Any) -> bool:
    from autostatic_runtime.tensor import Tensor

    return not isinstance(x, Tensor)


def run_rnn(cell: Layer, inputs: Any, states: Any, sequence_length: Any = None,
            time_major: bool = False, is_reverse: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(outputs, final_states)`` of ``cell`` stepped over the time axis of ``inputs``."""
    rt = _rt()
    x = inputs if time_major else rt.transpose(inputs, [1, 0] + list(range(2, inputs.ndim)))
    steps = x.shape[0]
    if states is None:
        states = cell.get_initial_states(x, batch_dim_idx=1)
    mask = None
    if sequence_length is not None:
        maxlen = steps if steps >= 0 else rt.shape(x)[0]
        mask = rt.transpose(F.sequence_mask(sequence_length, maxlen, dtype=x.dtype), [1, 0])
        mask = rt.unsqueeze(mask, -1)  # [time, batch, 1]
    if is_reverse:
        x = rt.flip(x, [0])
        mask = None if mask is None else rt.flip(mask, [0])
    if steps >= 0 or not _symbolic(x):
        y, states = _unrolled(cell, x, states, mask)
    else:
        y, states = _while(cell, x, states, mask)
    if is_reverse:
        y = rt.flip(y, [0])
    if not time_major:
        y = rt.transpose(y, [1, 0] + list(range(2, y.ndim)))
    return y, states


def _step(cell: Layer, x_t: Any, states: Any, m: Any) -> tuple[Any, Any]:
    out, new = sublayer_call(cell)(x_t, states)
    if m is not None:
        keep = 1.0 - m
        new = _pack(new, [n * m + o * keep for n, o in zip(_flat(new), _flat(states))])
        out = out * m
    return out, new


def _unrolled(cell: Layer, x: Any, states: Any, mask: Any) -> tuple[Any, Any]:
    rt = _rt()
    outs = []
    for t in range(x.shape[0]):
        out, states = _step(cell, x[t], states, None if mask is None else mask[t])
        outs.append(out)
    if not outs:
        raise ValueError("RNN: the input sequence has no time steps")
    return rt.stack(outs, 0), states


def _while(cell: Layer, x: Any, states: Any, mask: Any) -> tuple[Any, Any]:
    """The loop as a ``while`` op (a time length known only when the program runs)."""
    rt = _rt()
    from autostatic_runtime.static.control_flow import while_loop

    n = rt.shape(x)[0]
    batch = x.shape[1] if x.shape[1] >= 0 else rt.shape(x)[1]
    buffer = rt.zeros([n, batch, cell.hidden_size], x.dtype)
    flat = _flat(states)

    def cond(i, buf, *st):
        return i < rt.cast(n, "int64")

    def body(i, buf, *st):
        m = None if mask is None else rt.gather(mask, rt.reshape(i, [1]))[0]
        out, new = _step(cell, rt.gather(x, rt.reshape(i, [1]))[0], _pack(states, list(st)), m)
        buf = rt.scatter(buf, rt.reshape(i, [1]), rt.unsqueeze(out, 0))
        return [i + 1, buf, *_flat(new)]

    i0 = rt.full([], 0, "int64")
    _, buffer, *flat = while_loop(cond, body, [i0, buffer, *flat])
    return buffer, _pack(states, flat)


class RNN(Layer):
    """Steps ``cell`` over a sequence: ``forward(inputs, initial_states=None,
    sequence_length=None) -> (outputs, final_states)``; inputs ``[batch, time, ...]`` (or
    ``[time, batch, ...]`` with ``time_major``)."""

    def __init__(self, cell: Layer, is_reverse: bool = False, time_major: bool = False):
        super().__init__()
        self.cell = cell
        self.is_reverse = is_reverse
        self.time_major = time_major

    def forward(self, inputs: Any, initial_states: Any = None, sequence_length: Any = None,
                **kwargs: Any) -> tuple[Any, Any]:  # fmt: skip
        return run_rnn(
            self.cell, inputs, initial_states, sequence_length, self.time_major, self.is_reverse
        )


class BiRNN(Layer):
    """A forward and a backward RNN over the same inputs; outputs concatenated on the last
    axis, states as ``(forward_states, backward_states)``."""

    def __init__(self, cell_fw: Layer, cell_bw: Layer, time_major: bool = False):
        super().__init__()
        self.cell_fw, self.cell_bw = cell_fw, cell_bw
        self.time_major = time_major

    def forward(self, inputs: Any, initial_states: Any = None, sequence_length: Any = None,
                **kwargs: Any) -> tuple[Any, Any]:  # fmt: skip
        fw_states, bw_states = (None, None) if initial_states is None else initial_states
        out_fw, fw = run_rnn(self.cell_fw, inputs, fw_states, sequence_length, self.time_major)
        out_bw, bw = run_rnn(
            self.cell_bw, inputs, bw_states, sequence_length, self.time_major, is_reverse=True
        )
        return _rt().concat([out_fw, out_bw], axis=-1), (fw, bw)


class _RNNBase(LayerList):
    """Stacked (bi)directional RNN layers with Paddle's constructor and state layout."""

    _cell: type = SimpleRNNCell
    _state_parts = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None,
                 bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: str | None = None, **cell_kwargs: Any):  # fmt: skip
        super().__init__()
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise ValueError(
                f"{type(self).__name__}: direction must be 'forward' or 'bidirect', got "
                f"{direction!r}"
            )
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.dropout, self.time_major = num_layers, float(dropout), time_major
        self.num_directions = 1 if direction == "forward" else 2
        attrs = (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
        for i in range(num_layers):
            size = input_size if i == 0 else hidden_size * self.num_directions
            if self.num_directions == 1:
                self.append(RNN(self._cell(size, hidden_size, *(), **self._kw(attrs, cell_kwargs)),
                                time_major=time_major))  # fmt: skip
            else:
                self.append(BiRNN(self._cell(size, hidden_size, **self._kw(attrs, cell_kwargs)),
                                  self._cell(size, hidden_size, **self._kw(attrs, cell_kwargs)),
                                  time_major))  # fmt: skip

    @staticmethod
    def _kw(attrs: tuple, extra: dict) -> dict:
        names = ("weight_ih_attr", "weight_hh_attr", "bias_ih_attr", "bias_hh_attr")
        return {**dict(zip(names, attrs)), **extra}

    def forward(self, inputs: Any, initial_states: Any = None,
                sequence_length: Any = None) -> tuple[Any, Any]:  # fmt: skip
        rt = _rt()
        per_layer = self._split_states(initial_states)
        finals = []
        out = inputs
        for i, layer in enumerate(self):
            if i > 0 and self.dropout > 0:
                out = F.dropout(out, self.dropout, training=self.training)
            out, final = layer(out, per_layer[i], sequence_length)
            finals.append(final)
        return out, self._join_states(finals, rt)

    def _split_states(self, states: Any) -> list:
        """``[L * D, B, H]`` states (per part) -> per layer: a cell state (or a fw/bw pair)."""
        if states is None:
            return [None] * self.num_layers
        parts = _flat(states) if self._state_parts > 1 else [states]
        out = []
        for i in range(self.num_layers):

            def cell_state(d, parts=parts, i=i):
                picked = [p[i * self.num_directions + d] for p in parts]
                return tuple(picked) if self._state_parts > 1 else picked[0]

            if self.num_directions == 1:
                out.append(cell_state(0))
            else:
                out.append((cell_state(0), cell_state(1)))
        return out

    def _join_states(self, finals: list, rt: Any) -> Any:
        cells = []
        for final in finals:
            cells.extend([final] if self.num_directions == 1 else list(final))
        parts = [rt.stack([_flat(c)[k] for c in cells], 0) for k in range(self._state_parts)]
        return tuple(parts) if self._state_parts > 1 else parts[0]

    def extra_repr(self) -> str:
        return (
            f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, "
            f"directions={self.num_directions}"
        )


class SimpleRNN(_RNNBase):
    """Elman RNN (``activation`` 'tanh' or 'relu'); states ``[L * D, B, H]``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 activation: str = "tanh", **kwargs: Any):  # fmt: skip
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         activation=activation, **kwargs)  # fmt: skip


class LSTM(_RNNBase):
    """Long short-term memory; states ``(h, c)``, each ``[L * D, B, H]``."""

    _cell = LSTMCell
    _state_parts = 2


class GRU(_RNNBase):
    """Gated recurrent unit; states ``[L * D, B, H]``."""

    _cell = GRUCell
