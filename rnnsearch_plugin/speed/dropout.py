"""Dropout (Srivastava et al. 2014; the paper names none, ``docs/paper.md``) with its
mask drawn from uniform numbers on the CPU.

In training each unit is zeroed with probability p and the others are scaled by 1 / (1 - p), as
``torch.nn.Dropout`` does; outside training, or at p = 0, the input passes unchanged. On the CPU
torch draws ``nn.Dropout``'s mask with ``bernoulli_``; here it is drawn as uniform numbers u in
[0, 1) compared with p, which keeps the distribution (P(u >= p) = 1 - p for each unit independently)
and is cheaper on the CPU (``benchmarks/changes.md``). The random stream differs from torch's, so a
seed gives other masks than ``nn.Dropout``'s. Other devices keep torch's fused dropout (``routes.py``).
The mask is drawn in float32 whatever the input's dtype, so that p is not rounded to bfloat16.
"""
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .routes import measured_on


class Dropout(nn.Module):
    def __init__(self, p: float = 0.0) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p

    def extra_repr(self) -> str:
        return f"p={self.p}"

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        if not measured_on(x.device):
            return F.dropout(x, self.p, training=True)
        return x * dropout_mask(x, self.p)


def dropout_mask(x: Tensor, p: float) -> Tensor:
    """0 with probability p, else 1 / (1 - p); x's shape and dtype."""
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    mask = torch.rand(x.shape, dtype=torch.float32).ge_(p).mul_(scale)  # P(u >= p) = 1 - p, u ~ U[0, 1)
    return mask.to(x.dtype)
