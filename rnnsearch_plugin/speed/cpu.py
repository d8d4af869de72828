"""The CPU engine: the reference model of ``models/`` run a faster way, on the same parameters.

``CpuEncoder`` and ``CpuDecoder`` subclass ``models/``'s encoder and decoder, adding no parameter
(so every checkpoint loads into either), and replace their recurrences and what the decoder caches
for decoding, as a unit. Both read one ``Tricks`` object (``tricks.py``), fixed when the model is
built (``engines.py``):

- ``activations.py``: tanh by the fastest exact route of the processor's kernels;
- ``scores.py``: the additive score's energies with a hand-written backward;
- ``context.py``: C c_i per step and C_o c_i after the loop in training, [C h_j; C_o h_j] weighed
  in decoding;
- ``beam_reordering.py``: the source side once per sentence in beam search (G x k groups);
- ``precision.py``: bfloat16 products under ``--amp``, states in float32.

``tests/models/test_engines.py`` compares it with the reference, with every trick and with each
left out; ``tests/models/test_equations.py`` with the literal equations.
"""

from typing import Any, Optional

import torch
from torch import Tensor

from ..models.decoder import ConditionalGRUDecoder, Features, IncrementalState
from ..models.encoder import EncoderOut, RecurrentEncoder
from .beam_reordering import SENTENCE, per_hypothesis, select_rows
from .context import AttentiveContext, FixedContext, SourceContext
from .precision import state_dtype
from .recurrence import gru_step, run_masked_recurrence
from .tricks import Tricks

CACHE = "cache"  # the decoder's incremental state, under the reference's key: one cache, whichever engine runs


class CpuEncoder(RecurrentEncoder):
    """``RecurrentEncoder``; its output also names each row's sentence (``SENTENCE``) for the
    decoder's group layout."""

    def __init__(self, tricks: Tricks, **encoder: Any) -> None:
        super().__init__(**encoder)
        self.tricks = tricks

    def forward(self, src_tokens: Tensor, src_lengths: Optional[Tensor] = None) -> EncoderOut:
        with self.tricks.autocast():
            return self._encode(src_tokens)

    def _encode(self, src_tokens: Tensor) -> EncoderOut:
        mask = src_tokens.ne(self.padding_idx)  # B x S
        embedded = self.dropout_in(self.embed_tokens(src_tokens))  # B x S x m
        rows = {
            "padding_mask": ~mask,
            "source_embeddings": embedded,
            SENTENCE: torch.arange(len(src_tokens), device=src_tokens.device),
        }
        forward_states, last_forward = run_masked_recurrence(
            self.forward_rnn, self.forward_rnn.input_projection(embedded), mask, self.tricks
        )
        if self.backward_rnn is None:
            return {"annotations": forward_states, "summary": last_forward, **rows}
        backward_states, first_backward = run_masked_recurrence(
            self.backward_rnn, self.backward_rnn.input_projection(embedded), mask, self.tricks, reverse=True
        )
        return {
            "annotations": self.dropout_out(torch.cat([forward_states, backward_states], dim=-1)),
            "summary": first_backward,
            **rows,
        }

    def reorder_encoder_out(self, encoder_out: EncoderOut, new_order: Tensor) -> EncoderOut:
        return select_rows(encoder_out, new_order, self.tricks.beam_reordering)  # source side: a row per group, or per hypothesis


class CpuDecoder(ConditionalGRUDecoder):
    """``ConditionalGRUDecoder``: R hypothesis rows over the encoder's G sentence groups (R = G k)."""

    def __init__(self, tricks: Tricks, **decoder: Any) -> None:
        super().__init__(**decoder)
        self.tricks = tricks
        self.context: SourceContext = (  # c_i: reads C, C_o and the attention, holds no parameters
            AttentiveContext(self.attention, self.context_projection, self.deep_output.context_projection)
            if self.attention is not None
            else FixedContext(self.context_projection, self.deep_output.context_projection)
        )

    def extract_features(
        self, prev_output_tokens: Tensor, encoder_out: EncoderOut, incremental_state: IncrementalState = None, **unused: Any
    ) -> Features:
        with self.tricks.autocast():
            return self._features(prev_output_tokens, encoder_out, incremental_state)

    def output_layer(self, features: Tensor) -> Tensor:
        with self.tricks.autocast():
            return self.output_projection(features)

    def extra_repr(self) -> str:
        """Named in the model summary fairseq-train logs (``analysis/training_log.py`` reads it)."""
        return self.tricks.summary()

    def _features(self, prev_output_tokens: Tensor, encoder_out: EncoderOut, incremental_state: IncrementalState) -> Features:
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        embedded = self.dropout_in(self.embed_tokens(prev_output_tokens))  # R x T x m
        rows = len(embedded)
        cache = self._load_cache(encoder_out, incremental_state, rows)
        rnn_inputs = self.rnn.input_projection(embedded)  # R x T x 3n, all positions at once
        states, kept, weights = self._recurrence(rnn_inputs, cache, encoder_out["padding_mask"])
        if incremental_state is not None:
            self.set_incremental_state(incremental_state, CACHE, {**cache, "state": states[:, -1]})
        readout = states
        if self.readout_from_previous:
            readout = torch.cat([cache["state"][:, None], states[:, :-1]], dim=1)
        context_terms = self.context.output_terms(kept, cache, rows)  # C_o c_i
        deep = self.deep_output
        features = deep.maxout(deep.state_projection(readout) + deep.embedding_projection(embedded) + context_terms)
        return features, self.alignment_outputs(weights, states, prev_output_tokens, encoder_out, incremental_state)

    def _recurrence(
        self, rnn_inputs: Tensor, cache: dict[str, Tensor], padding_mask: Tensor
    ) -> tuple[Tensor, list[Optional[Tensor]], Optional[Tensor]]:
        """The loop over target positions: states R x T x n, what the context keeps of each step
        for ``output_terms`` and the attention weights R x T x S (None without attention)."""
        state = cache["state"]
        states, kept, weights = [], [], []
        for step_inputs in rnn_inputs.unbind(1):
            context_terms, step_kept, alpha = self.context.step(state, cache, padding_mask, self.tricks)  # C c_i
            state = gru_step(self.rnn, step_inputs + context_terms, state, self.tricks.tanh)
            states.append(state)
            kept.append(step_kept)
            weights.append(alpha)
        attention = None if weights[0] is None else torch.stack(weights, 1)
        return torch.stack(states, 1), kept, attention

    def _load_cache(self, encoder_out: EncoderOut, incremental_state: IncrementalState, rows: int) -> dict[str, Tensor]:
        """s_{i-1} and the context's source-side tensors from the incremental state, or, at the
        first step, s_0 for each of the ``rows`` hypotheses and the context's ``prepare``."""
        if incremental_state is not None:
            cache = self.get_incremental_state(incremental_state, CACHE)
            if cache is not None:
                return cache
        summary = encoder_out["summary"]
        initial = self.tricks.tanh(self.initial_state(summary)).to(state_dtype(summary))  # s_0, G x n
        cache = {"state": per_hypothesis(initial, rows), SENTENCE: encoder_out[SENTENCE]}
        return cache | self.context.prepare(encoder_out, decoding=incremental_state is not None)

    def reorder_incremental_state(self, incremental_state: IncrementalState, new_order: Tensor) -> None:
        cache = self.get_incremental_state(incremental_state, CACHE)
        if cache is not None:
            reordered = select_rows(cache, new_order, self.tricks.beam_reordering, per_hypothesis_keys=("state",))
            self.set_incremental_state(incremental_state, CACHE, reordered)
