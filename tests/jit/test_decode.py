"""BeamSearchDecoder + dynamic_decode: eager decoding, the same results from a traced program
(a while op that stops when every beam is finished), LSTM and GRU cells, save/load."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn


class Translator(nn.Layer):
    def __init__(self, cell="gru", end_token=1, vocab=10, hidden=8, beam=3, steps=6):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        rnn, cell_cls = (nn.GRU, nn.GRUCell) if cell == "gru" else (nn.LSTM, nn.LSTMCell)
        self.enc = rnn(hidden, hidden)
        self.cell = cell_cls(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.end_token, self.beam, self.steps = end_token, beam, steps

    def forward(self, src):
        _, state = self.enc(self.emb(src))
        inits = state[0] if not isinstance(state, tuple) else (state[0][0], state[1][0])
        decoder = nn.BeamSearchDecoder(self.cell, start_token=0, end_token=self.end_token,
                                       beam_size=self.beam, embedding_fn=self.emb,
                                       output_fn=self.out)  # fmt: skip
        ids, states, lengths = nn.dynamic_decode(
            decoder, inits=inits, max_step_num=self.steps, return_length=True
        )
        return ids, states.log_probs, lengths


def _reference_beam_search(model, src):
    """Plain NumPy-free reference: expand every beam, keep the best, backtrack by hand."""
    rt_ = rt
    _, state = model.enc(model.emb(src))
    h = state[0]
    b, k = h.shape[0], model.beam
    h = rt_.reshape(rt_.expand(rt_.unsqueeze(h, [1]), [b, k, h.shape[-1]]), [b * k, -1])
    scores = np.array([[0.0] + [-1e9] * (k - 1)] * b)
    finished = np.zeros((b, k), bool)
    tokens = np.zeros((b, k), "int64")
    history = []
    for _ in range(model.steps + 1):
        out, h = model.cell(model.emb(rt_.to_tensor(tokens.reshape(-1))), h)
        logp = rt_.nn.functional.log_softmax(model.out(out), axis=-1).numpy().reshape(b, k, -1)
        logp[finished] = -1e9
        logp[finished, model.end_token] = 0.0
        total = (scores[:, :, None] + logp).reshape(b, -1)
        best = np.argsort(-total, axis=1, kind="stable")[:, :k]
        parent, tokens = best // logp.shape[-1], best % logp.shape[-1]
        scores = np.take_along_axis(total, best, 1)
        finished = np.take_along_axis(finished, parent, 1) | (tokens == model.end_token)
        h = rt_.gather(h, rt_.to_tensor((parent + np.arange(b)[:, None] * k).reshape(-1)))
        history.append((tokens, parent))
        if finished.all():
            break
    ids = [history[-1][0]]
    beam = history[-1][1]
    for tokens, parent in reversed(history[:-1]):
        ids.append(np.take_along_axis(tokens, beam, 1))
        beam = np.take_along_axis(parent, beam, 1)
    return np.stack(ids[::-1], axis=1), scores


@pytest.mark.parametrize("cell", ["gru", "lstm"])
@pytest.mark.parametrize("end_token", [1, 99])  # 99: never produced, all steps run
def test_static_decoding_matches_eager(cell, end_token):
    rt.seed(3)
    model = Translator(cell, end_token)
    model.eval()
    sf = autostatic.to_static(model, input_spec=[InputSpec([None, None], "int64")])
    for shape in ([4, 5], [2, 3]):
        src = rt.randint(2, 10, shape)
        want = model(src)
        got = sf(src)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
    assert sf.forward.program_cache.misses == 1
    if end_token == 99:
        assert want[0].shape[1] == model.steps + 1  # Paddle runs max_step_num + 1 steps


def test_beam_search_agrees_with_a_hand_written_search():
    rt.seed(4)
    model = Translator("gru", end_token=1)
    model.eval()
    src = rt.randint(2, 10, [3, 4])
    ids, log_probs, lengths = model(src)
    want_ids, want_scores = _reference_beam_search(model, src)
    np.testing.assert_array_equal(ids.numpy(), want_ids)
    np.testing.assert_allclose(log_probs.numpy(), want_scores, rtol=1e-4, atol=1e-4)
    assert lengths.dtype == rt.int64 and lengths.shape == [3, 3]


def test_saved_decoder_runs_without_source(tmp_path):
    rt.seed(5)
    model = Translator("lstm")
    model.eval()
    autostatic.save(model, str(tmp_path / "t"), input_spec=[InputSpec([None, None], "int64")])
    loaded = autostatic.load(str(tmp_path / "t"))
    src = rt.randint(2, 10, [2, 6])
    for g, w in zip(loaded(src), model(src)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_static_decode_needs_max_step_num():
    model = Translator()
    with pytest.raises(ValueError, match="max_step_num"):
        rt.enable_static()
        try:
            with rt.static.program_guard(rt.static.Program()):
                h = rt.static.data("h", [None, 8])
                decoder = nn.BeamSearchDecoder(model.cell, 0, 1, 2, model.emb, model.out)
                nn.dynamic_decode(decoder, inits=h)
        finally:
            rt.disable_static()
