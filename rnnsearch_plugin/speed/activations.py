"""tanh, the nonlinearity of the gated unit's candidate (A.1.1), the alignment model (A.1.2) and
s_0 (A.2.2), by the fastest exact route torch's CPU kernels offer on the processor at hand.

- float32 (and float64) where torch's CPU kernels are AVX2 ones: as 2 sigmoid(2x) - 1. torch's
  AVX2 tanh is 3.5x slower than the identity there (AMD EPYC: 1.3M floats 2.22 ms through
  ``tanh``, 0.64 ms through the identity, 2 threads; ``benchmarks/changes.md``), and the alignment
  model takes a tanh over every (hypothesis, source position) pair at every step. The identity is
  exact; in float32 its result stays within 2e-7 of tanh. The backward is tanh's own, 1 - tanh(x)^2.
- float32 with AVX512 kernels on an AMD processor: the identity too. torch's AVX512 tanh is slow
  there (AMD EPYC, family 26, 2 threads: 4M floats 7.8 ms through ``tanh``, 2.7 ms through the
  identity; the alignment model's tanh, forward and backward, was 16% of a paper-size step).
- float32 with AVX512 kernels elsewhere: torch's tanh, which is 3.4x *faster* than the identity on
  an Intel Xeon (1.3M floats 0.68 ms against 2.34 ms, one thread).
- bfloat16 and float16 on the CPU: torch's half-precision tanh is 5.5x slower than its float32
  one on the Xeon (3.75 against 0.68 ms), so the tanh is taken in float32 from the upcast input,
  by the route above. Under autocast
  (``precision.py``) the float32 result is returned, for the float32 state update and the
  products that cast it anyway; without autocast (a model converted to half) it is cast back.
- other devices: ``torch.tanh`` (``routes.py``).
"""
from functools import cache

import torch
from torch import Tensor

from .routes import cpuinfo_field, measured_on

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
    return sigmoid_tanh(x)  # decoding: no autograd.Function call (about 50 us each)


def tanh(x: Tensor) -> Tensor:
    if not measured_on(x.device):
        return torch.tanh(x)
    if x.dtype in HALF_DTYPES:
        y = tanh(x.float())
        return y if torch.is_autocast_enabled("cpu") else y.to(x.dtype)
    if sigmoid_route_is_faster():
        return sigmoid_route(x)
    return torch.tanh(x)


@cache
def sigmoid_route_is_faster() -> bool:
    """Where float32 tanh is faster as 2 sigmoid(2x) - 1 (above): torch's AVX2 kernels, or an AMD
    processor (``vendor_id`` in /proc/cpuinfo; elsewhere the kernels decide alone)."""
    return torch.backends.cpu.get_cpu_capability() == "AVX2" or cpuinfo_field("vendor_id") == "AuthenticAMD"
