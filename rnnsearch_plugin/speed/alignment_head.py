"""The engine's alignment head: ``models/alignment_head.py``'s equations, on the same parameters,
without the two large tensors autograd would keep for its backward pass:

- the prior's energies v_b^T tanh(W_b q_i + U_b h_j) by the attention's hand-written backward
  (``scores._AdditiveEnergies``, where the engine has it), which keeps W_b q_i and U_b h_j rather
  than the B x T x S x h tanh;
- the lexicon's normaliser log Z_j = log sum_y exp(L_y w_j + b_y) a chunk of source positions at a
  time (``_LogPartition``), whose backward computes each chunk's softmax again, rather than keeping
  the B x S x K_y logits and their float32 copy: the head's memory no longer grows with the target
  vocabulary. Training a head on a 30,000-word vocabulary: ``docs/training.md``, the head's cost.
"""

from typing import Any

import torch
from torch import Tensor

from ..models.alignment_head import AlignmentHead
from .precision import at_least_float32
from .scores import summed_energies
from .tricks import Tricks

ROWS = 256  # source positions per chunk of the normaliser: its buffers hold ROWS x K_y values


class CpuAlignmentHead(AlignmentHead):
    def __init__(self, tricks: Tricks, **head: Any) -> None:
        super().__init__(**head)
        self.tricks = tricks

    def prior_energies(self, query: Tensor, annotations: Tensor) -> Tensor:
        keys = self.annotation_projection(annotations)  # U_b h_j (+ b_b): B x S x h
        dtype = at_least_float32(keys.dtype)
        query_terms = self.query_projection(query)[:, :, None].to(dtype)  # W_b q_i: B x T x 1 x h
        return summed_energies(keys.to(dtype), query_terms, self.score.weight.to(dtype), self.tricks)

    def log_partition(self, words: Tensor) -> Tensor:
        with torch.autocast(words.device.type, enabled=False):
            flat = _LogPartition.apply(words.flatten(0, 1), self.lexicon.weight, self.lexicon.bias)
        return flat.view(words.shape[:-1])


def chunk_logits(words: Tensor, weight: Tensor, bias: Tensor, start: int) -> Tensor:
    """L w_j + b_L for the chunk of rows from ``start`` (weight and bias in the words' dtype, the
    products' under --amp), in float32 at least."""
    logits = torch.addmm(bias, words[start : start + ROWS], weight.t())
    return logits.to(at_least_float32(logits.dtype))


class _LogPartition(torch.autograd.Function):
    """log Z_n = logsumexp(L w_n + b_L) for rows w_n (N x h): N values, float32 at least. The
    gradient is g_n softmax_n: backward computes each chunk's logits again from w, L and b_L. The
    products run in the words' dtype, as autocast runs the reference's; the softmax and the sums of
    the parameters' gradients in float32 at least."""

    @staticmethod
    def forward(ctx: Any, words: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
        compute = weight.to(words.dtype), bias.to(words.dtype)
        chunks = [chunk_logits(words, *compute, start).logsumexp(-1) for start in range(0, len(words), ROWS)]
        log_partition = torch.cat(chunks) if chunks else words.new_zeros(0, dtype=at_least_float32(words.dtype))
        ctx.save_for_backward(words, weight, bias, log_partition)
        return log_partition

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        words, weight, bias, log_partition = ctx.saved_tensors
        weight_c, bias_c = weight.to(words.dtype), bias.to(words.dtype)
        grad_words = torch.empty_like(words)
        grad_weight = torch.zeros(weight.shape, dtype=log_partition.dtype, device=weight.device)
        grad_bias = torch.zeros(bias.shape, dtype=log_partition.dtype, device=bias.device)
        for start in range(0, len(words), ROWS):
            end = start + ROWS
            softmax = chunk_logits(words, weight_c, bias_c, start).sub_(log_partition[start:end, None]).exp_()
            scaled = softmax.mul_(grad[start:end, None])  # d loss / d logits = g_n softmax_n
            grad_bias += scaled.sum(0)
            scaled = scaled.to(words.dtype)
            grad_words[start:end] = scaled @ weight_c
            grad_weight += scaled.t() @ words[start:end]
        return grad_words, grad_weight.to(weight.dtype), grad_bias.to(bias.dtype)
