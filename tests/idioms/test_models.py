"""Idioms: small real models (kind 13): LSTM/GRU-style cell loops over a traced sequence
length, a seq2seq greedy decode loop with early stop, a beam-search-style loop, attention
with length masks, a sentiment-style pooled classifier, an MLP with a tensor branch trained
a few steps; and (generic) Layers with ``self.training`` branches and sublayers with tensor
control flow."""

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec

from .harness import KINDS, apply_xfails, case, rand, run_case

F = rt.nn.functional


class ManualLSTM(rt.nn.Layer):
    """Gates written out, as in hand-rolled dygraph LSTMs."""

    def __init__(self, d=4, hidden=4):
        super().__init__()
        rt.seed(81)
        self.hidden = hidden
        self.wx = rt.nn.Linear(d, 4 * hidden)
        self.wh = rt.nn.Linear(hidden, 4 * hidden, bias_attr=False)

    def forward(self, x):
        h = x[:, 0, :] * 0.0
        c = x[:, 0, :] * 0.0
        for t in range(rt.shape(x)[1]):
            gates = self.wx(x[:, t, :]) + self.wh(h)
            i, f, g, o = rt.split(gates, 4, axis=1)
            c = F.sigmoid(f) * c + F.sigmoid(i) * rt.tanh(g)
            h = F.sigmoid(o) * rt.tanh(c)
        return h, c


