"""Models of the kind dygraph users write, eager vs ``to_static`` with unknown batch and
sequence length: a seq2seq with attention and beam search (LSTM encoder with lengths, LSTMCell
decoder, topk / floor_divide / gather_nd / gather_tree), a GRU sentiment classifier trained
both ways, an LSTM language model saved and loaded, and the hand-written LSTM of Paddle's
PTB language model test trained both ways."""

from __future__ import annotations

import numpy as np

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn

F = nn.functional
SEQ_SPEC = [InputSpec([None, None], "int64", "src"), InputSpec([None], "int64", "lengths")]


class Seq2Seq(nn.Layer):
    def __init__(self, vocab=12, hidden=8, beam=3, max_steps=6):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, hidden)
        self.tar_emb = nn.Embedding(vocab, hidden)
        self.encoder = nn.LSTM(hidden, hidden)
        self.cell = nn.LSTMCell(hidden * 2, hidden)
        self.attn = nn.Linear(hidden, hidden, bias_attr=False)
        self.out = nn.Linear(hidden * 2, vocab)
        self.vocab, self.hidden, self.beam, self.max_steps = vocab, hidden, beam, max_steps

    def attention(self, query, enc_out, enc_mask):
        scores = rt.matmul(rt.unsqueeze(self.attn(query), [1]), enc_out, transpose_y=True)
        scores = scores + rt.unsqueeze((enc_mask - 1.0) * 1e9, [1])
        weights = F.softmax(scores, axis=-1)
        return rt.squeeze(rt.matmul(weights, enc_out), [1])

    def forward(self, src, src_len):
        batch_size = src.shape[0]
        enc_out, (h, c) = self.encoder(self.src_emb(src), sequence_length=src_len)
        enc_mask = F.sequence_mask(src_len, maxlen=src.shape[1], dtype="float32")
        # tile everything to batch * beam
        def tile_beam(t):
            t = rt.unsqueeze(t, [1])
            t = rt.expand(t, [t.shape[0], self.beam] + t.shape[2:])
            return rt.reshape(t, [-1] + t.shape[2:])
        enc_out, enc_mask = tile_beam(enc_out), tile_beam(enc_mask)
        h, c = tile_beam(h[0]), tile_beam(c[0])
        log_probs = rt.to_tensor([[0.0] + [-1e9] * (self.beam - 1)])
        log_probs = rt.expand(log_probs, [batch_size, self.beam])
        tokens = rt.full([batch_size * self.beam], 1, "int64")
        batch_pos = rt.expand(rt.unsqueeze(rt.arange(batch_size), [1]), [batch_size, self.beam])
        predicted, parents = [], []
        for _step in range(self.max_steps):
            ctx = self.attention(h, enc_out, enc_mask)
            x = rt.concat([self.tar_emb(tokens), ctx], axis=-1)
            out, (h, c) = self.cell(x, (h, c))
            logits = self.out(rt.concat([out, ctx], axis=-1))
            step_lp = F.log_softmax(logits, axis=-1)
            scores = rt.reshape(step_lp, [-1, self.beam, self.vocab]) + rt.unsqueeze(log_probs, [2])
            scores = rt.reshape(scores, [-1, self.beam * self.vocab])
            top_scores, top_idx = rt.topk(scores, k=self.beam)
            beam_idx = rt.floor_divide(top_idx, rt.to_tensor(self.vocab))
            token_idx = rt.remainder(top_idx, rt.to_tensor(self.vocab))
            log_probs = rt.gather_nd(scores, rt.stack([batch_pos, top_idx], axis=2))
            flat = rt.reshape(beam_idx + batch_pos * self.beam, [-1])
            h, c = rt.gather(h, flat), rt.gather(c, flat)
            tokens = rt.reshape(token_idx, [-1])
            predicted.append(token_idx)
            parents.append(beam_idx)
        ids = F.gather_tree(rt.stack(predicted), rt.stack(parents))
        return rt.transpose(ids, [1, 0, 2]), log_probs


