"""Attention: the alignment model of Section 3.1 and Appendix A.1.2, and the contract any other
score keeps.

    e_ij = a(s_{i-1}, h_j)      alpha_ij = exp(e_ij) / sum_k exp(e_ik)          (Eq. 6)

The contract of ``Attention``, the one place it is written:

- ``__init__(query_size n, annotation_size 2n, hidden_size n')``: the sizes of s_{i-1}, h_j and
  the alignment model's hidden layer (a score without one ignores it).
- ``prepare(annotations)``: h_j, B x S x 2n -> the score's keys, B x S x ..., what it computes
  once per source sentence (A.1.2: "we can pre-compute it").
- ``energies(query, keys)``: s_{i-1}, B x n, and the keys -> e_i, B x S.
- ``forward`` (here, for every score): alpha_i, B x S, the softmax over the real source
  positions only: padded positions get alpha = 0 exactly, each row sums to 1.
- ``initialize_()``: its parameters' initialisation (``initialization.py``; B.1 for the paper's).
- ``ATTENTIONS`` names it for ``--attention``.

A new score is one subclass here and its literal score in ``tests/models/test_equations.py``.
The weighted sum c_i = sum_j alpha_ij h_j (Eq. 5) is the decoder's (``decoder.py``).
"""

import torch
from torch import Tensor, nn

ALIGNMENT_STD = 0.001  # B.1: W_a and U_a ~ N(0, 0.001^2)


class Attention(nn.Module):
    """The contract above; subclasses define ``prepare``, ``energies`` and ``initialize_``."""

    def prepare(self, annotations: Tensor) -> Tensor:
        raise NotImplementedError

    def energies(self, query: Tensor, keys: Tensor) -> Tensor:
        raise NotImplementedError

    def initialize_(self) -> None:
        raise NotImplementedError

    def forward(self, query: Tensor, keys: Tensor, padding_mask: Tensor) -> Tensor:
        """query s_{i-1}: B x n; keys: ``prepare``'s; padding_mask: B x S (True at padding) -> alpha_i: B x S."""
        return torch.softmax(self.energies(query, keys).masked_fill(padding_mask, float("-inf")), dim=-1)


class AdditiveAttention(Attention):
    """The paper's score (A.1.2): e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j); keys U_a h_j (+ b_a)."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)  # W_a
        self.annotation_projection = nn.Linear(annotation_size, hidden_size)  # U_a (+ b_a)
        self.score = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def prepare(self, annotations: Tensor) -> Tensor:
        """U_a h_j (+ b_a): B x S x n'."""
        return self.annotation_projection(annotations)

    def energies(self, query: Tensor, keys: Tensor) -> Tensor:
        """v_a^T tanh(W_a s_{i-1} + U_a h_j): B x S."""
        return self.score(torch.tanh(self.query_projection(query)[:, None] + keys)).squeeze(-1)

    def initialize_(self) -> None:
        """B.1: W_a, U_a ~ N(0, 0.001^2); v_a = 0 (so every alpha_i starts uniform); b_a = 0."""
        nn.init.normal_(self.query_projection.weight, std=ALIGNMENT_STD)
        nn.init.normal_(self.annotation_projection.weight, std=ALIGNMENT_STD)
        nn.init.zeros_(self.annotation_projection.bias)
        nn.init.zeros_(self.score.weight)


class GeneralAttention(Attention):
    """Luong, Pham & Manning (2015)'s ``general`` score, not the paper's: e_ij = s_{i-1}^T W_a h_j,
    with the paper's query s_{i-1} (Luong et al. score the current state). Keys W_a h_j, so a step
    costs one product of s_{i-1} with the keys. ``hidden_size`` is unused: W_a maps h_j to n."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int) -> None:
        super().__init__()
        self.bilinear = nn.Linear(annotation_size, query_size, bias=False)  # W_a

    def prepare(self, annotations: Tensor) -> Tensor:
        """W_a h_j: B x S x n."""
        return self.bilinear(annotations)

    def energies(self, query: Tensor, keys: Tensor) -> Tensor:
        """s_{i-1}^T (W_a h_j): B x S."""
        return (keys @ query[:, :, None]).squeeze(-1)

    def initialize_(self) -> None:
        """As B.1 initialises the paper's W_a: N(0, 0.001^2)."""
        nn.init.normal_(self.bilinear.weight, std=ALIGNMENT_STD)


ATTENTIONS: dict[str, type[Attention]] = {"additive": AdditiveAttention, "general": GeneralAttention}
