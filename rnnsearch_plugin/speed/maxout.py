"""The maxout of the deep output (A.2.2, t_i = [max{t~_{i,k(j-1)+1}, ..., t~_{i,kj}}]_j) as
elementwise maxima of its k strided slices, with a backward that routes each gradient to the unit
that won its pool (the first of equal ones, as ``torch.max`` does).

``Tensor.amax`` over the last axis of the ... x l x k view computes the same values, but its
backward compares the input with the broadcast result, counts the winners per pool, divides and
multiplies (it splits a tie's gradient evenly). Here backward compares the kept input with the
kept maxima, one slice at a time, and gives each pool's gradient to its first winner: the gradient
of the maximum wherever a pool has one winner, and a subgradient of it at a tie. The forward is the
same pool maximum as without autograd. The gain on the CPU: ``benchmarks/changes.md``.
"""
from functools import reduce
from typing import Any

import torch
from torch import Tensor

from .routes import measured_on


def maxout(pre_maxout: Tensor, pool_size: int) -> Tensor:
    """pre_maxout: ... x (l k) -> ... x l, the maximum of each pool of k consecutive units
    (on a device other than the CPU by ``amax``, torch's own route: ``routes.py``)."""
    if not measured_on(pre_maxout.device):
        return pre_maxout.unflatten(-1, (-1, pool_size)).amax(-1)
    if pool_size > 1 and torch.is_grad_enabled() and pre_maxout.requires_grad:
        return _Maxout.apply(pre_maxout, pool_size)
    return pool_maximum(pre_maxout, pool_size)


def pool_maximum(pre_maxout: Tensor, pool_size: int) -> Tensor:
    return reduce(torch.maximum, pre_maxout.unflatten(-1, (-1, pool_size)).unbind(-1))


class _Maxout(torch.autograd.Function):
    """Keeps the input and the maxima; backward finds each pool's first winner by comparing them."""

    @staticmethod
    def forward(ctx: Any, pre_maxout: Tensor, pool_size: int) -> Tensor:
        result = pool_maximum(pre_maxout, pool_size)
        ctx.save_for_backward(pre_maxout, result)
        ctx.pool_size = pool_size
        return result

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        pre_maxout, result = ctx.saved_tensors
        pools = pre_maxout.unflatten(-1, (-1, ctx.pool_size))
        routed = torch.empty_like(pools)  # ... x l x k
        unrouted = grad  # what no earlier unit of the pool took: a tie's later units get 0
        for index in range(ctx.pool_size):
            torch.mul(unrouted, pools[..., index] == result, out=routed[..., index])
            unrouted = unrouted - routed[..., index]
        return routed.flatten(-2), None
