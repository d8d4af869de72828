"""The alignment model of Section 3.1 and Appendix A.1.2 (additive attention).

    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)      alpha_ij = softmax_j(e_ij)      c_i = sum_j alpha_ij h_j

U_a h_j does not depend on i: ``project_annotations`` computes it once per source sentence.
The softmax runs over the real source positions only; padded positions get alpha = 0.
"""
import torch
from torch import Tensor, nn


class AdditiveAttention(nn.Module):
    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)  # W_a
        self.annotation_projection = nn.Linear(annotation_size, hidden_size)  # U_a (+ b_a)
        self.score = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def project_annotations(self, annotations: Tensor) -> Tensor:
        """annotations: B x S x 2n -> U_a h_j: B x S x n'."""
        return self.annotation_projection(annotations)

    def forward(
        self, query: Tensor, projected: Tensor, annotations: Tensor, padding_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """query s_{i-1}: B x n; projected U_a h: B x S x n'; annotations: B x S x 2n;
        padding_mask: B x S. Returns (c_i: B x 2n, alpha_i: B x S)."""
        energies = self.score(torch.tanh(projected + self.query_projection(query)[:, None]))
        energies = energies.squeeze(-1).masked_fill(padding_mask, float("-inf"))  # B x S
        weights = torch.softmax(energies, dim=-1)
        context = torch.bmm(weights[:, None], annotations).squeeze(1)
        return context, weights
