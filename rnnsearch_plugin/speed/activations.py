"""tanh, the nonlinearity of the gated unit's candidate (A.1.1), the alignment model (A.1.2) and
s_0 (A.2.2), by the faster of two exact routes through torch's CPU kernels on the processor at hand.

The identity tanh(x) = 2 sigmoid(2x) - 1 holds exactly (both are (e^x - e^-x) / (e^x + e^-x)); in
floating point its result stays within 2e-7 of ``torch.tanh`` in float32 and 3e-16 in float64, which
a test checks with the gradients. Its backward is tanh's own, 1 - y^2 from the saved output y, so
the gradient is tanh's whichever route the forward took. Which route is faster depends on the
kernels torch runs on the processor, so the route is chosen by them:

- float32 (and float64) where torch's CPU kernels are AVX2 ones, or on an AMD processor whatever
  its kernels: 2 sigmoid(2x) - 1, since torch's tanh is the slower there. The alignment model takes
  a tanh over every (hypothesis, source position) pair at every step, where this counts most.
- float32 with AVX512 kernels on other processors (an Intel Xeon): ``torch.tanh``, the faster there.
- bfloat16 and float16 on the CPU: torch's half-precision tanh is slower than its float32 one, so
  the tanh is taken in float32 from the upcast input, by the route above. Under autocast
  (``precision.py``) the float32 result is returned, for the float32 state update and the
  products that cast it anyway; without autocast (a model converted to half) it is cast back.
This is the engine's ``tanh_route`` (``tricks.py``); without it, ``torch.tanh``. Which of the two
float32 routes the processor takes is read once, when the engine is built (``sigmoid_route_is_faster``,
``Tricks.by_sigmoid``), and passed to every call. What each choice measured, and on which
processor: ``benchmarks/changes.md``.
"""

import torch
from torch import Tensor

from .routes import cpuinfo_field

HALF_DTYPES = (torch.bfloat16, torch.float16)


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


def sigmoid_route(x: Tensor) -> Tensor:
    """tanh as 2 sigmoid(2x) - 1, with tanh's backward."""
    if torch.is_grad_enabled() and x.requires_grad:
        return _SigmoidTanh.apply(x)
    return sigmoid_tanh(x)  # decoding: no autograd.Function call and its overhead


def tanh(x: Tensor, by_sigmoid: bool) -> Tensor:
    """tanh(x), in float32 for a half-precision x (above), as 2 sigmoid(2x) - 1 where ``by_sigmoid``."""
    if x.dtype in HALF_DTYPES:
        y = tanh(x.float(), by_sigmoid)
        return y if torch.is_autocast_enabled("cpu") else y.to(x.dtype)
    return sigmoid_route(x) if by_sigmoid else torch.tanh(x)


def sigmoid_route_is_faster() -> bool:
    """Where float32 tanh is faster as 2 sigmoid(2x) - 1 (above): torch's AVX2 kernels, or an AMD
    processor (``vendor_id`` in /proc/cpuinfo; elsewhere the kernels decide alone)."""
    return torch.backends.cpu.get_cpu_capability() == "AVX2" or cpuinfo_field("vendor_id") == "AuthenticAMD"
