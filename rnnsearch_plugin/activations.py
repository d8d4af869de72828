"""tanh, the nonlinearity of the gated unit's candidate (A.1.1), the alignment model (A.1.2)
and s_0 (A.2.2), computed on the CPU as tanh(x) = 2 sigmoid(2x) - 1.

torch's CPU ``tanh`` is several times slower than its ``sigmoid``: on the benchmark machine 1.3M
floats take 2.22 ms through ``tanh`` and 0.64 ms through the identity (``benchmarks/changes.md``),
and the alignment model takes a tanh over every (hypothesis, source position) pair at every
step. The identity is exact; in float32 its result stays within 2e-7 of tanh. The backward is
tanh's own, 1 - tanh(x)^2. Half precision (where the identity rounds twice as coarsely as tanh)
and other devices (whose tanh is not the slow one) keep ``torch.tanh``.
"""
import torch
from torch import Tensor

IDENTITY_DTYPES = (torch.float32, torch.float64)


def sigmoid_tanh(x: Tensor) -> Tensor:
    """2 sigmoid(2x) - 1, in three passes over x."""
    return torch.sigmoid(x * 2).mul_(2).sub_(1)


class _SigmoidTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: Tensor) -> Tensor:
        y = sigmoid_tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: Tensor) -> Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


def tanh(x: Tensor) -> Tensor:
    if x.device.type != "cpu" or x.dtype not in IDENTITY_DTYPES:
        return torch.tanh(x)
    if torch.is_grad_enabled() and x.requires_grad:
        return _SigmoidTanh.apply(x)
    return sigmoid_tanh(x)  # decoding: no autograd.Function call (about 50 us each)
