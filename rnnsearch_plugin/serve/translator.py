"""One batch of rnnsearch-serve's requests through the hub interface (``hub.py``).

Translation is fairseq's beam search (``generate``, one call for the whole batch); each
hypothesis's soft alignment comes from forcing it through the model (``forced``, as ``align``
does; beam search itself keeps no attention, see models/decoder.py): the alignment head's a_ij
where the model has one, with the attention's alpha_ij (Eq. 6) beside it for the page's heatmap,
else alpha_ij. Each is merged into words as ``rnnsearch-heatmaps`` merges it
(``analysis.alignment.merge_pieces``: source pieces summed, target pieces averaged), or left in
pieces when asked. Scores are fairseq's
natural-log scores: a hypothesis's ``score`` is its beam-search score (log-probability per
token with --lenpen 1; fairseq-generate prints it divided by ln 2), a scored pair's is the sum
of its tokens' log-probabilities, </s> included.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Iterator, Optional

import torch

from ..analysis.alignment import merge_pieces
from ..analysis.corpus_alignment import Forced
from ..hub import RNNSearchHubInterface

DIGITS = 6  # the weights' decimals, as fairseq-generate --print-alignment soft prints them


@dataclass(frozen=True)
class TranslateItem:
    sentence: str
    tokens: torch.Tensor  # source token ids, </s> included
    alignment: bool
    pieces: bool


@dataclass(frozen=True)
class ScoreItem:
    source: str
    target: str
    source_tokens: torch.Tensor
    target_tokens: torch.Tensor
    alignment: bool
    pieces: bool


def run_batch(model: RNNSearchHubInterface, key: Hashable, items: list[Any]) -> list[dict[str, Any]]:
    """The results of one batch of items that share a batching key, in order."""
    if key[0] == "translate":
        _, beam, nbest = key
        return translate(model, items, beam, nbest)
    return score(model, items)


def translate(model: RNNSearchHubInterface, items: list[TranslateItem], beam: int, nbest: int) -> list[dict[str, Any]]:
    sources = [item.tokens for item in items]
    hypotheses = [hypos[:nbest] for hypos in model.generate(sources, beam=beam)]  # the search keeps `beam` of them
    aligned = [
        (index, hypo)
        for index, hypos in enumerate(hypotheses)
        if items[index].alignment and not model.is_empty(items[index].tokens)
        for hypo in hypos
    ]
    weights = iter(forced_alignments(model, [sources[index] for index, _ in aligned], [hypo["tokens"].cpu() for _, hypo in aligned]))
    results = []
    for item, hypos in zip(items, hypotheses):
        results.append(
            {
                "source": item.sentence,
                "source_tokens": model.src_dict.string(item.tokens).split(),
                "hypotheses": [hypothesis(model, item, hypo, aligned_weights(model, item, weights)) for hypo in hypos],
            }
        )
    return results


Weights = tuple[torch.Tensor, Optional[torch.Tensor]]  # the model's alignment, and the attention beside a head's


def forced_alignments(model: RNNSearchHubInterface, sources: list[torch.Tensor], targets: list[torch.Tensor]) -> list[Weights]:
    """Each pair's alignment (T x S), and, where it is the head's, the attention's beside it, from one forced pass."""
    return [pair_weights(model, pair) for pair in model.forced(sources, targets, scores=False)]


def pair_weights(model: RNNSearchHubInterface, pair: Forced) -> Weights:
    """A forced pass's alignment, with the attention beside it where the alignment is the head's (``attention_beside``)."""
    return pair.alignment, pair.attention if attention_beside(model) else None


def attention_beside(model: RNNSearchHubInterface) -> bool:
    """Whether the model aligns by a head and also attends (RNNsearch with a head): the page then
    draws the attention's heatmap with the head's links on it."""
    network = model.models[0]
    return network.aligned_by == "head" and network.attentive


