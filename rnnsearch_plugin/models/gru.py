"""The gated hidden unit of Cho et al. (2014a), exactly as the paper writes it (Appendix A.1.1, A.2.1).

    z_i = sigma(W_z x_i + U_z h_{i-1} + C_z c_i)          update gate
    r_i = sigma(W_r x_i + U_r h_{i-1} + C_r c_i)          reset gate
    h~_i = tanh(W x_i + U [r_i o h_{i-1}] + C c_i)        candidate (reset *before* U)
    h_i = (1 - z_i) o h_{i-1} + z_i o h~_i

This differs from ``torch.nn.GRU`` (the cuDNN variant), which resets *after* the product,
r o (U h + b), and interpolates the other way round. The terms that do not depend on
h_{i-1} (W x_i, C c_i and the biases) are computed by the caller, for all positions at once
where possible, and passed in as ``input_terms``.
"""

import torch
from torch import Tensor, nn

from ..speed.activations import tanh
from ..speed.precision import state_dtype
from ..speed.step_products import StepProduct, StepProducts, direct


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

    def forward(self, input_terms: Tensor, hidden: Tensor, products: StepProduct = direct) -> Tensor:
        """input_terms: B x 3n (W x + C c + b, gates z, r, candidate); hidden: B x n -> B x n.
        ``products`` takes the products with U_z, U_r, U (``speed/step_products.py`` in a recurrence).

        Under bfloat16 autocast (``speed/precision.py``) the gates and the products run in bfloat16 on
        one bfloat16 copy of the float32 state, and the interpolation in float32."""
        x_z, x_r, x_h = input_terms.chunk(3, dim=-1)
        product_input = hidden.to(input_terms.dtype)  # a no-op unless hidden is a float32 state under autocast
        u_z, u_r = products(product_input, self.gate_recurrence).chunk(2, dim=-1)
        update = torch.sigmoid(x_z + u_z)
        reset = torch.sigmoid(x_r + u_r)
        candidate = tanh(x_h + products(reset * product_input, self.candidate_recurrence))
        return torch.lerp(hidden, candidate.to(hidden.dtype), update.to(hidden.dtype))  # (1 - z) o h + z o h~


def run_masked_recurrence(cell: GatedRecurrentUnit, input_terms: Tensor, mask: Tensor, reverse: bool = False) -> tuple[Tensor, Tensor]:
    """Run ``cell`` over the time axis of a padded batch.

    input_terms: B x T x 3n; mask: B x T (True on real tokens). A padded position leaves the
    state unchanged, so left and right padding give the same states at real positions, and the
    final state is h_{T_x} of the sentence (forward) or h_1 (reverse, the backward RNN).
    Returns (states B x T x n, final state B x n); h_0 = 0 (A.2.1), in ``state_dtype``.
    """
    hidden = input_terms.new_zeros(input_terms.shape[0], cell.hidden_size, dtype=state_dtype(input_terms))
    states, products = [], StepProducts(input_terms)
    steps = list(zip(input_terms.unbind(1), mask[..., None].unbind(1)))  # one slice op each
    for step_inputs, step_mask in reversed(steps) if reverse else steps:
        hidden = torch.where(step_mask, cell(step_inputs, hidden, products.multiply), hidden)
        states.append(hidden)
    if reverse:
        states.reverse()
    return torch.stack(states, dim=1), hidden
