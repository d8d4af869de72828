"""BLEU as the paper reports it (Table 1, Figure 2) next to sacreBLEU.

- ``corpus_bleu``: sacreBLEU's corpus score and signature, refusing unequal line counts.
- ``detokenised``: sacreBLEU on plain text against the raw references, with its signature.
- ``tokenised``: the paper-style figure (Moses' multi-bleu.perl convention): both sides Moses-
  tokenised (sacremoses), BLEU on those tokens with no further tokenisation and no smoothing,
  optionally lowercased.
- ``by_length``: Figure 2, BLEU of the sentences whose source has a length in each bucket.
- ``gap_interval``: a bootstrap interval of the BLEU difference between two such buckets.
"""
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics.bleu import BLEU, BLEUScore

from ..data.languages import length, length_unit
from ..data.schemes import moses_tokenize
from .generate_output import ScoringError


@dataclass
class Bucket:
    """Source lengths in [low, high) (``high`` None: no upper bound) and their sentences."""

    low: int
    high: int | None
    indices: list[int]

    @property
    def label(self) -> str:
        return f"{self.low}-{self.high}" if self.high is not None else f"{self.low}+"


def corpus_bleu(hypotheses: list[str], references: list[str]) -> tuple[BLEUScore, str]:
    """sacreBLEU's corpus score and signature; refuses unequal line counts."""
    if len(hypotheses) != len(references):
        raise ScoringError(f"{len(hypotheses)} hypotheses for {len(references)} reference lines")
    metric = BLEU()
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def detokenised(hypotheses: list[str], references: list[str]) -> tuple[float, str]:
    """sacreBLEU score and signature."""
    score, signature = corpus_bleu(hypotheses, references)
    return score.score, signature


def tokenised(hypotheses: list[str], references: list[str], lang: str, lowercase: bool = False) -> float:
    """BLEU on Moses tokens, as multi-bleu.perl computes it (no smoothing)."""
    metric = BLEU(tokenize="none", lowercase=lowercase, smooth_method="none", force=True)
    return metric.corpus_score(moses_tokenize(hypotheses, lang), [moses_tokenize(references, lang)]).score


def source_lengths(sources: list[str], lang: str = "en") -> list[int]:
    """Source length in words = Moses tokens of the raw source (the paper's tokenisation), or in
    characters for a language written without spaces (``data.languages.length_unit``)."""
    if length_unit(lang) == "characters":
        return [length(line, lang) for line in sources]
    return [len(line.split()) for line in moses_tokenize(sources, lang)]


def buckets(lengths: list[int], edges: list[int]) -> list[Bucket]:
    """[0, e1), [e1, e2), ..., [e_last, inf): every sentence in exactly one bucket."""
    bounds = [0, *edges]
    result = [Bucket(low, high, []) for low, high in zip(bounds, [*edges, None])]
    for index, length in enumerate(lengths):
        next(b for b in result if length >= b.low and (b.high is None or length < b.high)).indices.append(index)
    return result


def bucket_cell(row: dict) -> str:
    """A ``by_length`` row as a table cell: 'BLEU (sentences)', or '-' for an empty bucket."""
    return f"{row['bleu']:.2f} ({row['sentences']})" if row["bleu"] is not None else "-"


def by_length(hypotheses: list[str], references: list[str], lengths: list[int], edges: list[int]) -> list[dict]:
    """Figure 2: sacreBLEU of each source-length bucket (None for an empty bucket)."""
    rows = []
    for bucket in buckets(lengths, edges):
        chosen = bucket.indices
        score = detokenised([hypotheses[i] for i in chosen], [references[i] for i in chosen])[0] if chosen else None
        rows.append({"bucket": bucket.label, "low": bucket.low, "sentences": len(chosen), "bleu": score})
    return rows


def gap_interval(hypotheses: list[str], references: list[str], short: list[int], long: list[int],
                 samples: int = 1000, seed: int = 12345) -> tuple[float, float]:
    """95% bootstrap interval of sacreBLEU(LONG) - sacreBLEU(SHORT), LONG and SHORT being disjoint
    sentence indices (Figure 2's buckets), each resampled with replacement on its own (Koehn 2004).
    It sums sacreBLEU's per-sentence statistics, as sacreBLEU's own ``--confidence`` does
    (``sacrebleu.significance._bootstrap_resample``), so each resample's BLEU is sacreBLEU's."""
    metric = BLEU()
    stats = np.array(metric._extract_corpus_statistics(hypotheses, [references]), dtype=np.int64)  # N x 4n+2
    rng = np.random.default_rng(seed)

    def resampled(indices: list[int]) -> np.ndarray:
        picks = rng.choice(np.asarray(indices), size=(samples, len(indices)))  # samples x len(indices)
        return np.array([metric._compute_score_from_stats(stats[row].sum(0).tolist()).score for row in picks])

    low, high = np.percentile(resampled(long) - resampled(short), [2.5, 97.5])
    return float(low), float(high)
