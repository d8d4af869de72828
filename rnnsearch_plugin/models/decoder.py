"""The decoder of Appendix A.2.2: a GRU conditioned on a context vector at every step, with the
deep maxout output of ``deep_output.py``. ``extract_features``' loop is these equations in order:

    s_0 = tanh(W_s bwd h_1)                         (RNNencdec: tanh(W_s c), c = fwd h_{T_x})
    alpha_i = attention(s_{i-1}, h)                 (Eq. 6, ``attention.py``)
    c_i = sum_j alpha_ij h_j                        (Eq. 5; RNNencdec: c_i = c, A.2.2 "fix c_i")
    s_i = GRU(s_{i-1}, [W_z; W_r; W] E y_{i-1} + [C_z; C_r; C] c_i)
    t_i = deep_output(s_{i-1}, E y_{i-1}, c_i)     (``readout_state="current"``: s_i, Eq. (4))
    logits_i = W_o t_i                              (``output_layer``)

With an alignment head (``alignment_head.py``, not the paper's), a full forward over given
targets also computes, after the loop, a_ij from s_i and the emitted word y_i; incremental decoding
does not (y_i is chosen after its step), as fairseq's generators align finished hypotheses
with a full forward (``--print-alignment``).

Training (teacher forcing) and incremental decoding run the same loop: the incremental case is
one position, resumed from the cached s_{i-1} and the attention's keys. Beam search holds one row
per hypothesis (``reorder_incremental_state`` selects rows). fairseq's interface: ``forward`` =
``output_layer(extract_features(...))``, or the features t_i alone with ``features_only=True``
(``criterions/chunked_cross_entropy.py`` applies W_o to them in chunks). What else it returns:
``alignment_outputs``. Incremental decoding returns the attention weights only when the generator
asks for them (``make_generation_fast_``).
"""

from typing import Any, Optional

import torch
from fairseq.models import FairseqIncrementalDecoder
from torch import Tensor, nn

from .alignment_head import AlignmentHead
from .attention import Attention
from .deep_output import MaxoutDeepOutput
from .encoder import EncoderOut
from .gru import GatedRecurrentUnit