def test_seq2seq_beam_search_matches_eager_for_every_batch_and_length(tmp_path):
    rt.seed(0)
    model = Seq2Seq()
    model.eval()
    sf = autostatic.to_static(model, input_spec=SEQ_SPEC)
    cases = [(rt.randint(2, 12, [4, 5]), rt.to_tensor([5, 3, 2, 4])),
             (rt.randint(2, 12, [2, 7]), rt.to_tensor([7, 4]))]  # fmt: skip
    got = [sf(src, lens) for src, lens in cases]
    assert sf.forward.program_cache.misses == 1
    autostatic.save(model, str(tmp_path / "s2s"))
    loaded = autostatic.load(str(tmp_path / "s2s"))
    sf.forward.rollback()
    for (src, lens), outs in zip(cases, got):
        want = model(src, lens)
        assert outs[0].shape == [src.shape[0], 6, 3]
        for g, w, saved in zip(outs, want, loaded(src, lens)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(saved.numpy(), g.numpy(), rtol=1e-5, atol=1e-5)


class Sentiment(nn.Layer):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden, padding_idx=0)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, direction="bidirect")
        self.fc = nn.Linear(hidden * 2, 2)

    def forward(self, words, lengths):
        out, last = self.gru(self.emb(words), sequence_length=lengths)
        mask = F.sequence_mask(lengths, maxlen=words.shape[1], dtype="float32")
        pooled = rt.sum(out * rt.unsqueeze(mask, [2]), axis=1) / rt.unsqueeze(
            rt.cast(lengths, "float32"), [1]
        )
        return self.fc(pooled + rt.concat([last[-2], last[-1]], axis=-1))


