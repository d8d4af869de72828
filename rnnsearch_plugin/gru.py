"""The gated hidden unit of Cho et al. (2014a), exactly as the paper writes it (Appendix A.1.1, A.2.1).

    z_i = sigma(W_z x_i + U_z h_{i-1} + C_z c_i)          update gate
    r_i = sigma(W_r x_i + U_r h_{i-1} + C_r c_i)          reset gate
    h~_i = tanh(W x_i + U [r_i o h_{i-1}] + C c_i)        candidate (reset *before* U)
    h_i = (1 - z_i) o h_{i-1} + z_i o h~_i

This differs from ``torch.nn.GRU`` (the cuDNN variant), which resets *after* the product,
r o (U h + b), and interpolates the other way round, so torch's fused GRU cannot run it. The
terms that do not depend on h_{i-1} (W x_i, C c_i and the biases) are computed by the caller,
for all positions at once where possible, and passed in as ``input_terms``.
"""
from typing import Callable, Optional

import torch
from torch import Tensor, nn


def gated_update(
    input_terms: Tensor, hidden: Tensor, gate_terms: Tensor, candidate_recurrence: Callable[[Tensor], Tensor]
) -> Tensor:
    """The four equations above. input_terms: ... x 3n (gates z, r, then the candidate);
    hidden h_{i-1}: ... x n; gate_terms [U_z; U_r] h_{i-1}: ... x 2n; candidate_recurrence: x -> U x."""
    n = hidden.size(-1)
    update, reset = torch.sigmoid(input_terms[..., : 2 * n] + gate_terms).chunk(2, dim=-1)
    candidate = torch.tanh(input_terms[..., 2 * n :] + candidate_recurrence(reset * hidden))
    return hidden + update * (candidate - hidden)  # = (1 - z) o h + z o h~


class GatedRecurrentUnit(nn.Module):
    """One step of the gated hidden unit; ``input_projection`` gives [W_z; W_r; W] x + b."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.input_projection = nn.Linear(input_size, 3 * hidden_size)  # [W_z; W_r; W], biases
        self.gate_recurrence = nn.Linear(hidden_size, 2 * hidden_size, bias=False)  # [U_z; U_r]
        self.candidate_recurrence = nn.Linear(hidden_size, hidden_size, bias=False)  # U

    def recurrent_matrices(self) -> list[Tensor]:
        """The n x n matrices U_z, U_r, U (initialised orthogonal, Appendix B.1)."""
        n = self.hidden_size
        gates = self.gate_recurrence.weight  # 2n x n: [U_z; U_r]
        return [gates[:n], gates[n:], self.candidate_recurrence.weight]

    def forward(self, input_terms: Tensor, hidden: Tensor, gate_terms: Optional[Tensor] = None) -> Tensor:
        """input_terms: B x 3n; hidden: B x n -> B x n. ``gate_terms`` = [U_z; U_r] h_{i-1} when
        the caller computed it already (fused with another product of h_{i-1})."""
        if gate_terms is None:
            gate_terms = self.gate_recurrence(hidden)
        return gated_update(input_terms, hidden, gate_terms, self.candidate_recurrence)


def run_masked_recurrence(
    cells: list[GatedRecurrentUnit], input_terms: list[Tensor], mask: Tensor
) -> tuple[list[Tensor], list[Tensor]]:
    """Run ``cells[0]`` left to right over ``input_terms[0]`` and, if given, ``cells[1]`` right to
    left over ``input_terms[1]`` (the backward RNN), both in one loop: at every step one batched
    product per recurrent matrix serves both directions.

    input_terms: B x T x 3n each; mask: B x T (True on real tokens). A padded position leaves the
    state unchanged, so left and right padding give the same states at real positions, and the
    final state is h_{T_x} of the sentence (forward) or h_1 (backward). Returns, per direction,
    the states B x T x n in source order and the final state B x n; h_0 = 0 (A.2.1).
    """
    directions = len(cells)
    flip = [lambda x: x, lambda x: x.flip(1)][:directions]  # the backward RNN reads the flipped sentence
    inputs = torch.stack([f(terms) for f, terms in zip(flip, input_terms)])  # D x B x T x 3n
    masks = torch.stack([f(mask) for f in flip])[..., None]  # D x B x T x 1
    gate_weights = torch.stack([cell.gate_recurrence.weight.t() for cell in cells])  # D x n x 2n
    candidate_weights = torch.stack([cell.candidate_recurrence.weight.t() for cell in cells])  # D x n x n
    hidden = inputs.new_zeros(directions, inputs.size(1), cells[0].hidden_size)  # D x B x n
    states = []
    for t in range(inputs.size(2)):
        updated = gated_update(inputs[:, :, t], hidden, torch.bmm(hidden, gate_weights),
                               lambda reset_hidden: torch.bmm(reset_hidden, candidate_weights))
        hidden = torch.where(masks[:, :, t], updated, hidden)
        states.append(hidden)
    stacked = torch.stack(states, dim=2)  # D x B x T x n
    return [f(direction) for f, direction in zip(flip, stacked.unbind(0))], list(hidden.unbind(0))
