"""The decoder of Appendix A.2.2: a GRU conditioned on a context vector at every step, with
the deep maxout output of ``deep_output.py``.

    s_0 = tanh(W_s bwd h_1)                         (RNNencdec: tanh(W_s c), c = fwd h_{T_x})
    c_i = attention(s_{i-1}, h)                     (RNNencdec: c_i = c for every i)
    s_i = GRU(s_{i-1}, [W; W_z; W_r] E y_{i-1} + [C; C_z; C_r] c_i)
    logits_i = deep_output(s_{i-1}, E y_{i-1}, c_i) (``readout_state="current"``: s_i, Eq. (4))

Training (teacher forcing) and incremental decoding run the same ``forward``: the incremental
case is the same recurrence over one position, resumed from the cached s_{i-1}.
"""
from typing import Any, Optional

import torch
from fairseq.models import FairseqIncrementalDecoder
from torch import Tensor, nn

from .attention import AdditiveAttention
from .beam_reordering import SENTENCE, select_rows
from .deep_output import MaxoutDeepOutput
from .encoder import EncoderOut
from .gru import GatedRecurrentUnit

READOUT_STATES = ("previous", "current")
IncrementalState = Optional[dict[str, dict[str, Optional[Tensor]]]]


class ConditionalGRUDecoder(FairseqIncrementalDecoder):
    def __init__(
        self,
        dictionary,
        embed_dim: int,
        hidden_size: int,
        context_size: int,
        summary_size: int,
        maxout_units: int,
        maxout_pool_size: int = 2,
        attention_hidden_size: Optional[int] = None,
        readout_state: str = "previous",
        dropout_in: float = 0.0,
        dropout_out: float = 0.0,
        max_positions: int = 1024,
    ) -> None:
        super().__init__(dictionary)
        if readout_state not in READOUT_STATES:
            raise ValueError(f"readout_state must be one of {READOUT_STATES}, not {readout_state!r}")
        self.readout_from_previous = readout_state == "previous"
        self.embed_tokens = nn.Embedding(len(dictionary), embed_dim, dictionary.pad())  # E
        self.dropout_in = nn.Dropout(dropout_in)
        self.initial_state = nn.Linear(summary_size, hidden_size)  # W_s
        self.rnn = GatedRecurrentUnit(embed_dim, hidden_size)  # W, W_z, W_r; U, U_z, U_r
        self.context_projection = nn.Linear(context_size, 3 * hidden_size, bias=False)  # C_z, C_r, C
        self.attention = (
            AdditiveAttention(hidden_size, context_size, attention_hidden_size)
            if attention_hidden_size
            else None
        )
        self.deep_output = MaxoutDeepOutput(
            hidden_size, embed_dim, context_size, maxout_units, len(dictionary),
            maxout_pool_size, dropout_out,
        )
        self.max_target_positions = max_positions

    def forward(
        self,
        prev_output_tokens: Tensor,
        encoder_out: EncoderOut,
        incremental_state: IncrementalState = None,
        **unused: Any,
    ) -> tuple[Tensor, dict[str, list[Optional[Tensor]]]]:
        """prev_output_tokens: B x T -> (logits B x T x K_y, {"attn": [alpha B x T x S or None]})."""
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        embedded = self.dropout_in(self.embed_tokens(prev_output_tokens))  # B x T x m
        cache = self._load_cache(encoder_out, incremental_state)
        rnn_inputs = self.rnn.input_projection(embedded)  # B x T x 3n, all positions at once
        fixed_context = None
        if self.attention is None:  # RNNencdec: c_i = c for every i, projected once
            fixed_context = encoder_out["summary"][:, None]  # B x 1 x n
            rnn_inputs = rnn_inputs + self.context_projection(fixed_context)
        states, contexts, weights = self._recurrence(rnn_inputs, cache, encoder_out)
        if contexts is None:
            contexts = fixed_context
        if incremental_state is not None:
            self.set_incremental_state(incremental_state, "cache", {**cache, "state": states[:, -1]})
        readout = states
        if self.readout_from_previous:
            readout = torch.cat([cache["state"][:, None], states[:, :-1]], dim=1)
        logits = self.deep_output(readout, self.deep_output.input_terms(embedded, contexts))
        return logits, {"attn": [weights]}

    def _recurrence(
        self, rnn_inputs: Tensor, cache: dict[str, Tensor], encoder_out: EncoderOut
    ) -> tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
        """The loop over target positions: states B x T x n, contexts B x T x 2n and attention
        weights B x T x S (both None without attention)."""
        state = cache["state"]
        states, contexts, weights = [], [], []
        for step_inputs in rnn_inputs.unbind(1):
            if self.attention is not None:
                context, alpha = self.attention(
                    state, cache["projected"], encoder_out["annotations"], encoder_out["padding_mask"]
                )
                step_inputs = step_inputs + self.context_projection(context)
                contexts.append(context)
                weights.append(alpha)
            state = self.rnn(step_inputs, state)
            states.append(state)
        if self.attention is None:
            return torch.stack(states, 1), None, None
        return torch.stack(states, 1), torch.stack(contexts, 1), torch.stack(weights, 1)

    def _load_cache(self, encoder_out: EncoderOut, incremental_state: IncrementalState) -> dict[str, Tensor]:
        """s_{i-1} (and U_a h) from the incremental state, or s_0 (and U_a h) at the first step."""
        if incremental_state is not None:
            cache = self.get_incremental_state(incremental_state, "cache")
            if cache is not None:
                return cache
        cache = {
            "state": torch.tanh(self.initial_state(encoder_out["summary"])),  # s_0
            SENTENCE: encoder_out[SENTENCE],
        }
        if self.attention is not None:
            cache["projected"] = self.attention.project_annotations(encoder_out["annotations"])
        return cache

    def reorder_incremental_state(self, incremental_state: IncrementalState, new_order: Tensor) -> None:
        cache = self.get_incremental_state(incremental_state, "cache")
        if cache is not None:
            reordered = select_rows(cache, new_order, per_hypothesis=("state",))
            self.set_incremental_state(incremental_state, "cache", reordered)

    def max_positions(self) -> int:
        return self.max_target_positions
