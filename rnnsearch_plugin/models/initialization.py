"""Parameter initialisation of Appendix B.1.

- recurrent matrices U, U_z, U_r of every GRU (forward, backward, decoder): random orthogonal;
- the alignment model: its own ``initialize_`` (``attention.py``; the paper's: W_a and U_a
  N(0, 0.001^2), v_a 0);
- every bias: 0;
- every other weight matrix (embeddings included): N(0, 0.01^2).

A.2 omits the biases ("we omit all bias terms"); the implementation has b_z, b_r, b on the
inputs of each GRU and one on each of W_s, U_a (b_a), U_o and W_o, and no others.
"""

from torch import nn

from .attention import Attention
from .gru import GatedRecurrentUnit

WEIGHT_STD = 0.01


def initialize_parameters(model: nn.Module) -> None:
    """Apply B.1 to every parameter of ``model`` (in place)."""
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=WEIGHT_STD)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            nn.init.zeros_(module.weight[module.padding_idx])
    for module in model.modules():
        if isinstance(module, GatedRecurrentUnit):
            for matrix in module.recurrent_matrices():
                nn.init.orthogonal_(matrix)
        if isinstance(module, Attention):
            module.initialize_()
