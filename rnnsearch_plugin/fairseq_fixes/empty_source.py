"""An empty source sentence has the empty translation.

fairseq's beam search and sampling run the model on any source, and a source that is only
``</s>`` (an empty or blank line, in fairseq-interactive, in the Python API, in the server, or an
empty line of a binarized test set; blank: no visible character, ``blank.py``) still gets a fluent hypothesis that the decoder's language
model makes up from nothing: the Multi30k model answered "Plusieurs filles en train de jouer à
l'intérieur d'une petite fille." to "". Nothing was said, so the only right translation is the
empty one, and it is certain.

``install`` replaces ``FairseqTask.inference_step``, through which fairseq-generate,
fairseq-interactive and the hub interface (``translate``, ``sample``, ``generate``) all search:
for a search with a ``SequenceGenerator`` (beam search, sampling, ``--print-alignment``'s
``SequenceGeneratorWithAlignment``), the sentences whose source holds no token but ``</s>`` and
padding are taken out of the batch before the search, and each gets one hypothesis, ``</s>``
alone: score 0 (log 1), positional score 0 for the ``</s>``, and no attention or alignment (the
model never ran). The other sentences are searched as before, in a batch of the same width, so
their hypotheses do not change. ``--score-reference`` (``SequenceScorer``) scores the given
target and is left alone. This also fixes fairseq's own models (``lstm`` and ``transformer``
make up a sentence the same way); delete once fairseq's generator returns the empty translation
of an empty source itself (0.12.x does not).
"""

from typing import Any, Optional

import torch
from fairseq.sequence_generator import SequenceGenerator
from fairseq.tasks.fairseq_task import FairseqTask

from .patching import Function, wrap_once

Hypothesis = dict[str, Any]


def empty_rows(src_tokens: torch.Tensor, eos: int, pad: int) -> torch.Tensor:
    """A boolean per sentence of the batch: whether its source holds nothing but </s> and padding."""
    return (src_tokens.ne(eos) & src_tokens.ne(pad)).sum(dim=1).eq(0)


def empty_translation(eos: int, device: torch.device) -> list[Hypothesis]:
    """The one hypothesis of an empty source: </s>, with probability 1."""
    return [
        {
            "tokens": torch.tensor([eos], device=device),
            "score": torch.tensor(0.0, device=device),
            "attention": torch.empty(0),
            "alignment": torch.empty(0),
            "positional_scores": torch.zeros(1, device=device),
        }
    ]


def rows(value: Optional[Any], keep: torch.Tensor, batch_size: int) -> Optional[Any]:
    """``value``'s rows ``keep`` when it is a tensor with one row per sentence, else ``value``."""
    if isinstance(value, torch.Tensor) and value.dim() > 0 and value.size(0) == batch_size:
        return value[keep]
    return value


def searching_only_what_was_said(inference_step: Function) -> Function:
    def step(
        task: Any,
        generator: Any,
        models: Any,
        sample: dict[str, Any],
        prefix_tokens: Optional[torch.Tensor] = None,
        constraints: Optional[torch.Tensor] = None,
    ) -> list[list[Hypothesis]]:
        src_tokens = sample["net_input"].get("src_tokens") if isinstance(generator, SequenceGenerator) else None
        if src_tokens is None:
            return inference_step(task, generator, models, sample, prefix_tokens, constraints)
        empty = empty_rows(src_tokens, generator.eos, generator.pad)
        if not empty.any():
            return inference_step(task, generator, models, sample, prefix_tokens, constraints)
        keep, size = (~empty).nonzero().squeeze(1), len(src_tokens)
        searched = iter(
            inference_step(
                task,
                generator,
                models,
                {**sample, "net_input": {k: rows(v, keep, size) for k, v in sample["net_input"].items()}},
                rows(prefix_tokens, keep, size),
                rows(constraints, keep, size),
            )
            if len(keep)
            else []
        )
        return [empty_translation(generator.eos, src_tokens.device) if is_empty else next(searched) for is_empty in empty.tolist()]

    return step


def install() -> None:
    wrap_once(FairseqTask, "inference_step", searching_only_what_was_said)