READOUT_STATES = ("previous", "current")
IncrementalState = Optional[dict[str, dict[str, Optional[Tensor]]]]
Features = tuple[Tensor, dict[str, list[Optional[Tensor]]]]


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
        attention: Optional[Attention] = None,
        alignment_head: Optional[AlignmentHead] = None,
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
        self.context_projection = nn.Linear(context_size, 3 * hidden_size, bias=False)  # [C_z; C_r; C]
        self.attention = attention  # RNNsearch's alignment model; None: RNNencdec
        self.alignment_head = alignment_head  # a_ij of the emitted words; None: the paper's models
        self.deep_output = MaxoutDeepOutput(
            hidden_size, embed_dim, context_size, maxout_units, len(dictionary), maxout_pool_size, dropout_out
        )
        self.max_target_positions = max_positions
        self.need_attn = True

    def forward(
        self,
        prev_output_tokens: Tensor,
        encoder_out: EncoderOut,
        incremental_state: IncrementalState = None,
        features_only: bool = False,
        **unused: Any,
    ) -> Features:
        """prev_output_tokens: B x T -> (logits B x T x K_y, or t B x T x l with ``features_only``;
        ``alignment_outputs``)."""
        features, extra = self.extract_features(prev_output_tokens, encoder_out, incremental_state)
        return (features if features_only else self.output_layer(features)), extra

    def extract_features(
        self, prev_output_tokens: Tensor, encoder_out: EncoderOut, incremental_state: IncrementalState = None, **unused: Any
    ) -> Features:
        """The deep output's maxout layer t_i for every position (B x T x l) and ``alignment_outputs``."""
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        cache = self.load_cache(encoder_out, incremental_state)
        state = cache["state"]  # s_{i-1}
        features, weights, states = [], [], []
        for embedded in self.dropout_in(self.embed_tokens(prev_output_tokens)).unbind(1):  # E y_{i-1}
            alpha, context = self.attend(state, cache, encoder_out)  # alpha_i, c_i
            new_state = self.rnn(self.rnn.input_projection(embedded) + self.context_projection(context), state)  # s_i
            features.append(self.deep_output(state if self.readout_from_previous else new_state, embedded, context))  # t_i
            weights.append(alpha)
            states.append(new_state)
            state = new_state
        if incremental_state is not None:
            self.set_incremental_state(incremental_state, "cache", {**cache, "state": state})
        attention = None if self.attention is None else torch.stack(weights, 1)
        extra = self.alignment_outputs(attention, torch.stack(states, 1), prev_output_tokens, encoder_out, incremental_state)
        return torch.stack(features, 1), extra

    def alignment_outputs(
        self,
        attention: Optional[Tensor],
        states: Tensor,
        prev_output_tokens: Tensor,
        encoder_out: EncoderOut,
        incremental_state: IncrementalState,
    ) -> dict[str, list[Optional[Tensor]]]:
        """What the decoder returns beside its output, B x T x S each:

        - "attention": alpha (Eq. 6; None for RNNencdec), the paper's Figure 3;
        - "attn", what fairseq prints (--print-alignment), copies from (--replace-unk) and
          trains (--alignment-lambda): the head's a_ij where the decoder has one and the whole
          target is given, else alpha;
        - "alignment_log_likelihood", with a head: log p_a(y_i), B x T.

        Incremental decoding returns alpha only when the generator asks for it (``need_attn``)."""
        if incremental_state is not None:
            attention = attention if self.need_attn else None
            return {"attn": [attention], "attention": [attention]}
        if self.alignment_head is None:
            return {"attn": [attention], "attention": [attention]}
        emitted = emitted_tokens(prev_output_tokens, self.dictionary.pad(), self.dictionary.eos())
        alignment, log_likelihood = self.alignment_head(
            states,
            emitted,
            self.embed_tokens(emitted),
            emitted.ne(self.dictionary.pad()),
            encoder_out["annotations"],
            encoder_out["source_embeddings"],
            encoder_out["padding_mask"],
        )
        return {"attn": [alignment], "attention": [attention], "alignment_log_likelihood": [log_likelihood]}

    def attend(self, state: Tensor, cache: dict[str, Tensor], encoder_out: EncoderOut) -> tuple[Optional[Tensor], Tensor]:
        """alpha_i (Eq. 6) and c_i = sum_j alpha_ij h_j (Eq. 5); RNNencdec: (None, c)."""
        if self.attention is None:
            return None, encoder_out["summary"]
        alpha = self.attention(state, cache["keys"], encoder_out["padding_mask"])  # B x S
        return alpha, torch.bmm(alpha[:, None], encoder_out["annotations"]).squeeze(1)

    def load_cache(self, encoder_out: EncoderOut, incremental_state: IncrementalState) -> dict[str, Tensor]:
        """s_{i-1} and the attention's keys from the incremental state, or at the first step
        s_0 = tanh(W_s summary) and ``prepare``'s keys, computed once per sentence (A.1.2)."""
        if incremental_state is not None:
            cache = self.get_incremental_state(incremental_state, "cache")
            if cache is not None:
                return cache
        cache = {"state": torch.tanh(self.initial_state(encoder_out["summary"]))}  # s_0
        if self.attention is not None:
            cache["keys"] = self.attention.prepare(encoder_out["annotations"])
        return cache

    def output_layer(self, features: Tensor) -> Tensor:
        """W_o t_i (+ b_o): logits ... x K_y."""
        return self.output_projection(features)

    @property
    def output_projection(self) -> nn.Linear:
        """W_o, under the name fairseq's transformer decoder gives its output layer."""
        return self.deep_output.output_projection

    def reorder_incremental_state(self, incremental_state: IncrementalState, new_order: Tensor) -> None:
        """Beam search: row r of the cache becomes row ``new_order[r]``."""
        cache = self.get_incremental_state(incremental_state, "cache")
        if cache is not None:
            reordered = {key: tensor.index_select(0, new_order) for key, tensor in cache.items()}
            self.set_incremental_state(incremental_state, "cache", reordered)

    def make_generation_fast_(self, need_attn: bool = False, **unused: Any) -> None:
        """fairseq's generators call this (``prepare_for_inference_``) with ``need_attn`` from
        --print-alignment. Without it, incremental decoding returns no attention weights, as
        fairseq's lstm does, and the search keeps and reorders no attention buffer. A full
        forward (scoring, alignments) always returns them."""
        self.need_attn = need_attn

    def max_positions(self) -> int:
        return self.max_target_positions


def emitted_tokens(prev_output_tokens: Tensor, pad: int, eos: int) -> Tensor:
    """y_i at every position of a whole target given as fairseq's decoder input ([</s>, y_1, ...,
    y_{T-1}], padded on either side): the next input token, and </s> after the last one (fairseq's
    targets end with </s>); padding where the input is padding. B x T -> B x T."""
    following = torch.cat([prev_output_tokens[:, 1:], prev_output_tokens.new_full((len(prev_output_tokens), 1), pad)], dim=1)
    real = prev_output_tokens.ne(pad)
    return following.masked_fill(real & following.eq(pad), eos).masked_fill(~real, pad)
