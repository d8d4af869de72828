"""The alignment model of Section 3.1 and Appendix A.1.2 (additive attention).

    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)      alpha_ij = softmax_j(e_ij)      c_i = sum_j alpha_ij h_j

U_a h_j does not depend on i: ``project_annotations`` computes it once per source sentence.
The softmax runs over the real source positions only; padded positions get alpha = 0.
The source side is held once per group of k hypotheses of the same sentence (beam search,
``beam_reordering``): G groups, R = G k query rows.
"""
import torch
from torch import Tensor, nn

from .activations import tanh


class AdditiveAttention(nn.Module):
    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)  # W_a
        self.annotation_projection = nn.Linear(annotation_size, hidden_size)  # U_a (+ b_a)
        self.score = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def project_annotations(self, annotations: Tensor) -> Tensor:
        """annotations: G x S x 2n -> U_a h_j: G x S x n'."""
        return self.annotation_projection(annotations)

    def forward(
        self, query: Tensor, projected: Tensor, values: Tensor, padding_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """query s_{i-1}: R x n; projected U_a h: G x S x n'; values: G x S x d (h_j, or any
        linear map of h_j, which the weighted sum commutes with); padding_mask: G x S.
        Returns (sum_j alpha_ij values_j: R x d, alpha_i: R x S)."""
        groups, _, hidden = projected.shape
        query_terms = self.query_projection(query).view(groups, -1, 1, hidden)  # G x k x 1 x n'
        energies = self.score(tanh(projected[:, None] + query_terms)).squeeze(-1)  # G x k x S
        weights = torch.softmax(energies.masked_fill(padding_mask[:, None], float("-inf")), dim=-1)
        return torch.bmm(weights, values).flatten(0, 1), weights.flatten(0, 1)