def _train(model, forward, batches):
    opt = rt.optimizer.Adagrad(0.1, parameters=model.parameters())
    losses = []
    for words, lengths, label in batches:
        logits = forward(words, lengths)
        loss = F.cross_entropy(logits, label)
        acc = rt.metric.accuracy(F.softmax(logits), rt.unsqueeze(label, [1]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append((float(loss), float(acc)))
    return losses


def test_gru_classifier_trains_the_same_eagerly_and_as_a_program():
    rng = np.random.default_rng(0)
    batches = []
    for steps in (6, 4, 6):
        lengths = rng.integers(1, steps + 1, size=5)
        words = rng.integers(1, 20, size=(5, steps)) * (np.arange(steps) < lengths[:, None])
        batches.append((rt.to_tensor(words), rt.to_tensor(lengths), rt.randint(0, 2, [5])))
    rt.seed(1)
    eager = Sentiment()
    rt.seed(1)
    static_model = Sentiment()
    sf = autostatic.to_static(static_model, input_spec=SEQ_SPEC)
    want = _train(eager, eager, batches)
    got = _train(static_model, sf, batches)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert sf.forward.program_cache.misses == 1


class LanguageModel(nn.Layer):
    def __init__(self, vocab=30, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, dropout=0.1)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, x, h0, c0):
        out, (h, c) = self.lstm(self.emb(x), (h0, c0))
        return self.proj(out), h, c


def test_lstm_language_model_with_carried_states_saves_and_loads(tmp_path):
    rt.seed(2)
    lm = LanguageModel()
    lm.eval()
    spec = [InputSpec([None, None], "int64"), InputSpec([2, None, 16]), InputSpec([2, None, 16])]
    autostatic.save(lm, str(tmp_path / "lm"), input_spec=spec)
    loaded = autostatic.load(str(tmp_path / "lm"))
    x, h, c = rt.randint(0, 30, [3, 9]), rt.zeros([2, 3, 16]), rt.zeros([2, 3, 16])
    for _ in range(2):  # states carried from one chunk to the next
        want = lm(x, h, c)
        got = loaded(x, h, c)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
        _, h, c = want


class SimpleLSTMRNN(nn.Layer):
    """The hand-written LSTM of Paddle's PTB language model test (``paddle.slice`` of the
    initial states per layer, one ``matmul`` of the concatenated input and hidden state)."""

    def __init__(self, hidden=8, steps=4, layers=2):
        super().__init__()
        self.hidden, self.steps, self.layers = hidden, steps, layers
        init = nn.initializer.Uniform(-0.1, 0.1)
        self.weights = nn.ParameterList([
            self.create_parameter([hidden * 2, hidden * 4], default_initializer=init)
            for _ in range(layers)
        ])  # fmt: skip
        self.biases = nn.ParameterList([
            self.create_parameter([hidden * 4], is_bias=True) for _ in range(layers)
        ])  # fmt: skip

    def forward(self, x, init_hidden, init_cell):
        hidden = [rt.reshape(rt.slice(init_hidden, axes=[0], starts=[i], ends=[i + 1]),
                             [-1, self.hidden]) for i in range(self.layers)]  # fmt: skip
        cell = [rt.reshape(rt.slice(init_cell, axes=[0], starts=[i], ends=[i + 1]),
                           [-1, self.hidden]) for i in range(self.layers)]  # fmt: skip
        outs = []
        for k in range(self.steps):
            step = x[:, k, :]
            for i in range(self.layers):
                gates = rt.matmul(rt.concat([step, hidden[i]], 1), self.weights[i]) + self.biases[i]
                i_g, j, f, o = rt.split(gates, num_or_sections=4, axis=-1)
                cell[i] = cell[i] * F.sigmoid(f) + F.sigmoid(i_g) * rt.tanh(j)
                hidden[i] = rt.tanh(cell[i]) * F.sigmoid(o)
                step = hidden[i]
            outs.append(rt.unsqueeze(step, [1]))
        return rt.concat(outs, 1), rt.stack(hidden), rt.stack(cell)


class PtbModel(nn.Layer):
    def __init__(self, vocab=20, hidden=8, steps=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.rnn = SimpleLSTMRNN(hidden, steps)
        self.softmax_w = self.create_parameter([hidden, vocab])
        self.vocab, self.steps = vocab, steps

    def forward(self, x, y, init_hidden, init_cell):
        out, h, c = self.rnn(self.emb(x), init_hidden, init_cell)
        logits = rt.reshape(rt.matmul(out, self.softmax_w), [-1, self.steps, self.vocab])
        loss = F.softmax_with_cross_entropy(logits, rt.unsqueeze(y, [2]))
        return rt.sum(rt.mean(loss, axis=[0])), h, c


def test_ptb_language_model_trains_the_same_as_a_program():
    rng = np.random.default_rng(0)
    batch = (rt.to_tensor(rng.integers(0, 20, (3, 4))), rt.to_tensor(rng.integers(0, 20, (3, 4))))
    data = [batch] * 3
    spec = [InputSpec([None, 4], "int64"), InputSpec([None, 4], "int64"),
            InputSpec([2, None, 8]), InputSpec([2, None, 8])]  # fmt: skip
    results = []
    for to_static in (False, True):
        rt.seed(7)
        model = PtbModel()
        forward = autostatic.to_static(model, input_spec=spec) if to_static else model
        opt = rt.optimizer.SGD(0.5, parameters=model.parameters())
        h, c = rt.zeros([2, 3, 8]), rt.zeros([2, 3, 8])
        losses = []
        for x, y in data:
            loss, h, c = forward(x, y, h.detach(), c.detach())
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
        results.append(losses)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)
    assert results[0][-1] < results[0][0]


class UpDown(nn.Layer):
    """A small image-to-image generator of the CycleGAN kind: reflect padding, strided
    convolutions with batch norm on global statistics, a transposed convolution back up with
    Paddle's extra output padding, leaky ReLU and tanh; and its patch discriminator."""

    def __init__(self, channels=3, width=4):
        super().__init__()
        attr = rt.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.2))
        self.down = nn.Conv2D(channels, width, 3, stride=2, padding=1, weight_attr=attr,
                              bias_attr=False)  # fmt: skip
        self.bn = nn.BatchNorm(width, use_global_stats=True, trainable_statistics=True)
        self.up = nn.Conv2DTranspose(width, width, 3, stride=2, padding=[1, 1], weight_attr=attr,
                                     bias_attr=False)  # fmt: skip
        self.out = nn.Conv2D(width, channels, 3, weight_attr=attr)
        self.critic = nn.Conv2D(channels, 1, 4, stride=2, padding=1, weight_attr=attr)

    def forward(self, image):
        y = F.leaky_relu(self.bn(self.down(image)), 0.2)
        y = nn.Pad2D([0, 1, 0, 1], mode="constant", value=0.0)(self.up(y))
        fake = rt.tanh(self.out(nn.Pad2D([1, 1, 1, 1], mode="reflect")(y)))
        cycle = rt.mean(rt.abs(rt.subtract(image, fake))) * 10.0
        return fake, cycle + rt.mean(rt.square(self.critic(fake) - 1))


