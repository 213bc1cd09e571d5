"""Decoding loops and a transformer training step: autostatic against hand-written JAX.

    python benchmarks/bench_decode.py [--rounds 9] [--json out.json]

Workloads (issue 28), all with the same parameters in every version:

- **GRU decode**: greedy decoding with a GRU cell of 64, a vocabulary of 50, a batch of 16,
  written as eager code: ``while i < 40 and rt.any(~finished)`` appending each step's tokens
  to a list, ``rt.stack(toks, axis=1)`` at the end. Rows: eager, ``to_static`` on the
  default executor, ``to_static(backend="xla")`` (one XLA while loop over a [40, 16]
  buffer), and a hand-written ``jax.jit`` with ``lax.while_loop`` over a fixed buffer.
- **Transformer decode**: a 2-layer decoder-only transformer (``nn.TransformerEncoderLayer``
  with ``MultiHeadAttention.Cache``; d_model 32, 4 heads, vocabulary 50, batch 16) decoding
  greedily while ``i < 40 and rt.any(~finished)``, its KV caches concatenated to at each
  step. Rows as above; the hand-written JAX keeps [batch, heads, 40, head_dim] caches and
  masks the positions not written yet.
- **Encoder-layer training step**: ``nn.TransformerEncoderLayer(64, 4, 128)`` on a
  [16, 32, 64] batch, mean squared error, SGD. Rows: eager; ``to_static`` of the forward
  with eager ``loss.backward()``/``opt.step()`` (default executor, XLA); the whole step under
  ``to_static`` (``whole_step``: a row that says why when that cannot compile yet); and
  ``jax.jit`` of ``value_and_grad`` with the update, its parameters chained step to step.

Per-call times are medians of alternating batches against the hand-written JAX call in the
same run (``_timing.compare``); the machine is shared, so read the ratios, not the times.
Goals: GRU decode on XLA <= 1.2x JAX with no fallback, and the default executor <= PyTorch
eager's time (the row "default executor / PyTorch eager": its reference column is PyTorch's
time, measured in a process of its own with one thread and no autograd, when PyTorch is
installed); the transformer
decode on XLA <= 1.3x JAX; the encoder-layer step compiled whole on XLA <= 1.1x JAX's jitted
step. Both decodes run all 40 steps with these weights (the buffers' worst case).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from _timing import compare  # noqa: E402

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
from autostatic_runtime import nn  # noqa: E402
from autostatic_runtime.static.xla import XlaFallbackWarning  # noqa: E402

lax = jax.lax
BATCH, VOCAB, STEPS = 16, 50, 40


# ---- the GRU decode ----------------------------------------------------------------------------


class GRUDecoder(nn.Layer):
    def __init__(self, hidden=64, vocab=VOCAB, eos=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.eos = eos

    def forward(self, h):
        tok = rt.zeros([h.shape[0]], "int64")
        finished = rt.zeros([h.shape[0]], "bool")
        toks = []
        i = 0
        while i < STEPS and rt.any(~finished):
            y, h = self.cell(self.embedding(tok), h)
            tok = rt.argmax(self.out(y), axis=-1)
            toks.append(tok)
            finished = finished | (tok == self.eos)
            i += 1
        return rt.stack(toks, axis=1)


def gru_jax(params, h):
    emb, w_ih, b_ih, w_hh, b_hh, w_out, b_out = params
    batch = h.shape[0]

    def cell(x, h):
        x_r, x_z, x_c = jnp.split(x @ w_ih.T + b_ih, 3, axis=-1)
        h_r, h_z, h_c = jnp.split(h @ w_hh.T + b_hh, 3, axis=-1)
        r, z = jax.nn.sigmoid(x_r + h_r), jax.nn.sigmoid(x_z + h_z)
        c = jnp.tanh(x_c + r * h_c)
        return (h - c) * z + c

    def body(state):
        i, tok, h, finished, buf = state
        h = cell(emb[tok], h)
        tok = jnp.argmax(h @ w_out + b_out, axis=-1).astype(jnp.int32)
        return i + 1, tok, h, finished | (tok == 0), buf.at[:, i].set(tok)

    def cond(state):
        return (state[0] < STEPS) & jnp.any(~state[3])

    init = (0, jnp.zeros(batch, jnp.int32), h, jnp.zeros(batch, bool),
            jnp.zeros((batch, STEPS), jnp.int32))  # fmt: skip
    n, _, _, _, buf = lax.while_loop(cond, body, init)
    return buf, n


def gru_case():
    rt.seed(0)
    model = GRUDecoder()
    model.eval()
    h = rt.randn([BATCH, 64]) * 3.0
    cell = model.cell
    params = tuple(
        jnp.asarray(p.numpy())
        for p in (model.embedding.weight, cell.weight_ih, cell.bias_ih, cell.weight_hh,
                  cell.bias_hh, model.out.weight, model.out.bias)
    )  # fmt: skip
    return model, (h,), jax.jit(gru_jax), (params, jnp.asarray(h.numpy()))


TORCH_GRU = """
import sys, time, numpy as np, torch
torch.manual_seed(0)
torch.set_num_threads(1)
STEPS, BATCH, VOCAB = {steps}, {batch}, {vocab}
emb, cell, out = torch.nn.Embedding(VOCAB, 64), torch.nn.GRUCell(64, 64), torch.nn.Linear(64, VOCAB)
h0 = torch.randn(BATCH, 64) * 3.0


