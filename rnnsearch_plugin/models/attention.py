"""The alignment model of Section 3.1 and Appendix A.1.2 (additive attention).

    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)      alpha_ij = softmax_j(e_ij)      c_i = sum_j alpha_ij h_j

U_a h_j does not depend on i: ``project_annotations`` computes it once per source sentence.
The energies and their softmax run in float32 whatever the products' precision (``speed/precision.py``);
the softmax runs over the real source positions only: padded positions get alpha = 0 exactly, and
each row sums to 1.
The source side is held once per group of k hypotheses of the same sentence (beam search,
``speed/beam_reordering.py``): G groups, R = G k query rows.
"""
import torch
import torch.nn.functional as F
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
        summed = projected[:, None] + query_terms.to(projected.dtype)  # G x k x S x n'
        with torch.autocast(summed.device.type, enabled=False):
            return F.linear(tanh(summed), self.score.weight.to(summed.dtype)).squeeze(-1)

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
