# autostatic: enable
"""A GRU sequence classifier that stops reading when every sequence has emitted its end token.

This module carries the pragma above, so when it is imported under autostatic's import hook
(``python -m autostatic run examples/train_gru.py``) its functions become convertible: the
``while`` below, whose condition is a tensor, becomes a ``while`` op when the model is traced
(and stays the plain Python loop it is when the model runs eagerly).

Tokens: 0 pads, 1 ends a sequence, 2..9 are words. The label says whether the word 7 appears
before the end token, and before any 3.
"""

from __future__ import annotations

import numpy as np

import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from autostatic_runtime import nn

PAD, END, WORDS, TARGET, BLOCKER = 0, 1, 10, 7, 3


class StoppingGRU(nn.Layer):
    """Embeds the tokens and runs a GRU cell over them until every sequence has ended (or
    the last position), keeping each sequence's state from its end token on; a linear head
    classifies the final state."""

    def __init__(self, vocab: int = WORDS, embed: int = 16, hidden: int = 32, classes: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.cell = nn.GRUCell(embed, hidden)
        self.head = nn.Linear(hidden, classes)
        self.hidden = hidden

    def forward(self, tokens):
        steps = tokens.shape[1]
        x = self.embed(tokens)
        h = rt.zeros([tokens.shape[0], self.hidden])
        done = tokens[:, 0] == END
        t = rt.zeros([], "int64")
        while t < steps and not rt.all(done):  # a data-dependent number of steps
            h_new, _ = self.cell(x[:, t], h)
            h = rt.where(rt.unsqueeze(done, 1), h, h_new)
            t += 1
            if t < steps:
                done = done | (tokens[:, t] == END)
        return self.head(h)


def train_step(model, tokens, labels, opt):
    """One training step: forward, backward and the optimizer's update."""
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def sequences(n: int, length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` token sequences of ``length`` positions (an end token at a random place, padding
    after it) and their labels (1 when the word 7 comes before the end token and any 3)."""
    tokens = rng.integers(2, WORDS, (n, length))
    ends = rng.integers(3, length, n)
    for i, e in enumerate(ends):
        tokens[i, e] = END
        tokens[i, e + 1 :] = PAD
    labels = np.array([_label(list(row[: list(row).index(END)])) for row in tokens])
    return tokens.astype(np.int64), labels.astype(np.int64)


def _label(words: list) -> bool:
    if TARGET not in words:
        return False
    return BLOCKER not in words or words.index(TARGET) < words.index(BLOCKER)
