"""The decoder of Appendix A.2.2: a GRU conditioned on a context vector at every step, with
the deep maxout output of ``deep_output.py``.

    s_0 = tanh(W_s bwd h_1)                         (RNNencdec: tanh(W_s c), c = fwd h_{T_x})
    c_i = sum_j alpha_ij h_j, alpha_i = attention(s_{i-1}, h)   (RNNencdec: c_i = c; ``context.py``)
    s_i = GRU(s_{i-1}, [W; W_z; W_r] E y_{i-1} + [C; C_z; C_r] c_i)
    t_i = deep_output(s_{i-1}, E y_{i-1}, c_i)     (``readout_state="current"``: s_i, Eq. (4))
    logits_i = W_o t_i                              (``output_layer``)

Training (teacher forcing) and incremental decoding run the same ``extract_features``: the
incremental case is the same recurrence over one position, resumed from the cached s_{i-1} and
the context's source-side tensors. Everything the decoder knows of the source goes through its
context (``context.py``), one call per step, so RNNsearch and RNNencdec share one loop.
fairseq's interface: ``forward`` = ``output_layer(extract_features(...))``, or the features t_i
alone with ``features_only=True`` (``criterions/chunked_cross_entropy.py`` applies W_o to them in chunks). In beam search
the source side is held once per sentence for its k hypotheses (``speed/beam_reordering.py``), and the
attention weights are returned only when the generator asks for them (``make_generation_fast_``).
``cpu_bfloat16``: run under bfloat16 autocast on the CPU, states in float32 (``speed/precision.py``).
"""

from typing import Any, Optional

import torch
from fairseq.models import FairseqIncrementalDecoder
from torch import Tensor, nn

