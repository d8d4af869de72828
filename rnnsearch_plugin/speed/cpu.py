"""The CPU engine: the reference model of ``models/`` run a faster way, on the same parameters.

``CpuEncoder`` and ``CpuDecoder`` subclass ``models/``'s encoder and decoder, adding no parameter
(so every checkpoint loads into either), and replace their recurrences and what the decoder caches
for decoding, as a unit:

- ``step_products.py``: the products every step takes with a shared operand (U_z, U_r, U, W_a, C,
  h_j), their weight gradients in one product per sequence;
- ``activations.py``: tanh by the fastest exact route of the processor's kernels;
- ``scores.py``: the additive score's energies with a hand-written backward;
- ``context.py``: C c_i per step and C_o c_i after the loop in training, [C h_j; C_o h_j] weighed
  in decoding;
- ``beam_reordering.py``: the source side once per sentence in beam search (G x k groups);
- ``precision.py``: bfloat16 products under ``--amp`` (``cpu_bfloat16``), states in float32.

It runs where it was measured (``routes.py``: the CPU); on another device it hands over to the
reference, unless built with ``everywhere`` (``--engine cpu``). ``tests/models/test_engines.py``
compares it with the reference and the literal equations.
"""

from typing import Any, Optional

import torch
from torch import Tensor

from ..models.decoder import ConditionalGRUDecoder, Features, IncrementalState
from ..models.encoder import EncoderOut, RecurrentEncoder
from .activations import tanh
from .beam_reordering import SENTENCE, per_hypothesis, select_rows
from .context import AttentiveContext, FixedContext, SourceContext
from .precision import cpu_autocast, state_dtype
from .recurrence import gru_step, run_masked_recurrence
from .routes import measured_on
from .step_products import StepProducts


class CpuEngine:
    """What both halves hold: whether they run here, and whether in bfloat16."""

    everywhere = False  # --engine cpu: on any device; auto: where measured_on
    cpu_bfloat16 = False  # --amp on a CPU with bfloat16 arithmetic (``engines.set_bfloat16``)

    def runs_on(self, like: Tensor) -> bool:
        return self.everywhere or measured_on(like.device)


class CpuEncoder(CpuEngine, RecurrentEncoder):
    """``RecurrentEncoder``; its output also names each row's sentence (``SENTENCE``) for the
    decoder's group layout."""

    def forward(self, src_tokens: Tensor, src_lengths: Optional[Tensor] = None) -> EncoderOut:
        if not self.runs_on(src_tokens):
            return super().forward(src_tokens, src_lengths)
        with cpu_autocast(self.cpu_bfloat16, src_tokens):
            return self._encode(src_tokens)

    def _encode(self, src_tokens: Tensor) -> EncoderOut:
        mask = src_tokens.ne(self.padding_idx)  # B x S
        embedded = self.dropout_in(self.embed_tokens(src_tokens))  # B x S x m
        rows = {
            "padding_mask": ~mask,
            "source_embeddings": embedded,
            SENTENCE: torch.arange(len(src_tokens), device=src_tokens.device),
        }
        forward_states, last_forward = run_masked_recurrence(self.forward_rnn, self.forward_rnn.input_projection(embedded), mask)
        if self.backward_rnn is None:
            return {"annotations": forward_states, "summary": last_forward, **rows}
        backward_states, first_backward = run_masked_recurrence(
            self.backward_rnn, self.backward_rnn.input_projection(embedded), mask, reverse=True
        )
        return {
            "annotations": self.dropout_out(torch.cat([forward_states, backward_states], dim=-1)),
            "summary": first_backward,
            **rows,
        }

    def reorder_encoder_out(self, encoder_out: EncoderOut, new_order: Tensor) -> EncoderOut:
        if SENTENCE not in encoder_out:  # the reference's output
            return super().reorder_encoder_out(encoder_out, new_order)
        return select_rows(encoder_out, new_order)  # every tensor but SENTENCE: one row per group


class CpuDecoder(CpuEngine, ConditionalGRUDecoder):
    """``ConditionalGRUDecoder``: R hypothesis rows over the encoder's G sentence groups (R = G k)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context: SourceContext = (  # c_i: reads C, C_o and the attention, holds no parameters
            AttentiveContext(self.attention, self.context_projection, self.deep_output.context_projection)
            if self.attention is not None
            else FixedContext(self.context_projection, self.deep_output.context_projection)
        )

    def extract_features(
        self, prev_output_tokens: Tensor, encoder_out: EncoderOut, incremental_state: IncrementalState = None, **unused: Any
    ) -> Features:
        if not self.runs_on(prev_output_tokens) or SENTENCE not in encoder_out:
            return super().extract_features(prev_output_tokens, encoder_out, incremental_state)
        with cpu_autocast(self.cpu_bfloat16, prev_output_tokens):
            return self._features(prev_output_tokens, encoder_out, incremental_state)

    def output_layer(self, features: Tensor) -> Tensor:
        with cpu_autocast(self.cpu_bfloat16, features):
            return self.output_projection(features)

    def _features(self, prev_output_tokens: Tensor, encoder_out: EncoderOut, incremental_state: IncrementalState) -> Features:
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        embedded = self.dropout_in(self.embed_tokens(prev_output_tokens))  # R x T x m
        rows = len(embedded)
        cache = self._load_cache(encoder_out, incremental_state, rows)
        rnn_inputs = self.rnn.input_projection(embedded)  # R x T x 3n, all positions at once
        states, kept, weights = self._recurrence(rnn_inputs, cache, encoder_out["padding_mask"])
        if incremental_state is not None:
            self.set_incremental_state(incremental_state, "engine", {**cache, "state": states[:, -1]})
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
        for ``output_terms`` and the attention weights R x T x S (None without attention). In
        training the gradients of the operands shared by all steps (U_z, U_r, U, and the
        context's) come from one product each after the loop (``step_products.py``)."""
        state = cache["state"]
        states, kept, weights = [], [], []
        products = StepProducts(rnn_inputs).multiply
        for step_inputs in rnn_inputs.unbind(1):
            context_terms, step_kept, alpha = self.context.step(state, cache, padding_mask, products)  # C c_i
            state = gru_step(self.rnn, step_inputs + context_terms, state, products)
            states.append(state)
            kept.append(step_kept)
            weights.append(alpha)
        attention = None if weights[0] is None else torch.stack(weights, 1)
        return torch.stack(states, 1), kept, attention

    def _load_cache(self, encoder_out: EncoderOut, incremental_state: IncrementalState, rows: int) -> dict[str, Tensor]:
        """s_{i-1} and the context's source-side tensors from the incremental state, or, at the
        first step, s_0 for each of the ``rows`` hypotheses and the context's ``prepare``."""
        if incremental_state is not None:
            cache = self.get_incremental_state(incremental_state, "engine")
            if cache is not None:
                return cache
        summary = encoder_out["summary"]
        initial = tanh(self.initial_state(summary)).to(state_dtype(summary))  # s_0, G x n
        cache = {"state": per_hypothesis(initial, rows), SENTENCE: encoder_out[SENTENCE]}
        return cache | self.context.prepare(encoder_out, decoding=incremental_state is not None)

    def reorder_incremental_state(self, incremental_state: IncrementalState, new_order: Tensor) -> None:
        cache = self.get_incremental_state(incremental_state, "engine")
        if cache is not None:
            reordered = select_rows(cache, new_order, per_hypothesis_keys=("state",))
            self.set_incremental_state(incremental_state, "engine", reordered)
        super().reorder_incremental_state(incremental_state, new_order)  # the reference's cache, where it ran