class GRUWithLengths(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(82)
        self.cell = rt.nn.GRUCell(4, 5)

    def forward(self, x, lengths):
        h = rt.zeros([x.shape[0], 5], "float32")
        t = 0
        while t < rt.max(lengths):
            out, h_new = self.cell(x[:, t, :], h)
            alive = rt.unsqueeze(lengths > t, 1)
            h = rt.where(alive, h_new, h)
            t += 1
        return h


class LSTMCollect(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(83)
        self.cell = rt.nn.LSTMCell(4, 3)

    def forward(self, x):
        outputs = []
        state = None
        for t in range(rt.shape(x)[1]):
            out, state = self.cell(x[:, t, :], state)
            outputs.append(out)
        return rt.stack(outputs, axis=1)


EOS = 0


class GreedyDecoder(rt.nn.Layer):
    def __init__(self, vocab=6, hidden=8, max_len=5):
        super().__init__()
        rt.seed(84)
        self.max_len = max_len
        self.emb = rt.nn.Embedding(vocab, hidden)
        self.cell = rt.nn.GRUCell(hidden, hidden)
        self.out = rt.nn.Linear(hidden, vocab)

    def forward(self, src):
        h = rt.mean(self.emb(src), axis=1)
        tok = rt.full([src.shape[0]], 1, "int64")
        tokens = []
        for _ in range(self.max_len):
            _, h = self.cell(self.emb(tok), h)
            tok = rt.argmax(self.out(h), axis=-1)
            tokens.append(tok)
            if rt.all(tok == EOS):
                break
        return rt.stack(tokens, axis=1)


class WhileDecoder(GreedyDecoder):
    """The same decoder with a tensor ``while`` and a finished mask."""

    def forward(self, src):
        h = rt.mean(self.emb(src), axis=1)
        tok = rt.full([src.shape[0]], 1, "int64")
        finished = tok == EOS
        score = rt.zeros([src.shape[0]], "float32")
        step = 0
        while step < self.max_len and not rt.all(finished):
            _, h = self.cell(self.emb(tok), h)
            logp = F.log_softmax(self.out(h))
            tok = rt.argmax(logp, axis=-1)
            best = rt.max(logp, axis=-1)
            score = score + rt.where(finished, rt.zeros_like(best), best)
            finished = rt.logical_or(finished, tok == EOS)
            step += 1
        return score, step


class BeamSearch(rt.nn.Layer):
    def __init__(self, vocab=5, hidden=6, beam=2, steps=3):
        super().__init__()
        rt.seed(85)
        self.vocab, self.beam, self.steps = vocab, beam, steps
        self.init = rt.nn.Linear(4, hidden)
        self.step_fc = rt.nn.Linear(hidden, hidden)
        self.out = rt.nn.Linear(hidden, vocab)

    def forward(self, x):
        h = rt.tanh(self.init(x))  # [beam, hidden]
        scores = rt.to_tensor([0.0] + [-1e9] * (self.beam - 1))
        history = []
        for _ in range(self.steps):
            logp = F.log_softmax(self.out(h))
            total = rt.reshape(rt.unsqueeze(scores, 1) + logp, [-1])
            scores, idx = rt.topk(total, self.beam)
            parent = idx // self.vocab
            token = idx % self.vocab
            h = rt.tanh(self.step_fc(rt.gather(h, parent)))
            history.append(token)
            if rt.max(scores) < -20.0:
                break
        return scores, rt.stack(history)


class MaskedAttention(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(86)
        self.q = rt.nn.Linear(4, 4)

    def forward(self, enc, lengths):
        query = self.q(rt.mean(enc, axis=1))  # [B, 4]
        scores = rt.squeeze(rt.matmul(enc, rt.unsqueeze(query, 2)), 2)  # [B, T]
        steps = rt.unsqueeze(rt.arange(rt.shape(enc)[1]), 0)
        pad = steps >= rt.unsqueeze(lengths, 1)
        if rt.any(pad):
            scores = rt.masked_fill(scores, pad, -1e9)
        attn = F.softmax(scores)
        return rt.sum(enc * rt.unsqueeze(attn, 2), axis=1)


class SentimentPool(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(87)
        self.emb = rt.nn.Embedding(10, 6, padding_idx=0)
        self.fc = rt.nn.Linear(6, 2)

    def forward(self, tokens):
        e = self.emb(tokens)
        mask = rt.cast(tokens != 0, "float32")
        total = rt.zeros([tokens.shape[0], 6], "float32")
        for t in range(rt.shape(tokens)[1]):
            total = total + e[:, t, :] * rt.unsqueeze(mask[:, t], 1)
        n = rt.clip(rt.sum(mask, axis=1, keepdim=True), min=1.0)
        logits = self.fc(total / n)
        if self.training:
            return logits
        return F.softmax(logits)


class TrainingBranchNet(rt.nn.Layer):
    def __init__(self, training=True):
        super().__init__()
        rt.seed(88)
        self.fc = rt.nn.Linear(3, 4)
        self.bn = rt.nn.BatchNorm1D(4)
        self.train() if training else self.eval()

    def forward(self, x):
        h = self.bn(self.fc(x))
        if self.training and rt.mean(h) > -10:
            h = h * 0.9
        else:
            h = rt.tanh(h)
        return h


class Gate(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        if rt.mean(h) > 0:
            return rt.nn.functional.relu(h)
        return h * 0.1


class StackOfGates(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(89)
        self.blocks = rt.nn.LayerList([Gate() for _ in range(3)])

    def forward(self, x):
        for blk in self.blocks:
            res = blk(x)
            if rt.sum(res) > rt.sum(x):
                x = x + res
            else:
                x = res
        return x


class ResidualWhile(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(90)
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        steps = rt.zeros([1], "int64")
        while rt.mean(rt.abs(x)) < 2.0 and steps < 4:
            x = x + rt.tanh(self.fc(x))
            steps += 1
        return x, steps


class StackedCell(rt.nn.Layer):
    def __init__(self, h):
        super().__init__()
        self.gates = rt.nn.Linear(2 * h, 4 * h)

    def forward(self, x, h, c):
        i, j, f, o = rt.split(self.gates(rt.concat([x, h], 1)), 4, axis=-1)
        c = c * F.sigmoid(f + 1.0) + F.sigmoid(i) * rt.tanh(j)
        return rt.tanh(c) * F.sigmoid(o), c


class ArrayStateBeamDecoder(rt.nn.Layer):
    """Paddle's seq2seq model idioms: per-layer states in tensor arrays written at ``[1]``
    index tensors (``zero + i``), read back by Python index in the encoder loop; a beam
    decoder over ``range(tensor)`` with an early ``break``, per-layer state lists rebuilt
    by comprehensions, ids and parents appended, then ``gather_tree``."""

    def __init__(self, h=4, vocab=7, layers=2, beam=2, steps=3):
        super().__init__()
        rt.seed(86)
        self.h, self.vocab, self.layers, self.beam, self.steps = h, vocab, layers, beam, steps
        self.emb = rt.nn.Embedding(vocab, h)
        self.enc = rt.nn.LayerList([StackedCell(h) for _ in range(layers)])
        self.dec = rt.nn.LayerList([StackedCell(h) for _ in range(layers)])
        self.out = rt.nn.Linear(h, vocab)

    def _beams(self, s):
        return rt.reshape(rt.expand(rt.unsqueeze(s, 1), [-1, self.beam, -1]), [-1, self.h])

    def forward(self, src):
        b = src.shape[0]
        emb = rt.transpose(self.emb(src), [1, 0, 2])
        zero = rt.zeros([1], "int64")
        hs = rt.tensor.create_array("float32")
        cs = rt.tensor.create_array("float32")
        for i in range(self.layers):
            hs = rt.tensor.array_write(rt.zeros([b, self.h]), zero + i, array=hs)
            cs = rt.tensor.array_write(rt.zeros([b, self.h]), zero + i, array=cs)
        for t in range(emb.shape[0]):
            x, nh, nc = emb[t], [], []
            for i in range(self.layers):
                x, c = self.enc[i](x, hs[i], cs[i])
                nh.append(x)
                nc.append(c)
            hs, cs = nh, nc
        hs = [self._beams(s) for s in hs]
        cs = [self._beams(s) for s in cs]
        tok = rt.full([b, self.beam], 1, "int64")
        done = rt.zeros([b, self.beam], "float32")
        logp = rt.expand(rt.to_tensor([[0.0] + [-1e9] * (self.beam - 1)]), [b, self.beam])
        pos = rt.expand(rt.unsqueeze(rt.arange(0, b, 1, dtype="int64"), [1]), [-1, self.beam])
        ids, parents = [], []
        for _ in range(rt.to_tensor(self.steps)):
            if rt.sum(1 - done) == 0:
                break
            x, nh, nc = rt.reshape(self.emb(tok), [-1, self.h]), [], []
            for i in range(self.layers):
                x, c = self.dec[i](x, hs[i], cs[i])
                nh.append(x)
                nc.append(c)
            scores = F.log_softmax(rt.reshape(self.out(x), [-1, self.beam, self.vocab]))
            scores = rt.reshape(scores + rt.unsqueeze(logp, 2), [-1, self.beam * self.vocab])
            logp, top = rt.topk(scores, self.beam)
            src_beam, tok = top // self.vocab, top % self.vocab
            at = rt.stack([pos, src_beam], axis=2)
            hs = [rt.reshape(rt.gather_nd(rt.reshape(s, [-1, self.beam, self.h]), at),
                             [-1, self.h]) for s in nh]  # fmt: skip
            cs = [rt.reshape(rt.gather_nd(rt.reshape(s, [-1, self.beam, self.h]), at),
                             [-1, self.h]) for s in nc]  # fmt: skip
            was_done = rt.cast(rt.gather_nd(done, at), "bool")
            done = rt.cast(rt.logical_or(was_done, tok == 2), "float32")
            ids.append(tok)
            parents.append(src_beam)
        return rt.transpose(F.gather_tree(rt.stack(ids), rt.stack(parents)), [1, 0, 2])


class CenterUnlessNegative(rt.nn.Layer):
    """A sublayer with a tensor ``if``, held by a ``Sequential`` (Paddle's test_container)."""

    def forward(self, x):
        mean = rt.mean(x)
        if mean < 0.0:
            x = x * rt.to_tensor(np.zeros([3], "float32"))
        return x - mean


class SequentialOfBranchingLayer(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(95)
        self.layers = rt.nn.Sequential(
            ("l1", rt.nn.Linear(3, 3)), ("l2", CenterUnlessNegative()), ("l3", rt.nn.Tanh())
        )

    def forward(self, x):
        return self.layers(x)


class GatedCell(rt.nn.RNNCellBase):
    """A cell of one's own (``RNNCellBase`` without arguments, ``state_shape``) whose step
    has a tensor ``if``, run by ``rt.nn.RNN``."""

    def __init__(self):
        super().__init__()
        rt.seed(96)
        self.fc = rt.nn.Linear(4 + 3, 3)

    @property
    def state_shape(self):
        return (3,)

    def forward(self, x, h):
        z = self.fc(rt.concat([x, h], -1))
        if rt.mean(z) > 0:
            h = rt.tanh(z)
        else:
            h = z * 0.5
        return h, h


class RNNOfOwnCell(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.rnn = rt.nn.RNN(GatedCell())

    def forward(self, x):
        out, last = self.rnn(x)
        return out + rt.unsqueeze(last, 1)


SEQ = rand(2, 5, 4, seed=91)
SEQ3 = rand(3, 2, 4, seed=92)
LEN = np.array([5, 2], "int64")
SRC = np.array([[1, 3, 4], [2, 5, 0]], "int64")
SRC2 = np.array([[4, 4, 1], [3, 3, 3], [5, 1, 2]], "int64")
TOK = np.array([[3, 4, 0, 0], [1, 2, 9, 5]], "int64")
TOK2 = np.array([[7, 0, 0, 0], [2, 2, 0, 0], [5, 6, 7, 8]], "int64")
X3 = rand(4, 3, seed=93)
B2 = rand(2, 4, seed=94)
SEQ_SPEC = [InputSpec([None, None, 4], "float32")]

CASES = [
    case(ManualLSTM(), [(SEQ,), (SEQ3,)], kind="13", id="manual_lstm_over_traced_length",
         input_spec=SEQ_SPEC),
    case(GRUWithLengths(), [(SEQ, LEN), (SEQ, np.array([1, 3], "int64"))], kind="13",
         id="gru_cell_loop_with_lengths", input_spec="batch"),
    case(LSTMCollect(), [(SEQ,), (SEQ3,)], kind="13", id="lstm_cell_outputs_stacked",
         input_spec=SEQ_SPEC),
    case(GreedyDecoder(), [(SRC,), (SRC2,)], kind="13", id="greedy_decode_with_break",
         input_spec="batch"),
    case(WhileDecoder(), [(SRC,), (SRC2,)], kind="13", id="greedy_decode_while_finished",
         input_spec="batch"),
    case(BeamSearch(), [(B2,)], kind="13", id="beam_search_topk_loop"),
    case(ArrayStateBeamDecoder(), [(SRC,), (SRC2,)], kind="13", input_spec="batch",
         id="array_states_and_beam_decoder"),
    case(MaskedAttention(), [(SEQ, LEN), (SEQ, np.array([5, 5], "int64"))], kind="13",
         id="attention_with_length_mask"),
    case(SentimentPool(), [(TOK,), (TOK2,)], kind="13", id="sentiment_masked_pooling",
         input_spec="batch"),
    # the same models with exact shapes (no traced batch dim), for their control flow alone
    case(GRUWithLengths(), [(SEQ, LEN), (SEQ, np.array([1, 3], "int64"))], kind="13",
         id="gru_cell_loop_with_lengths_fixed_batch", input_spec=None),
    case(GreedyDecoder(), [(SRC,), (SRC2,)], kind="13", id="greedy_decode_fixed_batch"),
    case(WhileDecoder(), [(SRC,), (SRC2,)], kind="13", id="greedy_decode_while_fixed_batch"),
    case(SentimentPool(), [(TOK,), (TOK2,)], kind="13", id="sentiment_pooling_fixed_batch"),
    case(TrainingBranchNet(True), [(X3,)], kind="generic", id="layer_training_branch_train"),
    case(TrainingBranchNet(False), [(X3,)], kind="generic", id="layer_training_branch_eval"),
    case(StackOfGates(), [(X3,), (-X3,)], kind="generic", id="sublayers_with_tensor_if"),
    case(ResidualWhile(), [(X3,), (X3 * 3,)], kind="generic", id="layer_residual_while"),
    case(SequentialOfBranchingLayer(), [(X3,), (X3 - 5,)], kind="generic",
         id="sequential_holding_a_layer_with_tensor_if"),  # fmt: skip
    case(RNNOfOwnCell(), [(SEQ,), (-SEQ,)], kind="13", id="rnn_of_own_cell_with_tensor_if"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)


# ---- training: an MLP with a tensor branch, trained eagerly and as a static program -------


class BranchyMLP(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(95)
        self.fc1 = rt.nn.Linear(4, 8)
        self.fc2 = rt.nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)
        if rt.mean(h) > 0:
            h = F.relu(h)
        else:
            h = rt.tanh(h) * 0.5
        return self.fc2(h)


def _train(net, steps=4):
    opt = rt.optimizer.Adam(learning_rate=0.05, parameters=net.parameters())
    rng = np.random.default_rng(96)
    losses = []
    for _ in range(steps):
        x = rt.to_tensor(rng.normal(size=(8, 4)).astype("float32"))
        y = rt.to_tensor(rng.integers(0, 3, size=(8,)).astype("int64"))
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    return losses


TRAIN_XFAIL: str | None = None
KINDS["train_mlp_with_tensor_branch"] = "13"


@pytest.mark.timeout(60)
def test_train_mlp_with_tensor_branch(request):
    if TRAIN_XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=TRAIN_XFAIL))
    eager = _train(BranchyMLP())
    static_net = autostatic.to_static(
        BranchyMLP(), input_spec=[InputSpec([None, 4], "float32")]
    )
    static = _train(static_net)
    np.testing.assert_allclose(static, eager, rtol=1e-4, atol=1e-5)
