"""Beam search decoding (Paddle 2.x ``paddle.nn.BeamSearchDecoder`` and
``paddle.nn.dynamic_decode``).

    decoder = nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=4,
                                   embedding_fn=embedding, output_fn=output_layer)
    ids, states = nn.dynamic_decode(decoder, inits=encoder_state, max_step_num=20)
    # ids: [batch, time, beam] token ids, backtraced with gather_tree

Each step expands every beam by the vocabulary, keeps the ``beam_size`` best continuations
per batch entry (scores are summed log-probabilities), and reorders the cell states to
follow their parent beams; a finished beam only continues with ``end_token`` at no cost.
Eagerly the loop runs until every beam is finished (or past ``max_step_num`` steps). While
tracing it is a ``while`` op with the same stopping rule, writing each step's outputs into
buffers of ``max_step_num + 1`` steps that are cut to the steps taken, so the program stops
early just as eager code does.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from autostatic_runtime.nn import functional as F
from autostatic_runtime.static.control_flow import flatten, unflatten

__all__ = ["Decoder", "BeamSearchDecoder", "dynamic_decode"]

_NEG_INF = -1e9


def _rt():
    import autostatic_runtime as rt

    return rt


def _map(fn, structure: Any) -> Any:
    leaves, spec = flatten(structure)
    return unflatten(spec, [fn(x) for x in leaves])


class Decoder:
    """Base of decoders driven by ``dynamic_decode``: ``initialize(inits) -> (inputs, states,
    finished)``, ``step(time, inputs, states) -> (outputs, states, inputs, finished)``,
    ``finalize(outputs, states, lengths) -> (outputs, states)``."""

    tracks_own_finished = False

    def initialize(self, inits: Any) -> tuple:
        raise NotImplementedError

    def step(self, time: Any, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        raise NotImplementedError

    def finalize(self, outputs: Any, final_states: Any, sequence_lengths: Any) -> tuple:
        return outputs, final_states


class BeamSearchDecoder(Decoder):
    """Beam search over ``cell`` (an RNN cell: ``cell(inputs, states) -> (out, states)``)."""

    OutputWrapper = namedtuple("OutputWrapper", ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = namedtuple("StateWrapper", ("cell_states", "log_probs", "finished", "lengths"))
    tracks_own_finished = True

    def __init__(self, cell: Any, start_token: int, end_token: int, beam_size: int,
                 embedding_fn: Any = None, output_fn: Any = None):  # fmt: skip
        self.cell = cell
        self.embedding_fn = embedding_fn
        self.output_fn = output_fn
        self.start_token = int(start_token)
        self.end_token = int(end_token)
        self.beam_size = int(beam_size)

    # -- reshaping between [batch, beam, ...] and [batch * beam, ...] ---------------------------
    @staticmethod
    def tile_beam_merge_with_batch(x: Any, beam_size: int) -> Any:
        """``[batch, ...]`` -> ``[batch * beam_size, ...]``, each entry repeated per beam."""
        rt = _rt()
        x = rt.unsqueeze(x, [1])
        x = rt.expand(x, [x.shape[0] if x.shape[0] >= 0 else rt.shape(x)[0], beam_size]
                      + list(x.shape[2:]))  # fmt: skip
        return rt.reshape(x, [-1] + list(x.shape[2:]))

    def _merge_batch_beams(self, x: Any) -> Any:
        return _rt().reshape(x, [-1] + list(x.shape[2:]))

    def _split_batch_beams(self, x: Any) -> Any:
        return _rt().reshape(x, [-1, self.beam_size] + list(x.shape[1:]))

    def _gather(self, x: Any, indices: Any, batch_size: Any) -> Any:
        """``x[b, indices[b, k]]`` for ``x`` of shape [batch, beam, ...]."""
        rt = _rt()
        batch_pos = rt.expand(rt.unsqueeze(rt.arange(batch_size), [1]),
                              [batch_size, self.beam_size])  # fmt: skip
        return rt.gather_nd(x, rt.stack([batch_pos, indices], axis=2))

    # -- the decoder protocol ------------------------------------------------------------------
    def initialize(self, initial_cell_states: Any) -> tuple:
        rt = _rt()
        state = flatten(initial_cell_states)[0][0]
        self.batch_size = state.shape[0] if state.shape[0] >= 0 else rt.shape(state)[0]
        cell_states = _map(
            lambda x: self._split_batch_beams(self.tile_beam_merge_with_batch(x, self.beam_size)),
            initial_cell_states,
        )
        start = rt.full([self.batch_size, self.beam_size], self.start_token, "int64")
        inputs = self.embedding_fn(start) if self.embedding_fn is not None else start
        log_probs = rt.expand(
            rt.to_tensor([[0.0] + [_NEG_INF] * (self.beam_size - 1)], dtype=state.dtype),
            [self.batch_size, self.beam_size],
        )
        finished = rt.full([self.batch_size, self.beam_size], False, "bool")
        lengths = rt.zeros([self.batch_size, self.beam_size], "int64")
        states = self.StateWrapper(cell_states, log_probs, finished, lengths)
        return inputs, states, finished

    def _mask_probs(self, probs: Any, finished: Any) -> Any:
        """Finished beams continue only with ``end_token``, at log-probability 0."""
        rt = _rt()
        vocab = probs.shape[-1]
        end_row = rt.to_tensor(
            [0.0 if i == self.end_token else _NEG_INF for i in range(vocab)], dtype=probs.dtype
        )
        done = rt.unsqueeze(rt.cast(finished, probs.dtype), [2])
        return probs * (1.0 - done) + end_row * done

    def _beam_search_step(self, time: Any, logits: Any, next_cell_states: Any,
                          beam_state: Any) -> tuple:  # fmt: skip
        rt = _rt()
        vocab = logits.shape[-1]
        step_log_probs = self._mask_probs(F.log_softmax(logits, axis=-1), beam_state.finished)
        log_probs = step_log_probs + rt.unsqueeze(beam_state.log_probs, [2])
        scores = rt.reshape(log_probs, [-1, self.beam_size * vocab])
        topk_scores, topk_indices = rt.topk(scores, k=self.beam_size)
        beam_indices = rt.floor_divide(topk_indices, rt.full([], vocab, "int64"))
        token_indices = rt.remainder(topk_indices, rt.full([], vocab, "int64"))
        next_log_probs = self._gather(scores, topk_indices, self.batch_size)
        next_cell_states = _map(
            lambda x: self._gather(x, beam_indices, self.batch_size), next_cell_states
        )
        next_finished = self._gather(beam_state.finished, beam_indices, self.batch_size)
        next_lengths = self._gather(beam_state.lengths, beam_indices, self.batch_size)
        next_lengths = next_lengths + rt.cast(rt.logical_not(next_finished), "int64")
        next_finished = rt.logical_or(next_finished, rt.equal(token_indices, self.end_token))
        output = self.OutputWrapper(topk_scores, token_indices, beam_indices)
        state = self.StateWrapper(next_cell_states, next_log_probs, next_finished, next_lengths)
        return output, state

    def step(self, time: Any, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        inputs = _map(self._merge_batch_beams, inputs)
        cell_states = _map(self._merge_batch_beams, states.cell_states)
        cell_outputs, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_outputs = _map(self._split_batch_beams, cell_outputs)
        next_cell_states = _map(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        output, state = self._beam_search_step(time, cell_outputs, next_cell_states, states)
        ids = output.predicted_ids
        next_inputs = self.embedding_fn(ids) if self.embedding_fn is not None else ids
        return output, state, next_inputs, state.finished

    def finalize(self, outputs: Any, final_states: Any, sequence_lengths: Any) -> tuple:
        """Backtrace the beams: ``predicted_ids`` [time, batch, beam] with ``gather_tree``."""
        return F.gather_tree(outputs.predicted_ids, outputs.parent_ids), final_states


def dynamic_decode(decoder: Decoder, inits: Any = None, max_step_num: int | None = None,
                   output_time_major: bool = False, impute_finished: bool = False,
                   is_test: bool = False, return_length: bool = False, **kwargs: Any):  # fmt: skip
    """Run ``decoder`` until every sequence is finished or ``max_step_num`` is passed.

    Returns ``(final_outputs, final_states)`` (and the sequence lengths with
    ``return_length``); outputs are batch-major unless ``output_time_major``.
    """
    from autostatic_runtime.mode import in_dynamic_mode

    inputs, states, finished = decoder.initialize(inits)
    rt = _rt()
    lengths = rt.zeros(finished.shape if finished.shape[0] >= 0 else rt.shape(finished), "int64")
    if in_dynamic_mode():
        outputs, states, finished, lengths = _decode_eager(
            decoder, inputs, states, finished, lengths, max_step_num, impute_finished, kwargs
        )
    else:
        if max_step_num is None:
            raise ValueError(
                "dynamic_decode: while building a program, give max_step_num (it sizes the "
                "buffers of the while loop)"
            )
        outputs, states, finished, lengths = _decode_static(
            decoder, inputs, states, finished, lengths, int(max_step_num), impute_finished, kwargs
        )
    if decoder.tracks_own_finished:
        lengths = states.lengths
    outputs, states = decoder.finalize(outputs, states, lengths)
    if not output_time_major:
        outputs = _map(lambda x: rt.transpose(x, [1, 0] + list(range(2, x.ndim))), outputs)
    return (outputs, states, lengths) if return_length else (outputs, states)


def _advance(decoder, step, inputs, states, finished, lengths, impute, kwargs):
    """One decoding step with ``dynamic_decode``'s bookkeeping of finished sequences."""
    rt = _rt()
    outputs, next_states, next_inputs, next_finished = decoder.step(step, inputs, states, **kwargs)
    if not decoder.tracks_own_finished:
        next_finished = rt.logical_or(next_finished, finished)
        lengths = lengths + rt.cast(rt.logical_not(finished), lengths.dtype)
        if impute:  # finished sequences keep their states
            keep = finished
            next_states = unflatten(
                flatten(next_states)[1],
                [rt.where(_expand_mask(keep, new), old, new)
                 for new, old in zip(flatten(next_states)[0], flatten(states)[0])],
            )  # fmt: skip
    return outputs, next_states, next_inputs, next_finished, lengths


