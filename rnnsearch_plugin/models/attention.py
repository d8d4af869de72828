"""Attention: the alignment model of Section 3.1 and Appendix A.1.2, and the contract any other
score keeps to serve the decoder (``context.py`` reads it; nothing else does).

    e_ij = a(s_{i-1}, h_j)      alpha_ij = exp(e_ij) / sum_k exp(e_ik)          (Eq. 6)

The contract of ``Attention``, the one place it is written:

- ``__init__(query_size n, annotation_size 2n, hidden_size n')``: the sizes of s_{i-1}, h_j and
  the alignment model's hidden layer (a score without one ignores it).
- ``prepare(annotations)``: h_j, G x S x 2n -> the score's keys, G x S x ..., what it computes
  once per source sentence (A.1.2: "we can pre-compute it"). Row g is the g-th sentence group:
  in beam search the k hypotheses of a sentence share one group (R = G k query rows, row r reads
  group r // k), and the decoder reorders the keys by group (``speed/beam_reordering.py``). The
  keys are in float32 or wider, whatever the products' precision (``speed/precision.py``).
- ``energies(query, keys, products)``: s_{i-1}, R x n -> e_i, G x k x S, in the keys' dtype.
  ``products(x, operand)`` multiplies by an ``nn.Linear`` or tensor shared by all steps (the
  decoder's loop defers their gradients, ``speed/step_products.py``); a score may use it or not.
- ``forward`` (here, for every score): alpha_i, G x k x S, float32 or wider, the softmax over the
  real source positions only: padded positions get alpha = 0 exactly, each row sums to 1.
- ``multiply_adds(source_length, target_length)``: its matrix multiply-adds over one sentence
  pair (``speed/flops.py``); ``initialize_()``: its parameters' initialisation
  (``initialization.py``; B.1 for the paper's).
- ``ATTENTIONS`` names it for ``--attention``.

The weighted sum c_i = sum_j alpha_ij h_j (Eq. 5) is the decoder's context, not the score's
(``context.py``).
"""

from typing import Any

import torch
from torch import Tensor, nn

from ..speed.activations import tanh
from ..speed.precision import at_least_float32
from ..speed.step_products import StepProduct, direct

ALIGNMENT_STD = 0.001  # B.1: W_a and U_a ~ N(0, 0.001^2)


class Attention(nn.Module):
    """The contract above; subclasses define ``prepare``, ``energies``, ``multiply_adds`` and
    ``initialize_``."""

    def prepare(self, annotations: Tensor) -> Tensor:
        raise NotImplementedError

    def energies(self, query: Tensor, keys: Tensor, products: StepProduct) -> Tensor:
        raise NotImplementedError

    def multiply_adds(self, source_length: int, target_length: int) -> int:
        raise NotImplementedError

    def initialize_(self) -> None:
        raise NotImplementedError

    def forward(self, query: Tensor, keys: Tensor, padding_mask: Tensor, products: StepProduct = direct) -> Tensor:
        """query s_{i-1}: R x n; keys: ``prepare``'s, G x S x ...; padding_mask: G x S (True at
        padding) -> alpha_i: G x k x S."""
        energies = self.energies(query, keys, products).masked_fill(padding_mask[:, None], float("-inf"))
        return torch.softmax(energies, dim=-1)


class AdditiveAttention(Attention):
    """The paper's score (A.1.2): e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j); keys U_a h_j (+ b_a)."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)  # W_a
        self.annotation_projection = nn.Linear(annotation_size, hidden_size)  # U_a (+ b_a)
        self.score = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def prepare(self, annotations: Tensor) -> Tensor:
        """U_a h_j: G x S x n'."""
        projected = self.annotation_projection(annotations)
        return projected.to(at_least_float32(projected.dtype))

    def energies(self, query: Tensor, keys: Tensor, products: StepProduct) -> Tensor:
        """The sum, the tanh and v_a's weighted sum over n' run in the keys' dtype: over
        G x k x S x n' values, casting to bfloat16 and back would cost more than the small v_a
        product saves (``speed/precision.py``)."""
        groups, _, hidden = keys.shape
        query_terms = products(query, self.query_projection).view(groups, -1, 1, hidden)  # W_a s: G x k x 1 x n'
        query_terms, score = query_terms.to(keys.dtype), self.score.weight.to(keys.dtype)
        with torch.autocast(keys.device.type, enabled=False):
            if torch.is_grad_enabled():
                return _AdditiveEnergies.apply(keys, query_terms, score)
            return additive_energies(keys, query_terms, score)

    def multiply_adds(self, source_length: int, target_length: int) -> int:
        """U_a h_j once per sentence, W_a s_{i-1} and v_a^T tanh(.) at every step."""
        query_size, hidden = self.query_projection.in_features, self.query_projection.out_features
        annotation_size = self.annotation_projection.in_features
        return hidden * (source_length * annotation_size + target_length * query_size + target_length * source_length)

    def initialize_(self) -> None:
        """B.1: W_a, U_a ~ N(0, 0.001^2); v_a = 0 (so every alpha_i starts uniform); b_a = 0."""
        nn.init.normal_(self.query_projection.weight, std=ALIGNMENT_STD)
        nn.init.normal_(self.annotation_projection.weight, std=ALIGNMENT_STD)
        nn.init.zeros_(self.annotation_projection.bias)
        nn.init.zeros_(self.score.weight)


