"""Word alignments of a whole parallel corpus from the soft alignments alpha_ij of Eq. 6 (the
paper's Section 5.1 reads them as alignments; Figure 3 shows them), streamed a chunk of pairs at a
time so that memory does not grow with the corpus.

Each pair is force-decoded: the target given, alpha_ij read at every target position. The words
are the input files' own (split on whitespace), each encoded on its own (tokeniser, subword model)
so that every piece belongs to one word; piece weights become word weights as ``alignment.py``
merges them (source pieces summed, target pieces averaged, </s> left out). Links come from the
word weights (``links.py``): each target word's most-attended source word (argmax) or every pair
at or above a weight (threshold); with a model of the other direction its links, transposed into
this model's (source, target) orientation, are symmetrised with these (intersect, union,
grow-diag-final-and).

A pair longer than a model accepts (--max-source-positions / --max-target-positions, counted in
pieces with </s>) is not truncated: it gets no links and is reported by its line number.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, NamedTuple, Optional, Protocol

import numpy as np
import torch

from .alignment import merge_groups
from .links import SYMMETRISATIONS, Link, argmax_links, threshold_links


class Forced(NamedTuple):
    """One pair's teacher-forced pass (``RNNSearchHubInterface.forced``)."""

    scores: Optional[torch.Tensor]  # log p of each target token (T), None when not asked
    alignment: Optional[torch.Tensor]  # T x S: the alignment head's a_ij, else the attention's alpha
    attention: Optional[torch.Tensor]  # T x S: alpha (Eq. 6), None for RNNencdec


class ForcedAligner(Protocol):
    """What aligning needs of a model: ``hub.RNNSearchHubInterface`` (``load``) is one."""

    models: Any  # models[0].max_positions(): (source, target) lengths in pieces, </s> included

    def encode_words(self, words: list[str], target: bool = False) -> tuple[torch.Tensor, list[int]]: ...

    def forced(self, sources: list[torch.Tensor], targets: list[torch.Tensor], scores: bool = True) -> list[Forced]: ...


EXTRACTIONS = ("argmax", "threshold")
CHUNK = 1000  # pairs force-decoded and written at a time
WordPair = tuple[list[str], list[str]]  # the words of a source line and of its target line


@dataclass
class PairAlignment:
    """The alignment of one pair: ``weights`` T' x S' (target words x source words) of the model,
    ``reverse_weights`` S' x T' of the reverse model (its target words are this pair's source
    words), ``links`` 0-based (source word, target word); ``skipped`` says why a pair has none."""

    line: int  # 1-based, in the input files
    source: list[str]
    target: list[str]
    weights: Optional[np.ndarray]
    reverse_weights: Optional[np.ndarray]
    links: set[Link]
    skipped: Optional[str] = None


@dataclass(frozen=True)
class LinkRule:
    """How links are made: ``extraction`` per direction (argmax, threshold at ``threshold``) and,
    with a reverse model, the ``symmetrisation`` of the two directions."""

    extraction: str = "argmax"
    threshold: float = 0.3
    symmetrisation: Optional[str] = None

    def __post_init__(self) -> None:
        if self.extraction not in EXTRACTIONS:
            raise ValueError(f"unknown link extraction {self.extraction!r}: use one of {', '.join(EXTRACTIONS)}")
        if self.symmetrisation is not None and self.symmetrisation not in SYMMETRISATIONS:
            raise ValueError(f"unknown symmetrisation {self.symmetrisation!r}: use one of {', '.join(SYMMETRISATIONS)}")

    def extract(self, weights: np.ndarray) -> set[Link]:
        """(source, target) links of word weights T' x S'."""
        return argmax_links(weights) if self.extraction == "argmax" else threshold_links(weights, self.threshold)

    def links(self, weights: np.ndarray, reverse_weights: Optional[np.ndarray]) -> set[Link]:
        forward = self.extract(weights)
        if reverse_weights is None:
            return forward
        backward = {(target, source) for source, target in self.extract(reverse_weights)}  # into (source, target)
        return SYMMETRISATIONS[self.symmetrisation](forward, backward, weights.shape[1], weights.shape[0])


