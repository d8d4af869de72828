"""fairseq's generation options that read the attention weights alpha_ij (Eq. 6).

``--print-alignment`` prints, and ``--replace-unk`` copies, the source word each target word
attends to most, or is aligned with by the model's alignment head where it has one (which of the
two, ``check_options`` logs). fairseq computes those alignments only with ``--print-alignment`` (its
generator then keeps the attention that incremental decoding returns, which our decoder returns
only when asked, ``make_generation_fast_``'s ``need_attn``); ``--replace-unk`` alone, or
with ``--print-alignment soft``, fails at the first ``<unk>`` with an IndexError or TypeError,
and RNNencdec has no attention to return. ``check_options`` says so in one line before
anything is generated; ``returning_attention`` serves ``print_alignment`` asked of the Python
API after the model was prepared without it. The ``--replace-unk`` check can go once fairseq's
generator computes the alignment that option copies from without ``--print-alignment`` (0.12.x
does not); the RNNencdec check belongs to the model and stays.
"""

import logging
from contextlib import contextmanager
from typing import Any, Iterator

from .errors import UserInputError

logger = logging.getLogger(__name__)

ALIGNED_BY = {"head": "the alignment head's a_ij", "attention": "the attention's alpha_ij (Eq. 6)"}
NO_ATTENTION = (
    "RNNencdec has no attention, so it has no alignment for --print-alignment or --replace-unk: "
    "use an rnnsearch model or one with an alignment head (--alignment-head), or leave those options out"
)


def check_options(model: Any, generation: Any) -> None:
    """Refuse the alignment options ``model`` cannot serve (``generation``: fairseq's cfg.generation)."""
    alignment = getattr(generation, "print_alignment", None)
    replace_unk = getattr(generation, "replace_unk", None) is not None
    if (alignment or replace_unk) and not model.aligns:
        raise UserInputError(NO_ATTENTION)
    if alignment:
        logger.info(f"--print-alignment prints {ALIGNED_BY[model.aligned_by]}")
    if replace_unk and alignment != "hard":
        raise UserInputError(
            "--replace-unk copies the source word each <unk> is aligned with, which fairseq "
            "computes only with a hard --print-alignment: add --print-alignment (not soft)"
        )


@contextmanager
def returning_attention(models: list[Any], alignment: Any) -> Iterator[None]:
    """Within the block, incremental decoding returns the attention when ``alignment`` asks for it."""
    if not alignment:
        yield
        return
    if not all(model.aligns for model in models):
        raise UserInputError(NO_ATTENTION)
    before = [model.decoder.need_attn for model in models]
    for model in models:
        model.decoder.need_attn = True
    try:
        yield
    finally:
        for model, need_attn in zip(models, before):
            model.decoder.need_attn = need_attn
