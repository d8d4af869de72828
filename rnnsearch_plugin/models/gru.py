"""The gated hidden unit of Cho et al. (2014a), exactly as the paper writes it (Appendix A.1.1, A.2.1).

    z_i = sigma(W_z x_i + U_z h_{i-1} + C_z c_i)          update gate
    r_i = sigma(W_r x_i + U_r h_{i-1} + C_r c_i)          reset gate
    h~_i = tanh(W x_i + U [r_i o h_{i-1}] + C c_i)        candidate (reset *before* U)
    h_i = (1 - z_i) o h_{i-1} + z_i o h~_i

This differs from ``torch.nn.GRU`` (the cuDNN variant), which resets *after* the product,
r o (U h + b), and interpolates the other way round. The terms that do not depend on h_{i-1}
(W x_i + b, and C c_i in the decoder) are the caller's, passed in as ``input_terms``.
"""

import torch
from torch import Tensor, nn


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

    def forward(self, input_terms: Tensor, hidden: Tensor) -> Tensor:
        """input_terms: B x 3n (the z, r and candidate terms that do not read h_{i-1}); hidden h_{i-1}: B x n -> h_i: B x n."""
        x_z, x_r, x_h = input_terms.chunk(3, dim=-1)
        u_z, u_r = self.gate_recurrence(hidden).chunk(2, dim=-1)
        update = torch.sigmoid(x_z + u_z)  # z_i
        reset = torch.sigmoid(x_r + u_r)  # r_i
        candidate = torch.tanh(x_h + self.candidate_recurrence(reset * hidden))  # h~_i
        return (1 - update) * hidden + update * candidate


def run_masked_recurrence(cell: GatedRecurrentUnit, input_terms: Tensor, mask: Tensor, reverse: bool = False) -> tuple[Tensor, Tensor]:
    """Run ``cell`` over the time axis of a padded batch (A.2.1), h_0 = 0.

    input_terms: B x T x 3n; mask: B x T (True on real tokens). A padded position leaves the
    state unchanged, so left and right padding give the same states at real positions, and the
    final state is h_{T_x} of the sentence (forward) or h_1 (reverse, the backward RNN).
    Returns (states B x T x n, final state B x n).
    """
    hidden = input_terms.new_zeros(input_terms.shape[0], cell.hidden_size)
    positions = range(input_terms.size(1))
    states = [hidden] * len(positions)
    for j in reversed(positions) if reverse else positions:
        hidden = torch.where(mask[:, j, None], cell(input_terms[:, j], hidden), hidden)
        states[j] = hidden
    return torch.stack(states, dim=1), hidden