def _expand_mask(mask: Any, like: Any) -> Any:
    rt = _rt()
    while mask.ndim < like.ndim:
        mask = rt.unsqueeze(mask, [-1])
    return mask


def _decode_eager(decoder, inputs, states, finished, lengths, max_step_num, impute, kwargs):
    rt = _rt()
    collected = []
    step = 0
    while True:
        out, states, inputs, next_finished, lengths = _advance(
            decoder, step, inputs, states, finished, lengths, impute, kwargs
        )
        finished = next_finished
        collected.append(out)
        step += 1
        if bool(rt.all(finished)) or (max_step_num is not None and step > max_step_num):
            break
    leaves = [flatten(o)[0] for o in collected]
    spec = flatten(collected[0])[1]
    stacked = [rt.stack([step_leaves[i] for step_leaves in leaves]) for i in range(len(leaves[0]))]
    return unflatten(spec, stacked), states, finished, lengths


def _decode_static(decoder, inputs, states, finished, lengths, max_step_num, impute, kwargs):
    """The decoding loop as a ``while`` op; outputs go to ``[max_step_num + 1, ...]`` buffers
    cut to the steps taken."""
    rt = _rt()
    from autostatic_runtime.static.control_flow import while_loop

    # One step outside the loop gives the outputs' structure, shapes and dtypes.
    probe, _, _, _, _ = _advance(decoder, 0, inputs, states, finished, lengths, impute, kwargs)
    probe_leaves, out_spec = flatten(probe)
    steps = max_step_num + 1
    buffers = [
        rt.zeros([steps] + [d if d >= 0 else rt.shape(p)[i] for i, d in enumerate(p.shape)],
                 p.dtype)
        for p in probe_leaves
    ]  # fmt: skip
    carried = [inputs, states, finished, lengths]
    carried_leaves, carried_spec = flatten(carried)

    n_buf = len(buffers)

    def unpack(flat):
        bufs = list(flat[:n_buf])
        inp, st, fin, lens = unflatten(carried_spec, list(flat[n_buf:]))
        return bufs, inp, st, fin, lens

    def cond(step, *flat):
        _, _, _, fin, _ = unpack(flat)
        return rt.logical_and(rt.logical_not(rt.all(fin)), step < steps)

    def body(step, *flat):
        bufs, inp, st, fin, lens = unpack(flat)
        out, st, inp, fin, lens = _advance(decoder, step, inp, st, fin, lens, impute, kwargs)
        index = rt.reshape(step, [1])
        bufs = [rt.scatter(b, index, rt.unsqueeze(o, [0]))
                for b, o in zip(bufs, flatten(out)[0])]  # fmt: skip
        return [step + 1, *bufs, *flatten([inp, st, fin, lens])[0]]

    step0 = rt.full([], 0, "int64")
    result = while_loop(cond, body, [step0, *buffers, *carried_leaves])
    taken, flat = result[0], result[1:]
    bufs, inputs, states, finished, lengths = unpack(flat)
    outputs = unflatten(out_spec, [b[:taken] for b in bufs])
    return outputs, states, finished, lengths
