"""The engine's gated unit (A.1.1) and masked recurrence (A.2.1): ``models/gru.py``'s equations on
the same parameters, with the engine's tanh (``activations.py``) and, under bfloat16 autocast (``precision.py``), the gates and products in
bfloat16 on one bfloat16 copy of the float32 state, the interpolation in float32.
"""

import torch
from torch import Tensor

from ..models.gru import GatedRecurrentUnit
from .precision import state_dtype
from .scores import Tanh
from .tricks import Tricks


def gru_step(cell: GatedRecurrentUnit, input_terms: Tensor, hidden: Tensor, tanh: Tanh) -> Tensor:
    """``GatedRecurrentUnit.forward``: input_terms B x 3n, hidden B x n -> B x n."""
    x_z, x_r, x_h = input_terms.chunk(3, dim=-1)
    product_input = hidden.to(input_terms.dtype)  # a no-op unless hidden is a float32 state under autocast
    u_z, u_r = cell.gate_recurrence(product_input).chunk(2, dim=-1)
    update = torch.sigmoid(x_z + u_z)
    reset = torch.sigmoid(x_r + u_r)
    candidate = tanh(x_h + cell.candidate_recurrence(reset * product_input))
    return torch.lerp(hidden, candidate.to(hidden.dtype), update.to(hidden.dtype))  # (1 - z) o h + z o h~


def run_masked_recurrence(
    cell: GatedRecurrentUnit, input_terms: Tensor, mask: Tensor, tricks: Tricks, reverse: bool = False
) -> tuple[Tensor, Tensor]:
    """``models/gru.py``'s ``run_masked_recurrence``, states in ``state_dtype``, by the engine's ``tricks``."""
    hidden = input_terms.new_zeros(input_terms.shape[0], cell.hidden_size, dtype=state_dtype(input_terms))
    states = []
    steps = list(zip(input_terms.unbind(1), mask[..., None].unbind(1)))  # one slice op each
    for step_inputs, step_mask in reversed(steps) if reverse else steps:
        hidden = torch.where(step_mask, gru_step(cell, step_inputs, hidden, tricks.tanh), hidden)
        states.append(hidden)
    if reverse:
        states.reverse()
    return torch.stack(states, dim=1), hidden
