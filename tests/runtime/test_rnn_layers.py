"""SimpleRNN / LSTM / GRU / RNN / BiRNN over sequences, with ``sequence_length``; eagerly,
under ``to_static`` (known and unknown time lengths) and their gradients."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn
from tests.runtime.harness import check_grad

LENGTHS = [5, 2, 3]


def _x(shape=(3, 5, 3), seed=0):
    return rt.to_tensor(np.random.default_rng(seed).normal(size=shape).astype("float32"))


def _parts(states):
    return list(states) if isinstance(states, tuple) else [states]


@pytest.mark.parametrize("cls", [nn.SimpleRNN, nn.LSTM, nn.GRU])
@pytest.mark.parametrize("direction", ["forward", "bidirect"])
def test_padded_batch_matches_each_sequence_alone(cls, direction):
    rt.seed(3)
    net = cls(3, 4, num_layers=2, direction=direction)
    x = _x()
    y, states = net(x, sequence_length=rt.to_tensor(LENGTHS))
    dirs = 2 if direction == "bidirect" else 1
    assert y.shape == [3, 5, 4 * dirs]
    assert all(s.shape == [2 * dirs, 3, 4] for s in _parts(states))
    for b, n in enumerate(LENGTHS):
        alone, alone_states = net(x[b : b + 1, :n])
        np.testing.assert_allclose(y[b, :n].numpy(), alone[0].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(y[b, n:].numpy(), 0.0)
        for s, a in zip(_parts(states), _parts(alone_states)):
            np.testing.assert_allclose(s[:, b].numpy(), a[:, 0].numpy(), rtol=1e-5, atol=1e-6)


def test_lstm_matches_stepping_its_cell_and_takes_initial_states():
    net = nn.LSTM(3, 4, time_major=True)
    x = _x((5, 2, 3))
    h0, c0 = rt.randn([1, 2, 4]), rt.randn([1, 2, 4])
    y, (h, c) = net(x, (h0, c0))
    cell = net[0].cell
    state = (h0[0], c0[0])
    for t in range(5):
        out, state = cell(x[t], state)
        np.testing.assert_allclose(y[t].numpy(), out.numpy(), rtol=1e-6)
    np.testing.assert_allclose(h[0].numpy(), state[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(c[0].numpy(), state[1].numpy(), rtol=1e-6)


def test_rnn_wrapper_reverse_and_birnn():
    cell = nn.GRUCell(3, 4)
    x = _x()
    fwd, _ = nn.RNN(cell)(x)
    rev, _ = nn.RNN(cell, is_reverse=True)(rt.flip(x, [1]))
    np.testing.assert_allclose(rt.flip(rev, [1]).numpy(), fwd.numpy(), rtol=1e-5, atol=1e-6)
    out, (fw, bw) = nn.BiRNN(cell, nn.GRUCell(3, 4))(x)
    assert out.shape == [3, 5, 8] and fw.shape == [3, 4] and bw.shape == [3, 4]
    with pytest.raises(ValueError, match="direction"):
        nn.LSTM(3, 4, direction="sideways")


def test_gradients_match_central_differences():
    rt.seed(0)
    net = nn.GRU(2, 3, direction="bidirect")
    lengths = rt.to_tensor([3, 1])
    check_grad(lambda x: net(x, sequence_length=lengths)[0], [_x((2, 3, 2))], [0], rtol=1e-3)


def _loss_and_grads(fn, net, x, lengths):
    x = rt.to_tensor(x.numpy(), stop_gradient=False)
    out, states = fn(x, lengths)
    loss = (out * out).sum() + sum((s * s).sum() for s in _parts(states))
    loss.backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]
    net.clear_gradients()
    return loss.numpy(), grads


@pytest.mark.parametrize("time", [5, None])
@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_to_static_matches_eager_for_known_and_unknown_lengths(cls, time):
    rt.seed(5)
    net = cls(3, 4, num_layers=2, direction="bidirect")

    def fn(x, lengths):
        return net(x, sequence_length=lengths)

    sf = autostatic.to_static(
        fn, input_spec=[InputSpec([None, time, 3], "float32"), InputSpec([None], "int64")]
    )
    lengths = rt.to_tensor(LENGTHS)
    for steps in (5,) if time else (5, 7):
        x = _x((3, steps, 3), seed=steps)
        want_loss, want = _loss_and_grads(fn, net, x, lengths)
        got_loss, got = _loss_and_grads(sf, net, x, lengths)
        np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    ops = {op.type for op in sf.concrete_program.main_program.global_block().ops}
    assert ("while" in ops) == (time is None)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_bidirectional_initial_states_are_split_per_layer_and_direction(cls):
    rt.seed(6)
    net = cls(3, 4, num_layers=2, direction="bidirectional")
    x = _x()
    zeros = rt.zeros([4, 3, 4])
    default = net(x)
    given = net(x, (zeros, zeros) if cls is nn.LSTM else zeros)
    for a, b in zip([default[0], *_parts(default[1])], [given[0], *_parts(given[1])]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    one = cls(3, 4, direction="bidirect")  # one layer: state 0 forward, state 1 backward
    h0, c0 = rt.randn([2, 3, 4]), rt.randn([2, 3, 4])
    out, _ = one(x, (h0, c0) if cls is nn.LSTM else h0)
    fw, bw = ((h0[0], c0[0]), (h0[1], c0[1])) if cls is nn.LSTM else (h0[0], h0[1])
    want, _ = nn.BiRNN(one[0].cell_fw, one[0].cell_bw)(x, (fw, bw))
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
