"""Row layout for beam search (fairseq's ``reorder_encoder_out`` / ``reorder_incremental_state``).

fairseq's SequenceGenerator keeps the k hypotheses of a source sentence in k consecutive rows
and reorders the encoder output and the decoder's cache at every step. What was computed from
the source alone (h_j, U_a h_j, C h_j, the padding mask) is the same for all k of them, so it
is kept once per *group* of k consecutive hypothesis rows: a source-side tensor has G rows,
a per-hypothesis tensor (s_{i-1}) has R = G k rows, and hypothesis row r reads group r // k.
Training and scoring have one hypothesis per sentence (k = 1).

Every row carries the index of its source sentence (``SENTENCE``, R entries). A reordering
that keeps each row's sentence (fairseq shuffling hypotheses within their beams) leaves the
source-side tensors as they are; one that changes it (the expansion to the beam, finished
sentences leaving the batch) selects their groups anew. Where the engine leaves this trick out
(``tricks.py``), every tensor is selected by row, one source-side row per hypothesis (k = 1), as
fairseq's lstm does. Either way each hypothesis row reads its own sentence's source side, so the
results are the same; holding it once per group saves the copies (``benchmarks/changes.md``).
"""

from collections.abc import Collection

import torch
from torch import Tensor

SENTENCE = "sentence"  # R: which source sentence each hypothesis row holds


def hypotheses_per_group(rows: int, source_side: Tensor) -> int:
    """k, for R = ``rows`` hypothesis rows over the G rows of a source-side tensor."""
    return rows // source_side.size(0)


def per_hypothesis(source_side: Tensor, rows: int) -> Tensor:
    """A source-side tensor (G x ...) repeated for each of its groups' hypothesis rows (R x ...)."""
    k = hypotheses_per_group(rows, source_side)
    return source_side if k == 1 else source_side.repeat_interleave(k, dim=0)


def new_groups(old_group: Tensor) -> Tensor:
    """The old group each new group reads, given the old group each new row reads: in groups of
    k again where the rows come in equal runs of k (fairseq's beams), else one group per row."""
    if len(old_group) == 0:
        return old_group
    changes = (old_group != old_group[0]).nonzero()
    k = int(changes[0]) if len(changes) else len(old_group)
    if len(old_group) % k == 0 and bool((old_group.view(-1, k) == old_group[::k, None]).all()):
        return old_group[::k]
    return old_group


def select_rows(
    tensors: dict[str, Tensor], new_order: Tensor, grouped: bool, per_hypothesis_keys: Collection[str] = ()
) -> dict[str, Tensor]:
    """Hypothesis rows ``new_order`` of ``tensors``: the tensors named in ``per_hypothesis_keys``
    have a row per hypothesis, the others (but ``SENTENCE``) a row per group where ``grouped``, else
    a row per hypothesis too."""
    sentence = tensors[SENTENCE].index_select(0, new_order)
    if not grouped:
        return {key: tensor.index_select(0, new_order) for key, tensor in tensors.items()}
    source_keys = [key for key in tensors if key != SENTENCE and key not in per_hypothesis_keys]
    selected = {key: tensors[key].index_select(0, new_order) for key in per_hypothesis_keys}
    if source_keys and not torch.equal(sentence, tensors[SENTENCE]):
        k = hypotheses_per_group(len(tensors[SENTENCE]), tensors[source_keys[0]])
        groups = new_groups(torch.div(new_order, k, rounding_mode="floor"))
        selected |= {key: tensors[key].index_select(0, groups) for key in source_keys}
    else:
        selected |= {key: tensors[key] for key in source_keys}
    return selected | {SENTENCE: sentence}