def additive_energies(projected: Tensor, query_terms: Tensor, score: Tensor) -> Tensor:
    """tanh(U_a h + W_a s) v_a: projected G x S x n', query_terms G x k x 1 x n', score 1 x n'."""
    return (tanh(projected[:, None] + query_terms) @ score.t()).squeeze(-1)


class _AdditiveEnergies(torch.autograd.Function):
    """``additive_energies`` keeping U_a h, W_a s and v_a for backward rather than the
    G x k x S x n' tanh of every step, which backward takes again from them (the same inputs, so
    the same y); and the gradients written out from y and e' = d loss / d e: e' y summed over all
    rows for v_a, and (1 - y^2) e' v_a summed over k for U_a h and over S for W_a s, rather than
    autograd's outer product with K = 1 for v_a. The literal-equations gradient test covers it;
    the memory it saves: ``benchmarks/changes.md``."""

    @staticmethod
    def forward(ctx: Any, projected: Tensor, query_terms: Tensor, score: Tensor) -> Tensor:
        ctx.save_for_backward(projected, query_terms, score)
        return additive_energies(projected, query_terms, score)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        projected, query_terms, score = ctx.saved_tensors
        with torch.autocast(grad.device.type, enabled=False):
            hidden = tanh(projected[:, None] + query_terms)  # y, G x k x S x n'
            grad_score = grad.reshape(1, -1) @ hidden.reshape(-1, hidden.size(-1))  # sum e' y: 1 x n'
            grad_sum = hidden.mul_(hidden).neg_().add_(1).mul_(grad[..., None]).mul_(score)  # (1 - y^2) e' v_a
        # the sum over k; in training k = 1, where sum(1) would zero-fill and add a G x S x n' tensor
        grad_projected = grad_sum.squeeze(1) if grad_sum.size(1) == 1 else grad_sum.sum(1)
        return grad_projected, grad_sum.sum(2, keepdim=True), grad_score


class GeneralAttention(Attention):
    """Luong, Pham & Manning (2015)'s ``general`` score, not the paper's: e_ij = s_{i-1}^T W_a h_j,
    with the paper's query s_{i-1} (Luong et al. score the current state). Keys W_a h_j, so a step
    costs one product of s_{i-1} with the keys. ``hidden_size`` is unused: W_a maps h_j to n."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.bilinear = nn.Linear(annotation_size, query_size, bias=False)  # W_a

    def prepare(self, annotations: Tensor) -> Tensor:
        """W_a h_j: G x S x n."""
        keys = self.bilinear(annotations)
        return keys.to(at_least_float32(keys.dtype))

    def energies(self, query: Tensor, keys: Tensor, products: StepProduct) -> Tensor:
        groups, _, size = keys.shape
        with torch.autocast(keys.device.type, enabled=False):
            return query.to(keys.dtype).view(groups, -1, size) @ keys.transpose(1, 2)  # G x k x S

    def multiply_adds(self, source_length: int, target_length: int) -> int:
        """W_a h_j once per sentence, s_{i-1}^T (W_a h_j) at every step."""
        query_size, annotation_size = self.bilinear.out_features, self.bilinear.in_features
        return query_size * source_length * (annotation_size + target_length)

    def initialize_(self) -> None:
        """As B.1 initialises the paper's W_a: N(0, 0.001^2)."""
        nn.init.normal_(self.bilinear.weight, std=ALIGNMENT_STD)


ATTENTIONS: dict[str, type[Attention]] = {"additive": AdditiveAttention, "general": GeneralAttention}