def too_long(model: ForcedAligner, source_pieces: int, target_pieces: int) -> Optional[str]:
    """Why a pair of this many pieces (</s> included) is longer than ``model`` accepts, or None."""
    source_limit, target_limit = model.models[0].max_positions()
    if source_pieces > source_limit:
        return f"its source has {source_pieces} pieces, over the model's --max-source-positions {source_limit}"
    if target_pieces > target_limit:
        return f"its target has {target_pieces} pieces, over the model's --max-target-positions {target_limit}"
    return None


def word_weights(model: ForcedAligner, pairs: list[WordPair]) -> list[np.ndarray | str]:
    """T' x S' word weights of each (source words, target words) pair, or why it was skipped.
    Pairs are force-decoded in order of length, so that a batch holds little padding."""
    encoded = [(model.encode_words(source, target=False), model.encode_words(target, target=True)) for source, target in pairs]
    results: list[np.ndarray | str] = [too_long(model, len(s), len(t)) or "" for (s, _), (t, _) in encoded]
    kept = sorted((index for index, reason in enumerate(results) if not reason), key=lambda index: len(encoded[index][0][0]))
    forced = model.forced([encoded[index][0][0] for index in kept], [encoded[index][1][0] for index in kept], scores=False) if kept else []
    for index, (_, weights, _) in zip(kept, forced):
        (_, source_groups), (_, target_groups) = encoded[index]
        source, target = pairs[index]
        results[index] = merge_groups(
            weights.numpy()[: len(target_groups), : len(source_groups)],  # </s> left out
            target_groups,
            source_groups,
            len(target),
            len(source),
        )
    return results


def align_chunk(
    model: ForcedAligner,
    reverse: Optional[ForcedAligner],
    rule: LinkRule,
    first_line: int,
    pairs: list[WordPair],
) -> list[PairAlignment]:
    forward = word_weights(model, pairs)
    backward = word_weights(reverse, [(target, source) for source, target in pairs]) if reverse else [None] * len(pairs)
    aligned = []
    for line, (source, target), weights, reverse_weights in zip(range(first_line, first_line + len(pairs)), pairs, forward, backward):
        skipped = next((reason for reason in (weights, reverse_weights) if isinstance(reason, str)), None)
        if skipped is not None:
            aligned.append(PairAlignment(line, source, target, None, None, set(), skipped))
        else:
            aligned.append(PairAlignment(line, source, target, weights, reverse_weights, rule.links(weights, reverse_weights)))
    return aligned


def align_corpus(
    model: ForcedAligner,
    sources: Iterable[str],
    targets: Iterable[str],
    reverse: Optional[ForcedAligner] = None,
    rule: LinkRule = LinkRule(),
    first_line: int = 1,
    chunk: int = CHUNK,
) -> Iterator[PairAlignment]:
    """The alignment of every (source, target) line pair, in order, ``chunk`` pairs force-decoded
    at a time; ``first_line`` numbers the first pair (a resumed run). ``reverse``: a model of the
    other direction, whose links ``rule.symmetrisation`` combines with this model's. Where reading
    ``sources`` or ``targets`` fails, every pair read before is yielded, then the error raised."""
    if (reverse is None) != (rule.symmetrisation is None):
        raise ValueError("a symmetrisation needs a model of the other direction, and a reverse model a symmetrisation")
    lines = zip(sources, targets)
    while True:
        pairs, failure = read_pairs(lines, chunk)
        yield from align_chunk(model, reverse, rule, first_line, pairs)
        if failure is not None:
            raise failure
        if len(pairs) < chunk:
            return
        first_line += len(pairs)


def read_pairs(lines: Iterator[tuple[str, str]], count: int) -> tuple[list[WordPair], Optional[Exception]]:
    """Up to ``count`` (source, target) lines of ``lines`` split into words, and the error that
    stopped the reading, if one did: the pairs read before it are aligned all the same."""
    pairs: list[WordPair] = []
    try:
        for source, target in islice(lines, count):
            pairs.append((source.split(), target.split()))
    except Exception as error:  # the inputs' own failure (a file that cannot be read, sides of different lengths)
        return pairs, error
    return pairs, None
