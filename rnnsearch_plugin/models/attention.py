"""The alignment model of Section 3.1 and Appendix A.1.2 (additive attention).

    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)      alpha_ij = softmax_j(e_ij)      c_i = sum_j alpha_ij h_j

U_a h_j does not depend on i: ``project_annotations`` computes it once per source sentence.
The energies and their softmax run in float32 whatever the products' precision (``speed/precision.py``);
the softmax runs over the real source positions only: padded positions get alpha = 0 exactly, and
each row sums to 1.
The source side is held once per group of k hypotheses of the same sentence (beam search,
``speed/beam_reordering.py``): G groups, R = G k query rows.
"""
from typing import Any

import torch
from torch import Tensor, nn

from ..speed.activations import tanh
from ..speed.precision import at_least_float32
from ..speed.step_products import StepProduct, direct


class AdditiveAttention(nn.Module):
    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)  # W_a
        self.annotation_projection = nn.Linear(annotation_size, hidden_size)  # U_a (+ b_a)
        self.score = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def project_annotations(self, annotations: Tensor) -> Tensor:
        """annotations: G x S x 2n -> U_a h_j: G x S x n', in float32 or wider (``energies``)."""
        projected = self.annotation_projection(annotations)
        return projected.to(at_least_float32(projected.dtype))

    def energies(self, projected: Tensor, query_terms: Tensor) -> Tensor:
        """e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j): G x k x S. The sum, the tanh and v_a's
        weighted sum over n' run in the dtype of ``projected`` (float32 or wider) whatever the
        products' precision: over G x k x S x n' values, casting to bfloat16 and back would cost
        more than the small v_a product saves (``speed/precision.py``)."""
        query_terms, score = query_terms.to(projected.dtype), self.score.weight.to(projected.dtype)
        with torch.autocast(projected.device.type, enabled=False):
            if torch.is_grad_enabled():
                return _Energies.apply(projected, query_terms, score)
            return energies(projected, query_terms, score)

    def forward(
        self, query: Tensor, projected: Tensor, values: Tensor, padding_mask: Tensor, products: StepProduct = direct
    ) -> tuple[Tensor, Tensor]:
        """query s_{i-1}: R x n; projected U_a h: G x S x n'; values: G x S x d (h_j, or any
        linear map of h_j, which the weighted sum commutes with); padding_mask: G x S; ``products``
        takes W_a s_{i-1} and the weighted sum (``speed/step_products.py`` in the decoder's loop).
        Returns (sum_j alpha_ij values_j: R x d, in the values' dtype; alpha_i: R x S, float32 or wider)."""
        groups, _, hidden = projected.shape
        query_terms = products(query, self.query_projection).view(groups, -1, 1, hidden)  # G x k x 1 x n'
        energies = self.energies(projected, query_terms).masked_fill(padding_mask[:, None], float("-inf"))
        weights = torch.softmax(energies, dim=-1)  # G x k x S
        return products(weights.to(values.dtype), values).flatten(0, 1), weights.flatten(0, 1)


def energies(projected: Tensor, query_terms: Tensor, score: Tensor) -> Tensor:
    """tanh(U_a h + W_a s) v_a: projected G x S x n', query_terms G x k x 1 x n', score 1 x n'."""
    return (tanh(projected[:, None] + query_terms) @ score.t()).squeeze(-1)


class _Energies(torch.autograd.Function):
    """``energies`` keeping U_a h, W_a s and v_a for backward rather than the G x k x S x n'
    tanh, which backward takes again: at 64 sentences of 100 words that tensor is 625 MB per
    training step, and autograd's gradient through v_a an outer product that a matrix product
    with K = 1 computes slowly (``benchmarks/changes.md``)."""

    @staticmethod
    def forward(ctx: Any, projected: Tensor, query_terms: Tensor, score: Tensor) -> Tensor:
        ctx.save_for_backward(projected, query_terms, score)
        return energies(projected, query_terms, score)

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
