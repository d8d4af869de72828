"""The engine's context: what the decoder reads of the source at step i, c_i of Appendix A.2.2, delivered
through the two linear maps that read it, C c_i into the GRU ([C_z; C_r; C]) and C_o c_i into the
deep output.

    RNNsearch:  c_i = sum_j alpha_ij h_j,  alpha_i = attention(s_{i-1}, h)     (Eq. 5-6, ``attention.py``)
    RNNencdec:  c_i = c, the encoder's summary, at every step                 (A.2.2: "fix c_i")

A context is the same in training and decoding; the decoder's loop calls it once per step:

- ``prepare(encoder_out, decoding)``: the source-side tensors, G rows each (one per sentence
  group, ``beam_reordering.py``), computed once per batch and cached while decoding;
- ``step(query, source, padding_mask, tricks)``: s_{i-1}, R x n -> (C c_i: R x 3n, what
  ``output_terms`` needs of step i or None, alpha_i: R x S or None);
- ``output_terms(kept, source, rows)``: C_o c_i of every step at once, R x T x kl (or R x 1 x kl
  where c_i does not change), from the steps' ``kept``.

A context holds no parameters: it reads the decoder's C and C_o and the attention's.
"""

from typing import Optional

import torch
from torch import Tensor, nn

from ..models.attention import Attention
from ..models.encoder import EncoderOut
from .beam_reordering import per_hypothesis
from .precision import product_dtype
from .scores import attend, prepare
from .tricks import Tricks

StepContext = tuple[Tensor, Optional[Tensor], Optional[Tensor]]


class AttentiveContext:
    """RNNsearch. In training c_i = sum_j alpha_ij h_j is kept, C c_i taken at each step and C_o c_i
    for all steps at once after the loop: in the other order the backward pass accumulates a
    G x S x 3n outer product at every step. Decoding weighs [C h_j ; C_o h_j] instead, computed
    once per sentence (sum_j alpha_ij (L h_j) = L c_i for a linear L) rather than C c_i and C_o c_i
    once per hypothesis and step."""

    def __init__(self, attention: Attention, gru_projection: nn.Linear, output_projection: nn.Linear) -> None:
        self.attention, self.gru_projection, self.output_projection = attention, gru_projection, output_projection

    def prepare(self, encoder_out: EncoderOut, decoding: bool) -> dict[str, Tensor]:
        annotations = encoder_out["annotations"]  # h: G x S x 2n
        source = {"keys": prepare(self.attention, annotations)}
        if decoding:  # [C h_j ; C_o h_j]: G x S x (3n + kl)
            source["projected_annotations"] = torch.cat([self.gru_projection(annotations), self.output_projection(annotations)], dim=-1)
        else:  # h_j in the products' dtype, cast once rather than at every step
            source["annotations"] = annotations.to(product_dtype(annotations))
        return source

    def step(self, query: Tensor, source: dict[str, Tensor], padding_mask: Tensor, tricks: Tricks) -> StepContext:
        alpha = attend(self.attention, query, source["keys"], padding_mask, tricks)  # G x k x S
        if "projected_annotations" in source:  # [C c_i ; C_o c_i]: R x (3n + kl)
            weighted = weigh(alpha, source["projected_annotations"])
            gru_terms, kept = weighted.tensor_split([self.gru_projection.out_features], dim=-1)
        else:  # c_i: R x 2n
            kept = weigh(alpha, source["annotations"])
            gru_terms = self.gru_projection(kept)
        return gru_terms, kept, alpha.flatten(0, 1)

    def output_terms(self, kept: list[Optional[Tensor]], source: dict[str, Tensor], rows: int) -> Tensor:
        stacked = torch.stack(kept, dim=1)  # R x T x kl (decoding) or c_i: R x T x 2n
        return stacked if "projected_annotations" in source else self.output_projection(stacked)


def weigh(alpha: Tensor, values: Tensor) -> Tensor:
    """sum_j alpha_ij values_j: alpha G x k x S, values G x S x d -> R x d, in the values' dtype."""
    return (alpha.to(values.dtype) @ values).flatten(0, 1)


class FixedContext:
    """RNNencdec: C c and C_o c once per batch, the same at every step."""

    def __init__(self, gru_projection: nn.Linear, output_projection: nn.Linear) -> None:
        self.gru_projection, self.output_projection = gru_projection, output_projection

    def prepare(self, encoder_out: EncoderOut, decoding: bool) -> dict[str, Tensor]:
        summary = encoder_out["summary"]  # c: G x n
        return {"gru_terms": self.gru_projection(summary), "output_terms": self.output_projection(summary)}

    def step(self, query: Tensor, source: dict[str, Tensor], padding_mask: Tensor, tricks: Tricks) -> StepContext:
        return per_hypothesis(source["gru_terms"], len(query)), None, None

    def output_terms(self, kept: list[Optional[Tensor]], source: dict[str, Tensor], rows: int) -> Tensor:
        return per_hypothesis(source["output_terms"], rows)[:, None]  # R x 1 x kl


SourceContext = AttentiveContext | FixedContext