@torch.no_grad()
def decode(h):
    tok = torch.zeros(BATCH, dtype=torch.long)
    finished = torch.zeros(BATCH, dtype=torch.bool)
    toks = []
    i = 0
    while i < STEPS and bool(torch.any(~finished)):
        h = cell(emb(tok), h)
        tok = torch.argmax(out(h), dim=-1)
        toks.append(tok)
        finished = finished | (tok == 0)
        i += 1
    return torch.stack(toks, dim=1)


for _ in range(5):
    decode(h0)
times = []
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter()
    for _ in range(20):
        decode(h0)
    times.append((time.perf_counter() - t0) / 20)
print(sorted(times)[len(times) // 2], len(decode(h0)[0]))
"""


def torch_gru_seconds(rounds: int) -> tuple | None:
    """PyTorch eager's GRU decode (its own process, one thread, no autograd), median seconds
    and its step count (its random weights decode their own number of steps); None when
    PyTorch is not installed."""
    import importlib.util
    import subprocess

    if importlib.util.find_spec("torch") is None:
        return None
    code = TORCH_GRU.format(steps=STEPS, batch=BATCH, vocab=VOCAB)
    done = subprocess.run([sys.executable, "-c", code, str(rounds)], capture_output=True,
                          text=True)  # fmt: skip
    if done.returncode != 0:
        print(f"PyTorch: failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    seconds, steps = done.stdout.split()
    return float(seconds), int(steps)


# ---- the transformer decode -------------------------------------------------------------------


class TinyLM(nn.Layer):
    """A decoder-only transformer: token and position embeddings, self-attention layers
    (``TransformerEncoderLayer`` used causally through its cache), a linear head."""

    def __init__(self, d=32, heads=4, layers=2, vocab=VOCAB, eos=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.position = nn.Embedding(STEPS, d)
        self.blocks = nn.LayerList(
            [nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0) for _ in range(layers)]
        )
        self.head = nn.Linear(d, vocab)
        self.eos = eos

    def forward(self, tok):
        caches = [block.gen_cache(self.embedding(tok)[:, None, :]) for block in self.blocks]
        finished = rt.zeros(tok.shape, "bool")
        toks = []
        i = 0
        while i < STEPS and rt.any(~finished):
            x = self.embedding(tok)[:, None, :] + self.position(rt.full([1], i, "int64"))
            for j in range(len(self.blocks)):
                x, caches[j] = self.blocks[j](x, None, caches[j])
            tok = rt.argmax(self.head(x[:, 0]), axis=-1)
            toks.append(tok)
            finished = finished | (tok == self.eos)
            i += 1
        return rt.stack(toks, axis=1)


def _layer_params(block):
    attn = block.self_attn
    linears = (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj, block.linear1, block.linear2)
    weights = [(jnp.asarray(m.weight.numpy()), jnp.asarray(m.bias.numpy())) for m in linears]
    norms = [(jnp.asarray(n.weight.numpy()), jnp.asarray(n.bias.numpy()))
             for n in (block.norm1, block.norm2)]  # fmt: skip
    return weights, norms


def _layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * w + b


def encoder_layer_jax(params, x, heads, k=None, v=None, valid=None):
    """Post-norm self attention and feed-forward (Paddle's TransformerEncoderLayer); with
    caches ``k``/``v`` [batch, heads, capacity, head_dim], the new position is written at
    ``valid.sum() - 1`` and the positions past it are masked."""
    (wq, bq), (wk, bk), (wv, bv), (wo, bo), (w1, b1), (w2, b2) = params[0]
    (n1w, n1b), (n2w, n2b) = params[1]
    batch, length, d = x.shape
    hd = d // heads

    def split(t):
        return t.reshape(batch, length, heads, hd).transpose(0, 2, 1, 3)

    q, kn, vn = split(x @ wq + bq), split(x @ wk + bk), split(x @ wv + bv)
    scores_mask = None
    if k is not None:
        at = valid.sum() - 1
        k = lax.dynamic_update_slice_in_dim(k, kn, at, 2)
        v = lax.dynamic_update_slice_in_dim(v, vn, at, 2)
        scores_mask = jnp.where(valid, 0.0, -jnp.inf)
    else:
        k, v = kn, vn
    scores = q @ k.transpose(0, 1, 3, 2) * hd**-0.5
    if scores_mask is not None:
        scores = scores + scores_mask
    out = jax.nn.softmax(scores, axis=-1) @ v
    out = out.transpose(0, 2, 1, 3).reshape(batch, length, d) @ wo + bo
    h = _layer_norm(x + out, n1w, n1b)
    h = _layer_norm(h + jax.nn.relu(h @ w1 + b1) @ w2 + b2, n2w, n2b)
    return h, k, v


def lm_jax(params, tok):
    emb, pos, layers, (wh, bh), heads = params
    batch = tok.shape[0]
    hd = emb.shape[1] // heads

    def body(state):
        i, tok, finished, caches, buf = state
        x = emb[tok][:, None, :] + pos[i]
        valid = jnp.arange(STEPS) <= i
        new = []
        for layer, (k, v) in zip(layers, caches):
            x, k, v = encoder_layer_jax(layer, x, heads, k, v, valid)
            new.append((k, v))
        tok = jnp.argmax(x[:, 0] @ wh + bh, axis=-1).astype(jnp.int32)
        return i + 1, tok, finished | (tok == 0), new, buf.at[:, i].set(tok)

    def cond(state):
        return (state[0] < STEPS) & jnp.any(~state[2])

    zeros = jnp.zeros((batch, heads, STEPS, hd), jnp.float32)
    init = (0, tok, jnp.zeros(batch, bool), [(zeros, zeros) for _ in layers],
            jnp.zeros((batch, STEPS), jnp.int32))  # fmt: skip
    n, _, _, _, buf = lax.while_loop(cond, body, init)
    return buf, n


def lm_case():
    rt.seed(3)
    model = TinyLM()
    model.eval()
    tok = rt.randint(1, VOCAB, [BATCH])
    params = (
        jnp.asarray(model.embedding.weight.numpy()),
        jnp.asarray(model.position.weight.numpy()),
        [_layer_params(b) for b in model.blocks],
        (jnp.asarray(model.head.weight.numpy()), jnp.asarray(model.head.bias.numpy())),
    )
    heads = model.blocks[0].self_attn.num_heads
    fn = jax.jit(lambda p, t: lm_jax((*p, heads), t))
    return model, (tok,), fn, (params, jnp.asarray(tok.numpy(), jnp.int32))


# ---- decode rows ----------------------------------------------------------------------------


def decode_rows(name: str, make, rounds: int) -> list:
    """Eager, default executor and XLA against the hand-written JAX (same process, in
    alternating batches); every version's tokens checked against eager's first."""
    model, args, jitted, jax_args = make()
    want = model(*args).numpy()
    buf, n = jitted(*jax_args)
    np.testing.assert_array_equal(np.asarray(buf)[:, : int(n)], want)  # the same decode

    def hand():
        return jax.block_until_ready(jitted(*jax_args))

    rows = []
    versions = [("eager", model)]
    for backend in (None, "xla"):
        static = autostatic.to_static(copy.deepcopy(model), backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("error", XlaFallbackWarning)  # a fallback's figure is wrong
            np.testing.assert_array_equal(static(*args).numpy(), want)
        versions.append((backend or "default executor", static))
    for label, fn in versions:
        ref, got, ratio = compare(hand, lambda fn=fn: fn(*args), rounds=rounds)
        rows.append((name, label, ref, got, ratio))
    return rows


# ---- the encoder-layer training step --------------------------------------------------------


def step_case():
    rt.seed(5)
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0)
    rng = np.random.default_rng(0)
    x = rt.to_tensor(rng.normal(size=(16, 32, 64)).astype("float32"))
    y = rt.to_tensor(rng.normal(size=(16, 32, 64)).astype("float32"))
    return layer, x, y


def mse(out, y):
    return rt.mean((out - y) ** 2)


def split_step(layer):
    """``to_static`` of the forward; the backward and the update run from eager code."""
    opt = rt.optimizer.SGD(0.01, parameters=layer.parameters())

    def step(x, y):
        loss = mse(layer(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


def whole_step(layer, backend):
    """The whole training step (forward, ``loss.backward()``, ``opt.step()``) under one
    ``to_static`` (``step_rows`` reports why when it does not compile into one program)."""
    opt = rt.optimizer.SGD(0.01, parameters=layer.parameters())

    def train_step(x, y):
        loss = mse(layer(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return autostatic.to_static(train_step, backend=backend)


def encoder_jax_step(params, x, y):
    def loss(p):
        out, _, _ = encoder_layer_jax(p, x, 4)
        return jnp.mean((out - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def step_rows(rounds: int) -> list:
    layer, x, y = step_case()
    params = _layer_params(layer)
    jitted = jax.jit(encoder_jax_step)
    state = [params]
    xj, yj = jnp.asarray(x.numpy()), jnp.asarray(y.numpy())

    def hand():  # as a training loop runs it: each step takes the last step's parameters
        loss, state[0] = jitted(state[0], xj, yj)
        return jax.block_until_ready(loss)

    want = float(jitted(params, xj, yj)[0])
    versions = [("eager forward+backward+SGD", split_step(copy.deepcopy(layer)))]
    for backend in (None, "xla"):
        copied = copy.deepcopy(layer)
        static = split_step(autostatic.to_static(copied, backend=backend))
        versions.append((f"to_static forward ({backend or 'default'}) + eager update", static))
    missing = []
    checked = []
    for backend in (None, "xla"):
        label = f"to_static whole step ({backend or 'default'})"
        try:
            fn = whole_step(copy.deepcopy(layer), backend)
            with warnings.catch_warnings():
                warnings.simplefilter("error", XlaFallbackWarning)
                got = float(fn(x, y))
            np.testing.assert_allclose(got, want, rtol=1e-4)
            versions.append((label, fn))
            checked.append(fn)  # (its first step is made: the loop below would check a second)
        except Exception as exc:  # noqa: BLE001  (reported as a row: what is missing)
            why = f"not compiled: {type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
            missing.append(("encoder step", label, float("nan"), float("nan"), float("nan"), why))
    rows = []
    for label, fn in versions:
        if fn not in checked:
            np.testing.assert_allclose(float(fn(x, y)), want, rtol=1e-4)  # the first step agrees
        ref, got, ratio = compare(hand, lambda fn=fn: fn(x, y), rounds=rounds)
        rows.append(("encoder step", label, ref, got, ratio))
    return rows + missing


# ---- main -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    rows = decode_rows("GRU decode", gru_case, args.rounds)
    found = torch_gru_seconds(args.rounds)
    if found is not None:  # the default executor of this run against PyTorch's time
        seconds, steps = found
        default = next(r for r in rows if r[1] == "default executor")[3] * steps / STEPS
        rows.append(("GRU decode", "default executor / PyTorch eager (1 thread)", seconds,
                     default, default / seconds))  # fmt: skip
    rows += decode_rows("transformer decode", lm_case, args.rounds)
    rows += step_rows(args.rounds)
    print(f"{'workload':20s} {'version':48s} {'jax.jit':>10s} {'autostatic':>11s} {'ratio':>7s}")
    for row in rows:
        name, label, ref, got, ratio = row[:5]
        note = f"  ({row[5]})" if len(row) > 5 else ""
        print(f"{name:20s} {label:48s} {ref * 1e6:8.1f}us {got * 1e6:9.1f}us {ratio:6.2f}x{note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([list(r) for r in rows], f, indent=1)


if __name__ == "__main__":
    main()
