"""Alignment Error Rate (Och & Ney 2003) of the soft alignments, read as word links, against a
hand-made gold standard of any language pair, in either of two formats:

- NAACL (the HLT-NAACL 2003 shared task's, as the English-French Hansards data in
  shared/data/alignment-gold): one link a line, "sentence first_position second_position S|P",
  1-based, the first language's words (English, ``dev.e``) before the second's (French, ``dev.f``);
- Pharaoh (what fast_align and eflomal write and most gold sets now use): one line per sentence
  pair, "i-j" a sure link and "i?j" (or "ipj") a possible one, i a word of the source sentence and
  j of the target, 0-based unless the file counts from 1, beside the tokenised source and target
  sentences one a line.

Links are held as (source_position, target_position), 1-based (``analysis/links.py``, which
extracts them from attention and reads and writes the Pharaoh format, counts from 0;
``from_zero_based`` converts); ``transposed`` turns a gold standard of the pair (A, B) into one
of (B, A), which scores a model of the other direction.
With A the predicted links, S the sure and P the possible gold links (S included in P):

    precision = |A ∩ P| / |A|      recall = |A ∩ S| / |S|      AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

each count summed over all sentences before dividing (corpus level, as in the shared task).
"""

from pathlib import Path

import numpy as np

from ..data.textio import read_lines
from . import links as word_links

Link = tuple[int, int]  # (source_position, target_position), 1-based
Gold = dict[int, tuple[set[Link], set[Link]]]  # {sentence, 1-based: (sure, possible)}, sure within possible
NAACL_LINE = "'sentence first_position second_position S|P'"


def read_naacl(path: Path) -> Gold:
    """{sentence: (sure, possible)} from a NAACL ``*.wa`` file, one link a line
    "sentence first_position second_position S|P"; the sure links are added to possible."""
    gold: Gold = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        sentence, link, sure = parse_naacl_line(line, f"{path}:{number}")
        add_link(gold.setdefault(sentence, (set(), set())), link, sure)
    return gold


def parse_naacl_line(line: str, where: str) -> tuple[int, Link, bool]:
    """'1 3 4 P' -> (1, (3, 4), False); ``where`` (file:line) names a malformed line."""
    fields = line.split()
    if len(fields) != 4 or fields[3] not in ("S", "P") or not all(field.isdigit() for field in fields[:3]):
        raise ValueError(f"{where}: expected {NAACL_LINE}, got {line.strip()!r}")
    sentence, first, second = (int(field) for field in fields[:3])
    if min(sentence, first, second) < 1:
        raise ValueError(f"{where}: positions are 1-based, got {line.strip()!r}")
    return sentence, (first, second), fields[3] == "S"


def add_link(links: tuple[set[Link], set[Link]], link: Link, sure: bool) -> None:
    sure_links, possible_links = links
    possible_links.add(link)
    if sure:
        sure_links.add(link)


def read_pharaoh(path: Path, sources: list[str], targets: list[str], one_based: bool = False) -> Gold:
    """{sentence: (sure, possible)} from a Pharaoh file, its line n the links of the n-th
    ``sources`` and ``targets`` sentence (tokenised, words split on spaces); an empty line is a
    sentence pair without links. Positions count from 0 (from 1 with ``one_based``)."""
    lines = read_lines(path)
    if not len(lines) == len(sources) == len(targets):
        raise ValueError(
            f"{path} has {len(lines)} lines but the gold source has {len(sources)} and the gold target "
            f"{len(targets)}: give one line per sentence pair in each"
        )
    gold: Gold = {}
    for number, (line, source, target) in enumerate(zip(lines, sources, targets), start=1):
        links = gold[number] = (set(), set())
        for (source_word, target_word), sure in word_links.parse_pharaoh_line(
            line, f"{path}:{number}", len(source.split()), len(target.split()), one_based
        ):
            add_link(links, (source_word + 1, target_word + 1), sure)
    return gold


def check_positions(gold: Gold, sources: list[str], targets: list[str], where: str) -> None:
    """Every link of ``gold`` (1-based) within its sentence pair; ``where`` names the gold file."""
    for sentence, (_, possible) in sorted(gold.items()):
        for link in sorted(possible):
            word_links.check_position(
                link,
                len(sources[sentence - 1].split()),
                len(targets[sentence - 1].split()),
                f"{where}: sentence {sentence}, link {link[0]} {link[1]}",
                one_based=True,
            )


def from_zero_based(links: set[Link]) -> set[Link]:
    """``analysis/links.py``'s 0-based (source, target) links counted from 1, as here."""
    return {(source + 1, target + 1) for source, target in links}


def transposed(gold: Gold) -> Gold:
    """The gold standard of the reverse pair: every link (i, j) becomes (j, i)."""
    return {sentence: ({(j, i) for i, j in sure}, {(j, i) for i, j in possible}) for sentence, (sure, possible) in gold.items()}


def argmax_links(weights: np.ndarray) -> set[Link]:
    """Each target word linked to the source word it attends to most (``links.argmax_links``,
    1-based); weights: T x S."""
    return from_zero_based(word_links.argmax_links(weights))


def threshold_links(weights: np.ndarray, threshold: float) -> set[Link]:
    """Every link with weight >= ``threshold``, plus each target word's argmax link, so that no
    target word is left unaligned (the gold standard has no NULL links; a threshold above the
    largest weight of a row would otherwise leave that word out); 1-based, weights: T x S."""
    return from_zero_based(word_links.threshold_links(weights, threshold) | word_links.argmax_links(weights))


def diagonal_links(source_length: int, target_length: int) -> set[Link]:
    """The diagonal baseline: target word j (1-based) linked to source word
    round((j - 0.5) * n / m + 0.5), n source and m target words, rounding half up: the source
    word whose span [i - 1, i) holds the centre of the target word on a common [0, n) scale.
    Computed in integers as floor((2j - 1) n / 2m) + 1; since 0 < (2j - 1) n / 2m < n this
    already lies in [1, n], the clipping. Square sentences give the identity."""
    if source_length < 1 or target_length < 0:
        raise ValueError(f"need source words and a target length >= 0, got {source_length} and {target_length}")
    return {((2 * j - 1) * source_length // (2 * target_length) + 1, j) for j in range(1, target_length + 1)}


def alignment_error_rate(predicted: dict[int, set[Link]], gold: Gold) -> dict[str, float]:
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