def test_gan_generator_with_a_transposed_convolution_trains_exactly_as_eager():
    reader = rt.batch(lambda: (np.full((3, 8, 8), i / 10, "float32") for i in range(6)), 2)
    results = []
    for to_static in (False, True):
        rt.seed(3)
        model = UpDown()
        forward = autostatic.to_static(model) if to_static else model
        opt = rt.optimizer.Adam(rt.optimizer.lr.PiecewiseDecay([2], [0.01, 0.005]), beta1=0.5,
                                parameters=model.parameters())  # fmt: skip
        losses = []
        for samples in reader():
            fake, loss = forward(rt.to_tensor(np.stack(samples)))
            loss.backward()
            opt.minimize(loss)
            model.clear_gradients()
            losses.append(float(loss))
        assert fake.shape == [2, 3, 8, 8] and len(losses) == 3
        results.append(losses)
    np.testing.assert_array_equal(results[1], results[0])  # Paddle's test asks this much
    assert list(rt.batch(lambda: range(5), 2, drop_last=True)()) == [[0, 1], [2, 3]]


class CostLayer(nn.Layer):
    """Paddle's LAC CRF layers: eager calls go through _legacy_C_ops, traced ones through
    the layer's LayerHelper (append_op by op type), the transition shared by a property."""

    def __init__(self, tags, op_type):
        super().__init__()
        self._transition = self.create_parameter([tags + 2, tags], attr=rt.ParamAttr(
            initializer=nn.initializer.Uniform(-0.5, 0.5)))  # fmt: skip
        self._op_type = op_type

    @property
    def weight(self):
        return self._transition

    @weight.setter
    def weight(self, value):
        self._transition = value

    def forward(self, emission, label=None, length=None):
        if rt.in_dynamic_mode():
            op = getattr(rt._legacy_C_ops, self._op_type)
            out = op(emission, self._transition, label, length, "is_test", False)
            return out[3] if self._op_type == "linear_chain_crf" else out
        result = self._helper.create_variable_for_type_inference(dtype="float32")
        inputs = {"Emission": [emission], "Transition": self._transition, "Label": [label]}
        if length is not None:
            inputs["Length"] = [length]
        slot = "LogLikelihood" if self._op_type == "linear_chain_crf" else "ViterbiPath"
        self._helper.append_op(type=self._op_type, inputs=inputs, outputs={slot: result},
                               attrs={"is_test": False})  # fmt: skip
        return result


class CrfTagger(nn.Layer):
    def __init__(self, vocab=20, hidden=6, tags=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, direction="bidirect")
        self.fc = nn.Linear(hidden * 2, tags)
        self.crf = CostLayer(tags, "linear_chain_crf")
        self.decoder = CostLayer(tags, "crf_decoding")
        self.decoder.weight = self.crf.weight  # one transition for both

    def forward(self, words, targets, lengths):
        out, _ = self.gru(self.emb(words), sequence_length=lengths)
        emission = self.fc(out)
        cost = rt.mean(self.crf(emission, targets, lengths))
        return cost, self.decoder(emission, length=lengths)


