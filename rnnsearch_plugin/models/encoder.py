"""Encoders: the bidirectional RNN of RNNsearch (Section 3.2, Appendix A.2.1) and the
unidirectional RNN of the RNNencdec baseline (Cho et al. 2014a; A.2.2's closing note).

Both return a dict of batch-first tensors in the coordinates of ``src_tokens`` (whatever the
padding side), so attention weights map straight back onto source positions:

    "annotations":  B x S x 2n   h_j = [fwd h_j ; bwd h_j] (RNNencdec: B x S x n, fwd h_j, which
                                 only the alignment head reads: its decoder sees c alone)
    "summary":      B x n        bwd h_1 (RNNsearch, feeds s_0) or fwd h_{T_x} (RNNencdec, = c)
    "padding_mask": B x S        True on padding
    "source_embeddings": B x S x m   E-bar x_j (read by the alignment head, ``alignment_head.py``)

Beam search holds one row per hypothesis: ``reorder_encoder_out`` selects rows.
"""

from typing import Optional

import torch
from fairseq.models import FairseqEncoder
from torch import Tensor, nn

from .gru import GatedRecurrentUnit, run_masked_recurrence

EncoderOut = dict[str, Tensor]


class RecurrentEncoder(FairseqEncoder):
    """Shared source embedding E-bar (A.2.1) feeding one GRU, or two GRUs read in opposite
    directions when ``bidirectional`` (their weights are separate, the embedding is shared).
    ``dropout_out`` drops units of the annotations h_j in training (not in the paper; fairseq's
    lstm drops its encoder outputs the same way)."""

    def __init__(
        self,
        dictionary,
        embed_dim: int,
        hidden_size: int,
        bidirectional: bool,
        dropout_in: float = 0.0,
        dropout_out: float = 0.0,
        max_positions: int = 1024,
    ) -> None:
        super().__init__(dictionary)
        self.padding_idx = dictionary.pad()
        self.embed_tokens = nn.Embedding(len(dictionary), embed_dim, self.padding_idx)
        self.dropout_in = nn.Dropout(dropout_in)
        self.dropout_out = nn.Dropout(dropout_out)  # on the annotations h_j
        self.forward_rnn = GatedRecurrentUnit(embed_dim, hidden_size)
        self.backward_rnn = GatedRecurrentUnit(embed_dim, hidden_size) if bidirectional else None
        self.hidden_size = hidden_size
        self.max_source_positions = max_positions

    @property
    def annotation_size(self) -> int:
        return 2 * self.hidden_size if self.backward_rnn is not None else self.hidden_size

    def forward(self, src_tokens: Tensor, src_lengths: Optional[Tensor] = None) -> EncoderOut:
        mask = src_tokens.ne(self.padding_idx)  # B x S
        embedded = self.dropout_in(self.embed_tokens(src_tokens))  # E-bar x_j: B x S x m
        forward_states, last_forward = run_masked_recurrence(self.forward_rnn, self.forward_rnn.input_projection(embedded), mask)
        source = {"padding_mask": ~mask, "source_embeddings": embedded}
        if self.backward_rnn is None:
            return {"annotations": forward_states, "summary": last_forward, **source}  # c = fwd h_{T_x}
        backward_states, first_backward = run_masked_recurrence(
            self.backward_rnn, self.backward_rnn.input_projection(embedded), mask, reverse=True
        )
        return {
            "annotations": self.dropout_out(torch.cat([forward_states, backward_states], dim=-1)),  # h_j
            "summary": first_backward,  # bwd h_1
            **source,
        }

    def reorder_encoder_out(self, encoder_out: EncoderOut, new_order: Tensor) -> EncoderOut:
        """Beam search: row r of the result is row ``new_order[r]``."""
        return {key: tensor.index_select(0, new_order) for key, tensor in encoder_out.items()}

    def max_positions(self) -> int:
        return self.max_source_positions
