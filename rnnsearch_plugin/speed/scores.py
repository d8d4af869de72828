"""The engine's attention: any score of ``models/attention.py`` in beam search's group layout
(``beam_reordering.py``: keys G x S x ..., queries R = G k, alpha G x k x S), with a faster route
for the scores registered in ``FAST_ENERGIES``; a score not registered runs its own ``energies``
on keys repeated per hypothesis, so a new score needs nothing here.

- keys (``prepare``) are held in float32 or wider whatever the products' precision (``precision.py``);
- the additive score (A.1.2): the engine's tanh, and a hand-written backward (``_AdditiveEnergies``, the engine's ``energies_backward``);
- the general score: one batched product of the queries with the keys.
"""

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ..models.attention import AdditiveAttention, Attention, GeneralAttention
from .beam_reordering import per_hypothesis
from .precision import at_least_float32
from .tricks import Tricks

Energies = Callable[[Any, Tensor, Tensor, Tricks], Tensor]  # (score, query R x n, keys G x S x ..., tricks) -> G x k x S
Tanh = Callable[[Tensor], Tensor]


def prepare(attention: Attention, annotations: Tensor) -> Tensor:
    """The score's keys, G x S x ..., in float32 or wider."""
    keys = attention.prepare(annotations)
    return keys.to(at_least_float32(keys.dtype))


def attend(attention: Attention, query: Tensor, keys: Tensor, padding_mask: Tensor, tricks: Tricks) -> Tensor:
    """alpha_i, G x k x S (float32 or wider): ``Attention.forward`` in the group layout."""
    fast = FAST_ENERGIES.get(type(attention))
    if fast is not None:
        energies = fast(attention, query, keys, tricks)
    else:
        groups = keys.size(0)
        rows = per_hypothesis(keys, len(query))
        energies = attention.energies(query.to(keys.dtype), rows).view(groups, -1, keys.size(1))
    return torch.softmax(energies.masked_fill(padding_mask[:, None], float("-inf")), dim=-1)


ENERGY_VALUES = 1 << 23  # tanh values held at a time by ``additive_energies`` (32 MB in float32)


def additive_energies(projected: Tensor, query_terms: Tensor, score: Tensor, tanh: Tanh) -> Tensor:
    """tanh(U_a h + W_a s) v_a: projected G x S x n', query_terms G x k x 1 x n', score 1 x n'.
    Over many queries (the alignment head's k = T in a forced pass) a few of the k at a time,
    so that the G x k x S x n' sum and tanh are never held whole."""
    rows = max(1, ENERGY_VALUES // projected.numel())  # of the k queries, per chunk
    chunks = [
        (tanh(projected[:, None] + query_terms[:, start : start + rows]) @ score.t()).squeeze(-1)
        for start in range(0, query_terms.size(1), rows)
    ]
    return chunks[0] if len(chunks) == 1 else torch.cat(chunks, dim=1)


class _AdditiveEnergies(torch.autograd.Function):
    """``additive_energies`` keeping U_a h, W_a s and v_a for backward rather than the
    G x k x S x n' tanh of every step, which backward takes again from them (the same inputs, so
    the same y); and the gradients written out from y and e' = d loss / d e: e' y summed over all
    rows for v_a, and (1 - y^2) e' v_a summed over k for U_a h and over S for W_a s, rather than
    autograd's outer product with K = 1 for v_a. The equations' gradient test covers it; the
    memory it saves: ``benchmarks/changes.md``."""

    @staticmethod
    def forward(ctx: Any, projected: Tensor, query_terms: Tensor, score: Tensor, tanh: Tanh) -> Tensor:
        ctx.save_for_backward(projected, query_terms, score)
        ctx.tanh = tanh
        return additive_energies(projected, query_terms, score, tanh)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor, Tensor, None]:
        projected, query_terms, score = ctx.saved_tensors
        with torch.autocast(grad.device.type, enabled=False):
            hidden = ctx.tanh(projected[:, None] + query_terms)  # y, G x k x S x n'
            grad_score = grad.reshape(1, -1) @ hidden.reshape(-1, hidden.size(-1))  # sum e' y: 1 x n'
            grad_sum = hidden.mul_(hidden).neg_().add_(1).mul_(grad[..., None]).mul_(score)  # (1 - y^2) e' v_a
        # the sum over k; in training k = 1, where sum(1) would zero-fill and add a G x S x n' tensor
        grad_projected = grad_sum.squeeze(1) if grad_sum.size(1) == 1 else grad_sum.sum(1)
        return grad_projected, grad_sum.sum(2, keepdim=True), grad_score, None


def additive(attention: AdditiveAttention, query: Tensor, keys: Tensor, tricks: Tricks) -> Tensor:
    """The sum, the tanh and v_a's weighted sum over n' run in the keys' dtype: over G x k x S x n'
    values, casting to bfloat16 and back would cost more than the small v_a product saves."""
    groups, _, hidden = keys.shape
    query_terms = attention.query_projection(query).view(groups, -1, 1, hidden)  # W_a s: G x k x 1 x n'
    return summed_energies(keys, query_terms.to(keys.dtype), attention.score.weight.to(keys.dtype), tricks)


def summed_energies(keys: Tensor, query_terms: Tensor, score: Tensor, tricks: Tricks) -> Tensor:
    """``additive_energies`` outside autocast, by ``_AdditiveEnergies`` where gradients are recorded
    and the engine has the trick (else autograd's backward through the same forward)."""
    with torch.autocast(keys.device.type, enabled=False):
        if torch.is_grad_enabled() and tricks.energies_backward:
            return _AdditiveEnergies.apply(keys, query_terms, score, tricks.tanh)
        return additive_energies(keys, query_terms, score, tricks.tanh)


def general(attention: GeneralAttention, query: Tensor, keys: Tensor, tricks: Tricks) -> Tensor:
    groups, _, size = keys.shape
    with torch.autocast(keys.device.type, enabled=False):
        return query.to(keys.dtype).view(groups, -1, size) @ keys.transpose(1, 2)  # G x k x S


FAST_ENERGIES: dict[type[Attention], Energies] = {AdditiveAttention: additive, GeneralAttention: general}
