"""Row selection for beam search (fairseq's ``reorder_encoder_out`` / ``reorder_incremental_state``).

fairseq's SequenceGenerator reorders the encoder output and the decoder's cache at every step.
Most steps only shuffle hypotheses among the rows of their own source sentence, and what was
computed from the source alone (the annotations h_j, U_a h_j, the padding mask) is the
same in all rows of a sentence. Each row therefore carries the index of its sentence
(``SENTENCE``), and the source-side tensors are copied only when some row changes sentence:
the first expansion to the beam size, and when finished sentences leave the batch.
"""
from collections.abc import Collection

import torch
from torch import Tensor

SENTENCE = "sentence"  # B: which source sentence each row holds


def select_rows(
    tensors: dict[str, Tensor], new_order: Tensor, per_hypothesis: Collection[str] = ()
) -> dict[str, Tensor]:
    """Rows ``new_order`` of every tensor; the tensors not named in ``per_hypothesis`` depend
    only on the source sentence and are kept as they are while each row keeps its sentence."""
    sentence = tensors[SENTENCE].index_select(0, new_order)
    moved = not torch.equal(sentence, tensors[SENTENCE])
    return {
        key: value.index_select(0, new_order) if moved or key in per_hypothesis else value
        for key, value in tensors.items()
    } | {SENTENCE: sentence}
