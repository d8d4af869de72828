"""Appendix B.2's Adadelta update a block of values at a time on the CPU, so that its passes over a
parameter run in cache rather than in main memory.

``torch.optim.Adadelta`` makes six passes over each parameter's values (E[g^2], two square roots,
the quotient times g, E[dx^2], x) and allocates two temporaries of the parameter's size. At the
paper's size (80.4M values: 30,000 x 620 embeddings, W_o 30,000 x 500) every pass streams hundreds
of MB through memory, and the update is memory-bound. Here the same operations run on ``BLOCK``
values of a parameter at a time, into two block-sized temporaries, so each value is read from memory
once per state tensor. Every value goes through exactly the same floating-point operations as in
torch's update, and the state (``step``, ``square_avg``, ``acc_delta``) and hyper-parameters are
torch's, so optimizer checkpoints are interchangeable with ``torch.optim.Adadelta``'s. What it
saves at the paper's size: ``benchmarks/changes.md``.
"""
from typing import Any, Callable, Optional

import torch
from torch import Tensor

BLOCK = 1 << 18  # values per block: 1 MB per float32 tensor, six of them in a block's working set


class BlockwiseAdadelta(torch.optim.Adadelta):
    """``torch.optim.Adadelta(params, lr, rho, eps, weight_decay)`` computed blockwise (above);
    real dense gradients only, as the models here have."""

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if param.grad.is_sparse or param.is_complex():
                    raise RuntimeError("BlockwiseAdadelta takes real, dense gradients; use torch.optim.Adadelta")
                state = self._state_of(param)
                state["step"] += 1
                update(param, param.grad, state["square_avg"], state["acc_delta"], group)
        return loss

    def _state_of(self, param: Tensor) -> dict[str, Tensor]:
        """torch's Adadelta state, created as torch creates it."""
        state = self.state[param]
        if not state:
            state["step"] = torch.zeros((), dtype=torch.float32)
            state["square_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
            state["acc_delta"] = torch.zeros_like(param, memory_format=torch.preserve_format)
        return state


def update(param: Tensor, grad: Tensor, square_avg: Tensor, acc_delta: Tensor, group: dict[str, Any]) -> None:
    """One Adadelta step of ``param`` (B.2's equations in ``optim/rnnsearch_adadelta.py``), in place."""
    rho, eps, lr, weight_decay = group["rho"], group["eps"], group["lr"], group["weight_decay"]
    tensors = (param, grad, square_avg, acc_delta)
    if all(t.is_contiguous() for t in tensors):
        blocks, width = zip(*(t.view(-1).split(BLOCK) for t in tensors)), min(param.numel(), BLOCK)
    else:  # a layout without a flat view: the whole tensor is one block
        blocks, width = iter([tensors]), param.numel()
    std = torch.empty(width, dtype=param.dtype, device=param.device)
    delta = torch.empty_like(std)
    for p, g, square, accumulated in blocks:
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        square.mul_(rho).addcmul_(g, g, value=1 - rho)  # E[g^2]_t
        block_std = torch.add(square, eps, out=std[: square.numel()].view_as(square)).sqrt_()
        block_delta = torch.add(accumulated, eps, out=delta[: square.numel()].view_as(square)).sqrt_()
        block_delta.div_(block_std).mul_(g)  # -dx_t
        accumulated.mul_(rho).addcmul_(block_delta, block_delta, value=1 - rho)  # E[dx^2]_t
        p.add_(block_delta, alpha=-lr)
