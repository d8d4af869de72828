"""Every sentence counts: stop fairseq from dropping the last batch of a dataset.

fairseq's ``data_utils.batch_by_size`` (0.12.x and main) ends with
``if bsz_mult > 1 and len(b[-1]) % bsz_mult != 0: b = b[:-1]``: with the default
``--required-batch-size-multiple 8`` it silently throws away the last (N mod 8) sentences of
every dataset it batches, in training, validation, generation and interactive translation.
The compiled batching routine itself (``data_utils_fast.batch_by_size_vec``) keeps every
sentence; only that Python line drops them. Its batches are consecutive slices of
``indices``, so the dropped batch is exactly the uncovered tail, which is put back here.

What the put-back batch does: it holds the last N mod m sentences of ``indices`` (m =
``--required-batch-size-multiple``), which fairseq orders by length, so the longest ones, and
it is the one batch whose size is not a multiple of m (fairseq's own batches are not either
when fewer than m sentences fit ``--max-tokens``). It is not padded up to a multiple of m, on a
GPU either: the multiple only lets fp16 kernels run at their best rate, and padding would mean
sentences counted twice in the loss (or translated twice) or rows of padding the criterion and
the generator would have to learn to skip; one batch in an epoch at a lower rate costs less. It comes after fairseq's batches:
validation and generation run it last; training shuffles each epoch's batches with the run's
seed, so it takes a random place in the epoch, the same in every run with the same seed,
including one resumed mid-epoch from a checkpoint (fairseq rebuilds the same batches and the
same order, then skips the updates already done; tested).

Delete once fairseq's ``batch_by_size`` keeps the tail itself (0.12.x and main drop it).
"""

import functools
from typing import Any, Callable, Optional

import numpy as np
from fairseq.data import data_utils

from .patching import wrap_once

Batcher = Callable[..., list[np.ndarray]]


def keeping_every_sentence(batch_by_size: Batcher) -> Batcher:
    """Wrap fairseq's ``batch_by_size`` so that its batches cover every index, in order."""

    @functools.wraps(batch_by_size)
    def batch_keeping_tail(
        indices: Any,
        num_tokens_fn: Callable[[int], int],
        num_tokens_vec: Optional[np.ndarray] = None,
        max_tokens: Optional[int] = None,
        max_sentences: Optional[int] = None,
        required_batch_size_multiple: int = 1,
        fixed_shapes: Optional[list[tuple[int, int]]] = None,
    ) -> list[np.ndarray]:
        if not isinstance(indices, np.ndarray):
            indices = np.fromiter(indices, dtype=np.int64, count=-1)
        batches = list(
            batch_by_size(
                indices,
                num_tokens_fn,
                num_tokens_vec,
                max_tokens,
                max_sentences,
                required_batch_size_multiple,
                fixed_shapes,
            )
        )
        covered = sum(len(batch) for batch in batches)
        if fixed_shapes is None and covered < len(indices):
            batches.append(indices[covered:])
        return batches

    return batch_keeping_tail


def install() -> None:
    """Replace ``fairseq.data.data_utils.batch_by_size``."""
    wrap_once(data_utils, "batch_by_size", keeping_every_sentence)