def test_crf_tagger_built_by_layer_helper_trains_the_same_as_a_program(tmp_path):
    rng = np.random.default_rng(3)
    batches = []
    for steps in (5, 3, 5):
        lengths = rng.integers(1, steps + 1, size=4)
        mask = np.arange(steps) < lengths[:, None]
        words, tags = rng.integers(1, 20, (4, steps)) * mask, rng.integers(0, 4, (4, steps)) * mask
        batches.append([rt.to_tensor(a) for a in (words, tags, lengths)])
    specs = [InputSpec([None, None], "int64"), InputSpec([None, None], "int64"),
             InputSpec([None], "int64")]  # fmt: skip
    results = []
    for to_static in (False, True):
        rt.seed(11)
        model = CrfTagger()
        assert model.decoder.weight is model.crf.weight
        forward = autostatic.to_static(model, input_spec=specs) if to_static else model
        opt = rt.optimizer.Adam(0.05, parameters=model.parameters())
        losses = []
        for words, tags, lengths in batches:
            cost, decoded = forward(words, tags, lengths)
            cost.backward()
            opt.minimize(cost)
            model.clear_gradients()
            losses.append(float(cost))
            scores = rt.metric.chunk_eval(decoded, tags, lengths, num_chunk_types=2)
            assert 0.0 <= float(scores[2]) <= 1.0
        results.append((losses, decoded.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_array_equal(results[1][1], results[0][1])
    autostatic.save(forward, tmp_path / "tagger", input_spec=specs, output_spec=[decoded],
                    input_names_after_prune=[specs[0].name, specs[2].name])  # fmt: skip
    loaded = autostatic.load(str(tmp_path / "tagger"))
    now = forward(words, tags, lengths)[1]  # with the weights the last step left
    np.testing.assert_array_equal(loaded(words, lengths).numpy(), now.numpy())


class TinyYolo(nn.Layer):
    """YOLOv3's heads in miniature: two scales, the coarse route upsampled to a size computed
    from its traced shape and concatenated, the loss per scale from yolo_loss."""

    anchors, masks, classes = [4, 5, 8, 10, 12, 9, 16, 14], [[2, 3], [0, 1]], 3

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, 8, 3, stride=2, padding=1)
        self.down = nn.Conv2D(8, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm(8, act="leaky_relu")
        self.coarse_out = nn.Conv2D(8, 2 * (5 + self.classes), 1)
        self.fine_out = nn.Conv2D(16, 2 * (5 + self.classes), 1)

    def forward(self, image, gt_box, gt_label, gt_score):
        fine = self.stem(image)
        coarse = self.bn(self.down(fine))
        hw = rt.cast(rt.slice(rt.shape(coarse), axes=[0], starts=[2], ends=[4]), "int32")
        route = F.interpolate(coarse, size=hw * 2, mode="nearest")
        outputs = [self.coarse_out(coarse), self.fine_out(rt.concat([route, fine], axis=1))]
        losses, downsample = [], 8
        for out, mask in zip(outputs, self.masks):
            loss = rt.vision.ops.yolo_loss(
                x=out, gt_box=gt_box, gt_label=gt_label, gt_score=gt_score,
                anchors=self.anchors, anchor_mask=mask, class_num=self.classes,
                ignore_thresh=0.7, downsample_ratio=downsample, use_label_smooth=True)  # fmt: skip
            losses.append(rt.mean(loss))
            downsample //= 2
        return sum(losses)


def test_yolo_heads_train_the_same_as_a_program():
    rng = np.random.default_rng(4)
    image = rt.to_tensor(rng.normal(0.5, 0.2, (2, 3, 16, 16)).astype("float32"))
    boxes = rt.to_tensor(np.array([[[0.25, 0.25, 0.5, 0.5], [0.6, 0.7, 0.3, 0.4]],
                                   [[0.5, 0.4, 0.8, 0.6], [0, 0, 0, 0]]], "float32"))  # fmt: skip
    labels, scores = rt.to_tensor([[1, 2], [0, 0]], "int32"), rt.ones([2, 2])
    results = []
    for to_static in (False, True):
        rt.seed(5)
        model = TinyYolo()
        forward = autostatic.to_static(model) if to_static else model
        steps = rt.optimizer.lr.PiecewiseDecay([100], [0.01, 0.001])
        schedule = rt.optimizer.lr.LinearWarmup(steps, warmup_steps=2, start_lr=0.0, end_lr=0.01)
        opt = rt.optimizer.Momentum(schedule, momentum=0.9, parameters=model.parameters(),
                                    weight_decay=rt.regularizer.L2Decay(0.0005))  # fmt: skip
        losses = []
        for _ in range(3):
            loss = forward(image, boxes, labels, scores)
            loss.backward()
            opt.minimize(loss)
            model.clear_gradients()
            schedule.step()
            losses.append(float(loss))
        results.append(losses)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-5)
    assert results[0][2] < results[0][0]
