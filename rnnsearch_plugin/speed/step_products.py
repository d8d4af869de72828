"""The products a recurrence takes at every step with an operand shared by all steps, their
gradient with respect to that operand computed once per sequence, in training.

The shared operands are the GRUs' U_z, U_r, U (A.1.1), the decoder's W_a and C (A.1.2, A.2.2), and
the annotations h_j that every c_i = sum_j alpha_ij h_j weighs. For y_t = x_t M at steps t = 1..T,
backpropagation through time gives dL/dM = sum_t x_t^T (dL/dy_t). Autograd takes each term at its
own step: a product over the B rows of one step, added to a running sum of M's size. At the paper's
size that is 50 x 3000 x 2000 values added for C alone per update, and small products that
bfloat16's matrix units run far below their rate. Here each step keeps x_t in the forward pass and
dL/dy_t in the backward pass (where it also gives dL/dx_t = (dL/dy_t) M^T as usual), and the
gradient is one product over all B T rows: [x_1; ...; x_T]^T [dL/dy_1; ...; dL/dy_T]. The node that
hands the steps their operand (cast to the products' dtype once) runs it: autograd reaches that node
only after every step that used the operand. The gradient is the same sum of the same products,
taken in one; a test compares every parameter's gradient with autograd's through the literal
equations. What it saves: ``benchmarks/changes.md``.

Without autograd (decoding, validation), or where the engine leaves the trick out (``tricks.py``),
the products are plain ones.
"""

from typing import Any, Callable, Optional, Union

import torch
from torch import Tensor, nn

from .precision import product_dtype

Operand = Union[nn.Linear, Tensor]
StepProduct = Callable[[Tensor, Any], Tensor]  # (x, operand) -> x times the operand


class _Tape:
    """What the steps of one operand keep: their inputs x_t and, in backward, dL/dy_t."""

    def __init__(self) -> None:
        self.inputs: list[Tensor] = []
        self.grads: dict[int, Tensor] = {}


class _SharedOperand(torch.autograd.Function):
    """operand -> the same values in ``dtype``, contiguous; its backward is the deferred product."""

    @staticmethod
    def forward(ctx: Any, operand: Tensor, dtype: torch.dtype, tape: _Tape) -> Tensor:
        ctx.tape, ctx.operand_dtype, ctx.width = tape, operand.dtype, operand.shape[-1]
        ctx.set_materialize_grads(False)
        return operand.detach().to(dtype, copy=True, memory_format=torch.contiguous_format)

    @staticmethod
    def backward(ctx: Any, _unused: Optional[Tensor]) -> tuple[Optional[Tensor], None, None]:
        tape = ctx.tape
        inputs = torch.cat(tape.inputs, dim=-2)  # ... x (T B rows, or T per sentence) x k
        grads = torch.cat(
            [
                tape.grads.get(step, x.new_zeros(*x.shape[:-1], ctx.width))  # zeros: an unused step
                for step, x in enumerate(tape.inputs)
            ],
            dim=-2,
        )
        tape.inputs.clear(), tape.grads.clear()
        return (inputs.transpose(-1, -2) @ grads).to(ctx.operand_dtype), None, None


class _StepProduct(torch.autograd.Function):
    """x_t M, keeping x_t for the deferred dL/dM and dL/dy_t in backward."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, matrix: Tensor, tape: _Tape) -> Tensor:
        ctx.save_for_backward(matrix)
        ctx.tape, ctx.step = tape, len(tape.inputs)
        tape.inputs.append(x)
        return x @ matrix

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None]:
        (matrix,) = ctx.saved_tensors
        ctx.tape.grads[ctx.step] = grad
        return grad @ matrix.transpose(-1, -2), None, None


class StepProducts:
    """``multiply(x, operand)`` = x W^T for an ``nn.Linear`` without bias, x @ M for a tensor M,
    with dL/dW (dL/dM) deferred as above when ``deferred`` and autograd records (``like``: a tensor
    of the recurrence, for the products' dtype)."""

    def __init__(self, like: Tensor, deferred: bool) -> None:
        self.deferred = deferred and torch.is_grad_enabled()
        self.dtype = product_dtype(like)
        self.shared: dict[int, tuple[Tensor, _Tape]] = {}

    def multiply(self, x: Tensor, operand: Operand) -> Tensor:
        if isinstance(operand, nn.Linear) and operand.bias is not None:
            raise ValueError("a step product takes no bias: add it to the step's input terms")
        if not self.deferred:
            return direct(x, operand)
        if id(operand) not in self.shared:
            matrix = operand.weight.t() if isinstance(operand, nn.Linear) else operand
            tape = _Tape()
            self.shared[id(operand)] = (_SharedOperand.apply(matrix, self.dtype, tape), tape)
        matrix, tape = self.shared[id(operand)]
        return _StepProduct.apply(x.to(self.dtype), matrix, tape)


def direct(x: Tensor, operand: Operand) -> Tensor:
    """A plain step product, for callers outside a recurrence."""
    return operand(x) if isinstance(operand, nn.Linear) else x @ operand
