"""Alignment Error Rate (Och & Ney 2003) of the soft alignments, read as word links, against a
hand-made gold standard (the HLT-NAACL 2003 English-French Hansards data in
shared/data/alignment-gold: English source, French target).

With A the predicted links, S the sure and P the possible gold links (S included in P):

    precision = |A ∩ P| / |A|      recall = |A ∩ S| / |S|      AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

each count summed over all sentences before dividing (corpus level, as in the shared task).
Links are (english_position, french_position), 1-based, as in the gold files.
"""
from pathlib import Path

import numpy as np


Link = tuple[int, int]  # (english_position, french_position), 1-based
GOLD_LINE = "'sentence english_position french_position S|P'"


def read_gold(path: Path) -> dict[int, tuple[set[Link], set[Link]]]:
    """{sentence: (sure, possible)} from a ``*.wa`` file, one link a line
    "sentence english_position french_position S|P"; the sure links are added to possible."""
    gold: dict[int, tuple[set[Link], set[Link]]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        sentence, link, sure = parse_gold_line(line, f"{path}:{number}")
        sure_links, possible_links = gold.setdefault(sentence, (set(), set()))
        possible_links.add(link)
        if sure:
            sure_links.add(link)
    return gold


def parse_gold_line(line: str, where: str) -> tuple[int, Link, bool]:
    """'1 3 4 P' -> (1, (3, 4), False); ``where`` (file:line) names a malformed line."""
    fields = line.split()
    if len(fields) != 4 or fields[3] not in ("S", "P") or not all(field.isdigit() for field in fields[:3]):
        raise ValueError(f"{where}: expected {GOLD_LINE}, got {line.strip()!r}")
    sentence, english, french = (int(field) for field in fields[:3])
    if min(sentence, english, french) < 1:
        raise ValueError(f"{where}: positions are 1-based, got {line.strip()!r}")
    return sentence, (english, french), fields[3] == "S"


def argmax_links(weights: np.ndarray) -> set[Link]:
    """Each French (target) word linked to the English (source) word it attends to most;
    weights: F x E."""
    weights = np.asarray(weights, dtype=float)  # F x E
    if weights.ndim != 2 or (weights.shape[0] and not weights.shape[1]):
        raise ValueError(f"weights must be a French x English matrix with English words, got shape {weights.shape}")
    return {(int(english) + 1, french + 1) for french, english in enumerate(weights.argmax(axis=1))}


def threshold_links(weights: np.ndarray, threshold: float) -> set[Link]:
    """Every link with weight >= ``threshold``, plus each French word's argmax link, so that no
    French word is left unaligned (the gold standard has no NULL links; a threshold above the
    largest weight of a row would otherwise leave that word out); weights: F x E."""
    french, english = np.nonzero(np.asarray(weights, dtype=float) >= threshold)  # F x E
    return {(int(e) + 1, int(f) + 1) for f, e in zip(french, english)} | argmax_links(weights)


def diagonal_links(english_length: int, french_length: int) -> set[Link]:
    """The diagonal baseline: French word j (1-based) linked to English word
    round((j - 0.5) * n / m + 0.5), n English and m French words, rounding half up: the English
    word whose span [i - 1, i) holds the centre of the French word on a common [0, n) scale.
    Computed in integers as floor((2j - 1) n / 2m) + 1; since 0 < (2j - 1) n / 2m < n this
    already lies in [1, n], the clipping. Square sentences give the identity."""
    if english_length < 1 or french_length < 0:
        raise ValueError(f"need English words and a French length >= 0, got {english_length} and {french_length}")
    return {((2 * j - 1) * english_length // (2 * french_length) + 1, j) for j in range(1, french_length + 1)}


def alignment_error_rate(predicted: dict[int, set[Link]], gold: dict[int, tuple[set[Link], set[Link]]]) -> dict[str, float]:
    """Precision, recall and AER (Och & Ney 2003) summed over all sentences, with the number
    of sentences and of predicted links. Both must hold the same sentences."""
    missing, extra = sorted(gold.keys() - predicted.keys()), sorted(predicted.keys() - gold.keys())
    if missing or extra:
        raise ValueError(f"predicted and gold sentences differ: missing {missing[:5]}, not in gold {extra[:5]}")
    links = sum(len(predicted[sentence]) for sentence in gold)  # |A|
    sure = sum(len(gold[sentence][0]) for sentence in gold)  # |S|
    hit_sure = sum(len(predicted[sentence] & gold[sentence][0]) for sentence in gold)  # |A ∩ S|
    hit_possible = sum(len(predicted[sentence] & gold[sentence][1]) for sentence in gold)  # |A ∩ P|
    return {
        "precision": ratio(hit_possible, links),
        "recall": ratio(hit_sure, sure),
        "aer": 1 - ratio(hit_sure + hit_possible, links + sure),
        "sentences": len(gold),
        "links": links,
    }


def ratio(numerator: int, denominator: int) -> float:
    """numerator / denominator, NaN when there is nothing to divide by (no links at all)."""
    return numerator / denominator if denominator else float("nan")
