"""Analytic count of the matrix multiply-adds of one sentence pair, term by term from Appendix A.2
(embedding look-ups, gate non-linearities, the softmax and other element-wise work excluded).

Source length T_x, target length T_y; source/target embeddings m_x, m_y; encoder GRU size n_x
per direction, D directions (2 for RNNsearch, 1 for RNNencdec), context size c = D n_x;
decoder GRU size n; alignment size n'; maxout units l with pool size k; target vocabulary K_y.

    encoder GRU(s)       D T_x (3 n_x m_x + 3 n_x n_x)         [W_z;W_r;W] x_j, [U_z;U_r;U] h_{j-1}
    s_0                  n_x n                                  W_s
    decoder GRU          T_y (3 n m_y + 3 n n)                  E y_{i-1} and s_{i-1} terms
    context into GRU     T_y 3 n c   (RNNencdec: 3 n c once)    [C_z;C_r;C] c_i
    alignment            the score's count, ``MULTIPLY_ADDS``   (``models/attention.py``'s scores)
                         additive: T_x c n' + T_y n n' + T_y T_x n'
                         U_a h_j once per sentence, W_a s_{i-1}, v_a^T tanh(.)
                         general: T_x c n + T_y T_x n
                         another score: counted by torch's FlopCounterMode on its own
                         ``prepare`` and ``energies`` (``measured_multiply_adds``)
    context              T_y T_x c                              sum_j alpha_ij h_j
    deep output          T_y k l (n + m_y) + T_y l K_y          U_o s, V_o E y_{i-1}, W_o t_i
                         + T_y k l c   (RNNencdec: k l c once)  C_o c_i

A training step costs three times the forward count (the backward pass computes the gradient
with respect to both operands of every product), the usual convention for model-FLOP
utilisation; one multiply-add is two floating-point operations.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Optional

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from rnnsearch_plugin.models.attention import AdditiveAttention, Attention, GeneralAttention


def additive_multiply_adds(attention: AdditiveAttention, source_length: int, target_length: int) -> int:
    """U_a h_j once per sentence, W_a s_{i-1} and v_a^T tanh(.) at every step."""
    query_size, hidden = attention.query_projection.in_features, attention.query_projection.out_features
    annotation_size = attention.annotation_projection.in_features
    return hidden * (source_length * annotation_size + target_length * query_size + target_length * source_length)


def general_multiply_adds(attention: GeneralAttention, source_length: int, target_length: int) -> int:
    """W_a h_j once per sentence, s_{i-1}^T (W_a h_j) at every step."""
    query_size, annotation_size = attention.bilinear.out_features, attention.bilinear.in_features
    return query_size * source_length * (annotation_size + target_length)


MULTIPLY_ADDS: dict[type[Attention], Callable[..., int]] = {
    AdditiveAttention: additive_multiply_adds,
    GeneralAttention: general_multiply_adds,
}


def measured_multiply_adds(attention: Attention, query_size: int, annotation_size: int, source_length: int, target_length: int) -> int:
    """A score's multiply-adds over one sentence pair, counted by torch: ``prepare`` once on
    T_x annotations, ``energies`` for T_y queries (zeros, without gradients)."""
    like = next(attention.parameters())
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        keys = attention.prepare(like.new_zeros(1, source_length, annotation_size))
        attention.energies(like.new_zeros(target_length, query_size), keys.expand(target_length, *keys.shape[1:]))
    return counter.get_total_flops() // 2


def attention_multiply_adds(attention: Attention, query_size: int, annotation_size: int) -> Callable[[int, int], int]:
    """(T_x, T_y) -> the score's multiply-adds: its ``MULTIPLY_ADDS`` entry, or else torch's count."""
    counted = MULTIPLY_ADDS.get(type(attention))
    if counted is not None:
        return partial(counted, attention)
    return partial(measured_multiply_adds, attention, query_size, annotation_size)


@dataclass(frozen=True)
class ModelSize:
    source_embed: int  # m_x
    encoder_hidden: int  # n_x
    directions: int  # D
    target_embed: int  # m_y
    decoder_hidden: int  # n
    attention: Optional[Callable[[int, int], int]]  # the score's multiply-adds (T_x, T_y); None: RNNencdec
    maxout_units: int  # l
    pool_size: int  # k
    target_vocab: int  # K_y

    @classmethod
    def of(cls, model: nn.Module) -> "ModelSize":
        encoder, decoder = model.encoder, model.decoder
        return cls(
            source_embed=encoder.embed_tokens.embedding_dim,
            encoder_hidden=encoder.hidden_size,
            directions=2 if encoder.backward_rnn is not None else 1,
            target_embed=decoder.embed_tokens.embedding_dim,
            decoder_hidden=decoder.rnn.hidden_size,
            attention=(
                attention_multiply_adds(decoder.attention, decoder.rnn.hidden_size, decoder.context_projection.in_features)
                if decoder.attention is not None
                else None
            ),
            maxout_units=decoder.deep_output.output_projection.in_features,
            pool_size=decoder.deep_output.pool_size,
            target_vocab=decoder.deep_output.output_projection.out_features,
        )


def gru_multiply_adds(input_size: int, hidden_size: int, steps: int) -> int:
    return steps * 3 * hidden_size * (input_size + hidden_size)


def forward_multiply_adds(size: ModelSize, source_length: int, target_length: int) -> int:
    """Multiply-adds of one forward pass over a sentence pair (T_x, T_y)."""
    t_x, t_y = source_length, target_length
    n, kl = size.decoder_hidden, size.pool_size * size.maxout_units
    context = size.directions * size.encoder_hidden
    count = size.directions * gru_multiply_adds(size.source_embed, size.encoder_hidden, t_x)
    count += size.encoder_hidden * n + gru_multiply_adds(size.target_embed, n, t_y)
    count += t_y * kl * (n + size.target_embed) + t_y * size.maxout_units * size.target_vocab
    context_steps = t_y if size.attention else 1  # RNNencdec's fixed c is projected once per sentence
    count += context_steps * (3 * n + kl) * context
    if size.attention:
        count += size.attention(t_x, t_y) + t_y * t_x * context
    return count


def training_flops(size: ModelSize, source_length: int, target_length: int) -> int:
    """Floating-point operations of one training step (forward + backward) on a sentence pair."""
    return 3 * 2 * forward_multiply_adds(size, source_length, target_length)