from ..speed.activations import tanh
from ..speed.beam_reordering import SENTENCE, per_hypothesis, select_rows
from ..speed.precision import cpu_autocast, state_dtype
from ..speed.step_products import StepProducts
from .attention import Attention
from .context import AttentiveContext, FixedContext, SourceContext
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
        attention: Optional[Attention] = None,
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
        self.attention = attention  # RNNsearch's alignment model; None: RNNencdec
        self.deep_output = MaxoutDeepOutput(
            hidden_size,
            embed_dim,
            context_size,
            maxout_units,
            len(dictionary),
            maxout_pool_size,
            dropout_out,
        )
        self.context: SourceContext = (  # c_i: reads C, C_o and the attention, holds no parameters
            AttentiveContext(attention, self.context_projection, self.deep_output.context_projection)
            if attention is not None
            else FixedContext(self.context_projection, self.deep_output.context_projection)
        )
        self.max_target_positions = max_positions
        self.need_attn = True
        self.cpu_bfloat16 = False

    def forward(
        self,
        prev_output_tokens: Tensor,
        encoder_out: EncoderOut,
        incremental_state: IncrementalState = None,
        features_only: bool = False,
        **unused: Any,
    ) -> tuple[Tensor, dict[str, list[Optional[Tensor]]]]:
        """prev_output_tokens: R x T (R hypotheses over the encoder's G sentence groups, R = G k)
        -> (logits R x T x K_y, or t R x T x l with ``features_only``; {"attn": [alpha R x T x S or None]})."""
        features, extra = self.extract_features(prev_output_tokens, encoder_out, incremental_state)
        return (features if features_only else self.output_layer(features)), extra

    def extract_features(
        self,
        prev_output_tokens: Tensor,
        encoder_out: EncoderOut,
        incremental_state: IncrementalState = None,
        **unused: Any,
    ) -> tuple[Tensor, dict[str, list[Optional[Tensor]]]]:
        """The deep output's maxout layer t_i for every position (R x T x l) and the attention."""
        with cpu_autocast(self.cpu_bfloat16, prev_output_tokens):
            return self._features(prev_output_tokens, encoder_out, incremental_state)

    def output_layer(self, features: Tensor) -> Tensor:
        """W_o t_i (+ b_o): logits ... x K_y."""
        with cpu_autocast(self.cpu_bfloat16, features):
            return self.output_projection(features)

    @property
    def output_projection(self) -> nn.Linear:
        """W_o, under the name fairseq's transformer decoder gives its output layer."""
        return self.deep_output.output_projection

    def _features(
        self, prev_output_tokens: Tensor, encoder_out: EncoderOut, incremental_state: IncrementalState
    ) -> tuple[Tensor, dict[str, list[Optional[Tensor]]]]:
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        embedded = self.dropout_in(self.embed_tokens(prev_output_tokens))  # R x T x m
        rows = len(embedded)
        cache = self._load_cache(encoder_out, incremental_state, rows)
        rnn_inputs = self.rnn.input_projection(embedded)  # R x T x 3n, all positions at once
        states, kept, weights = self._recurrence(rnn_inputs, cache, encoder_out["padding_mask"])
        if incremental_state is not None:
            self.set_incremental_state(incremental_state, "cache", {**cache, "state": states[:, -1]})
        readout = states
        if self.readout_from_previous:
            readout = torch.cat([cache["state"][:, None], states[:, :-1]], dim=1)
        context_terms = self.context.output_terms(kept, cache, rows)  # C_o c_i
        features = self.deep_output(readout, self.deep_output.input_terms(embedded, context_terms))
        if incremental_state is not None and not self.need_attn:
            weights = None
        return features, {"attn": [weights]}

    def _recurrence(
        self, rnn_inputs: Tensor, cache: dict[str, Tensor], padding_mask: Tensor
    ) -> tuple[Tensor, list[Optional[Tensor]], Optional[Tensor]]:
        """The loop over target positions: states R x T x n, what the context keeps of each step
        for ``output_terms`` and the attention weights R x T x S (None without attention). In
        training the gradients of the operands shared by all steps (U_z, U_r, U, and the
        context's) come from one product each after the loop (``speed/step_products.py``)."""
        state = cache["state"]
        states, kept, weights = [], [], []
        products = StepProducts(rnn_inputs).multiply
        for step_inputs in rnn_inputs.unbind(1):
            context_terms, step_kept, alpha = self.context.step(state, cache, padding_mask, products)  # C c_i
            state = self.rnn(step_inputs + context_terms, state, products)
            states.append(state)
            kept.append(step_kept)
            weights.append(alpha)
        attention = None if weights[0] is None else torch.stack(weights, 1)
        return torch.stack(states, 1), kept, attention

    def _load_cache(self, encoder_out: EncoderOut, incremental_state: IncrementalState, rows: int) -> dict[str, Tensor]:
        """s_{i-1} and the context's source-side tensors from the incremental state, or, at the
        first step, s_0 for each of the ``rows`` hypotheses and the context's ``prepare``."""
        if incremental_state is not None:
            cache = self.get_incremental_state(incremental_state, "cache")
            if cache is not None:
                return cache
        summary = encoder_out["summary"]
        initial = tanh(self.initial_state(summary)).to(state_dtype(summary))  # s_0, G x n
        cache = {"state": per_hypothesis(initial, rows), SENTENCE: encoder_out[SENTENCE]}
        return cache | self.context.prepare(encoder_out, decoding=incremental_state is not None)

    def reorder_incremental_state(self, incremental_state: IncrementalState, new_order: Tensor) -> None:
        cache = self.get_incremental_state(incremental_state, "cache")
        if cache is not None:
            reordered = select_rows(cache, new_order, per_hypothesis_keys=("state",))
            self.set_incremental_state(incremental_state, "cache", reordered)

    def make_generation_fast_(self, need_attn: bool = False, **unused: Any) -> None:
        """fairseq's generators call this (``prepare_for_inference_``) with ``need_attn`` from
        --print-alignment. Without it, incremental decoding returns no attention weights, as
        fairseq's lstm does, and the search keeps and reorders no attention buffer
        (``benchmarks/changes.md``). A full forward (scoring, alignments) always returns them."""
        self.need_attn = need_attn

    def max_positions(self) -> int:
        return self.max_target_positions