def aligned_weights(model: RNNSearchHubInterface, item: TranslateItem, weights: Iterator[Weights]) -> Optional[Weights]:
    """The next hypothesis's soft alignments when ``item`` asks for them; an empty source's empty
    translation has none (0 x 0: the model never ran, ``fairseq_fixes/empty_source.py``)."""
    if not item.alignment:
        return None
    if model.is_empty(item.tokens):
        return torch.zeros(0, 0), torch.zeros(0, 0) if attention_beside(model) else None
    return next(weights)


def hypothesis(model: RNNSearchHubInterface, item: TranslateItem, hypo: dict[str, Any], weights: Optional[Weights]) -> dict[str, Any]:
    tokens = hypo["tokens"].cpu()
    return {
        "translation": model.decode(tokens),
        "score": float(hypo["score"]),
        "tokens": model.tgt_dict.string(tokens).split(),
        **alignment(model, item, item.tokens, tokens, weights),
    }


def score(model: RNNSearchHubInterface, items: list[ScoreItem]) -> list[dict[str, Any]]:
    sources, targets = [item.source_tokens for item in items], [item.target_tokens for item in items]
    return [
        {
            "source": item.source,
            "target": item.target,
            "score": float(pair.scores.sum()),
            "positional_scores": [round(float(value), DIGITS) for value in pair.scores],
            "tokens": model.tgt_dict.string(item.target_tokens).split(),
            **alignment(model, item, item.source_tokens, item.target_tokens, pair_weights(model, pair) if item.alignment else None),
        }
        for item, pair in zip(items, model.forced(sources, targets))
    ]


def alignment(
    model: RNNSearchHubInterface, item: Any, source: torch.Tensor, target: torch.Tensor, weights: Optional[Weights]
) -> dict[str, Any]:
    """{"alignment": {"source", "target", "weights" (target x source), "by"}} ("by": what the
    weights are, ``aligned_by``), with "attention" (alpha, target x source) beside a head's
    weights; {} when not asked."""
    if weights is None:
        return {}
    aligned, attention = weights
    matrices = {"weights": aligned.numpy(), **({"attention": attention.numpy()} if attention is not None else {})}
    source_labels, target_labels = [], []
    if aligned.numel():  # (an empty source's empty translation aligns nothing: 0 x 0)
        source_labels, target_labels = model.pieces(model.src_dict, source), model.pieces(model.tgt_dict, target)
    if aligned.numel() and not item.pieces:
        merged = {name: merge_pieces(matrix, source_labels, target_labels, model.scheme) for name, matrix in matrices.items()}
        matrices = {name: matrix for name, (matrix, _, _) in merged.items()}
        _, source_labels, target_labels = merged["weights"]
    rounded = {name: [[round(float(value), DIGITS) for value in row] for row in matrix] for name, matrix in matrices.items()}
    return {"alignment": {"source": source_labels, "target": target_labels, **rounded, "by": model.models[0].aligned_by}}


def describe(model: RNNSearchHubInterface, checkpoint: Path, data: Path, paths: bool = False) -> dict[str, Any]:
    """/health: the model, its architecture, whether it attends, its dictionaries and subwords. The
    checkpoint and dictionaries are named by file name, which any client may read; their absolute
    paths, which tell a client about the server's file system, only when ``paths`` asks for them
    (rnnsearch-serve --health-paths)."""
    task = model.cfg.task
    shown = str if paths else (lambda path: path.name)
    return {
        "status": "ok",
        "checkpoint": shown(checkpoint),
        "architecture": getattr(model.cfg.model, "arch", None) or getattr(model.cfg.model, "_name", None),
        "attention": bool(model.models[0].aligns),
        "aligned_by": model.models[0].aligned_by if model.models[0].aligns else None,
        "source": {"language": task.source_lang, "dictionary": shown(data / f"dict.{task.source_lang}.txt"), "size": len(model.src_dict)},
        "target": {"language": task.target_lang, "dictionary": shown(data / f"dict.{task.target_lang}.txt"), "size": len(model.tgt_dict)},
        "subwords": model.scheme,
        "device": str(model.device),
    }
