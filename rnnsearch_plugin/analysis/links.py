"""Word links from soft alignments, their symmetrisation, and the Pharaoh format word aligners write.

A link here is (source_word, target_word), both counted from 0, as fast_align and eflomal write
them; ``analysis/aer.py`` counts from 1 (as the NAACL gold standard does) and converts at its
boundary (``aer.from_zero_based``).

Links from one model's merged word-level attention (``weights``: T_y x T_x, target rows, source
columns, each row a distribution over the source words):

- ``argmax_links``: each target word linked to the source word it attends to most;
- ``threshold_links``: every pair whose weight is at least a threshold.

Links from the two models of a language pair, both given in the forward model's orientation
(source, target) (the caller transposes the reverse model's links), combined as statistical
aligners combine their two directions (Och & Ney 2003; Koehn, Axelrod et al. 2005, "Edinburgh
System Description for the 2005 IWSLT Speech Translation Evaluation"; Moses' train-model.perl
``--alignment``):

- ``intersect``: the links both directions found (high precision);
- ``union``: the links either found (high recall);
- ``grow_diag_final_and``: the intersection, grown into the union through neighbouring links,
  then the remaining links of each direction that align two words nothing aligns yet.

Pharaoh format: one line per sentence pair, links "i-j" separated by spaces, an empty line a pair
without links (``pharaoh_line``, ``read_pharaoh_links``); a gold standard adds possible links
"i?j" (``aer.read_pharaoh``).
"""

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..data.textio import read_lines

Link = tuple[int, int]  # (source_word, target_word), 0-based
PHARAOH_LINK = re.compile(r"(\d+)([-?p])(\d+)")
PHARAOH_LINKS = "i-j (sure) or i?j / ipj (possible), i the source and j the target word position"
# Moses' "neighboring": the four words beside a link, then the four diagonal ones, as (source, target) steps
NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def argmax_links(weights: np.ndarray) -> set[Link]:
    """Each target word linked to the source word it attends to most (the first of equal
    weights); weights: T_y x T_x, target rows and source columns."""
    return {(int(row.argmax()), target) for target, row in enumerate(target_by_source(weights))}


def threshold_links(weights: np.ndarray, threshold: float) -> set[Link]:
    """Every (source, target) pair whose weight is >= ``threshold``; weights: T_y x T_x. A row
    whose weights all lie below it leaves its target word unaligned."""
    target, source = np.nonzero(target_by_source(weights) >= threshold)  # T_y x T_x
    return {(int(s), int(t)) for t, s in zip(target, source)}


def target_by_source(weights: np.ndarray) -> np.ndarray:
    """``weights`` as a float T_y x T_x matrix, refusing any other shape and target words without
    source words to link them to (no target words, T_y = 0, give no links)."""
    weights = np.asarray(weights, dtype=float)  # T_y x T_x
    if weights.ndim != 2 or (weights.shape[0] and not weights.shape[1]):
        raise ValueError(f"weights must be a target x source matrix with source words, got shape {weights.shape}")
    return weights


def intersect(forward: set[Link], reverse: set[Link]) -> set[Link]:
    """The links both directions found; both in the forward model's (source, target) orientation."""
    return forward & reverse


def union(forward: set[Link], reverse: set[Link]) -> set[Link]:
    """The links either direction found; both in the forward model's (source, target) orientation."""
    return forward | reverse


def grow_diag_final_and(forward: set[Link], reverse: set[Link], source_length: int, target_length: int) -> set[Link]:
    """Koehn et al. (2005)'s grow-diag-final-and, written from Moses' description of
    train-model.perl's heuristic. Both directions in the forward model's (source, target)
    orientation, within ``source_length`` x ``target_length`` words.

    1. Start from the intersection.
    2. grow-diag: scanning the links in (source, target) order, add each neighbour (``NEIGHBOURS``:
       beside or diagonal) of a link that lies in the union and has a word not yet aligned;
       repeat the scan until it adds nothing.
    3. final-and: scanning each direction's links in (source, target) order, the forward model's
       first, add a link whose source word and target word are both still unaligned (plain
       grow-diag-final adds one where either is).
    """
    check_directions(forward, reverse, source_length, target_length)
    alignment = Alignment(intersect(forward, reverse))
    grow_diag(alignment, union(forward, reverse), source_length, target_length)
    for direction in (forward, reverse):
        for link in sorted(direction):
            if alignment.both_unaligned(link):
                alignment.add(link)
    return alignment.links


class Alignment:
    """Links being grown, with the source and target words they align."""

    def __init__(self, links: set[Link]):
        self.links = set(links)
        self.sources, self.targets = {source for source, _ in links}, {target for _, target in links}

    def add(self, link: Link) -> None:
        self.links.add(link)
        self.sources.add(link[0])
        self.targets.add(link[1])

    def either_unaligned(self, link: Link) -> bool:
        return link[0] not in self.sources or link[1] not in self.targets

    def both_unaligned(self, link: Link) -> bool:
        return link[0] not in self.sources and link[1] not in self.targets


def grow_diag(alignment: Alignment, candidates: set[Link], source_length: int, target_length: int) -> None:
    """Moses' GROW-DIAG: scanning every (source, target) pair in order, a pair found
    aligned adds each neighbour in ``candidates`` that has a word not yet aligned (at once, so
    the rest of the scan sees it); the scan repeats until a whole pass adds nothing."""
    grown = True
    while grown:
        grown = False
        for link in ((source, target) for source in range(source_length) for target in range(target_length)):
            if link not in alignment.links:
                continue
            for step in NEIGHBOURS:
                neighbour = (link[0] + step[0], link[1] + step[1])
                if neighbour in candidates and alignment.either_unaligned(neighbour):
                    alignment.add(neighbour)
                    grown = True


def check_directions(forward: set[Link], reverse: set[Link], source_length: int, target_length: int) -> None:
    """Refuse a link outside the sentence pair (a reverse model's links not transposed, say)."""
    for name, links in (("forward", forward), ("reverse", reverse)):
        outside = sorted(link for link in links if not (0 <= link[0] < source_length and 0 <= link[1] < target_length))
        if outside:
            raise ValueError(
                f"the {name} links {outside[:3]} lie outside a pair of {source_length} source and "
                f"{target_length} target words: give (source, target) links, 0-based, the reverse model's "
                "transposed"
            )


Symmetrisation = Callable[[set[Link], set[Link], int, int], set[Link]]


def within_pair(combine: Callable[[set[Link], set[Link]], set[Link]]) -> Symmetrisation:
    """``combine`` called as grow_diag_final_and is, (forward, reverse, source_length,
    target_length), after checking both directions' links lie within the sentence pair."""

    def symmetrisation(forward: set[Link], reverse: set[Link], source_length: int, target_length: int) -> set[Link]:
        check_directions(forward, reverse, source_length, target_length)
        return combine(forward, reverse)

    return symmetrisation


# the symmetrisations by the names Moses' --alignment gives them, each called (forward, reverse, source_length,
# target_length)
SYMMETRISATIONS: dict[str, Symmetrisation] = {
    "intersect": within_pair(intersect),
    "union": within_pair(union),
    "grow-diag-final-and": grow_diag_final_and,
}


def pharaoh_line(links: set[Link]) -> str:
    """'0-0 1-2 ...': the links (0-based) sorted by source word, then target word, so that the
    same links always give the same line; no links give an empty line."""
    return " ".join(f"{source}-{target}" for source, target in sorted(links))


def parse_pharaoh_line(line: str, where: str, source_words: int, target_words: int, one_based: bool = False) -> list[tuple[Link, bool]]:
    """(link, sure) for every field of one Pharaoh line, the link counted from 0 whatever the file
    counts from (from 1 with ``one_based``): "i-j" a sure link, "i?j" or "ipj" a possible one.
    ``where`` (file:line) names a malformed field or one outside the sentence pair."""
    offset = 1 if one_based else 0
    found = []
    for field in line.split():
        match = PHARAOH_LINK.fullmatch(field)
        if match is None:
            raise ValueError(f"{where}: malformed link {field!r}: expected {PHARAOH_LINKS}")
        position = (int(match[1]), int(match[3]))
        check_position(position, source_words, target_words, f"{where}: link {field}", one_based)
        link = (position[0] - offset, position[1] - offset)
        found.append((link, match[2] == "-"))
    return found


def check_position(position: Link, source_words: int, target_words: int, what: str, one_based: bool) -> None:
    """Refuse a link, as a file writes it (counted from 1 with ``one_based``, else from 0), outside
    its sentence pair, naming both lengths and how positions count; ``what`` names the link."""
    offset = 1 if one_based else 0
    if not (offset <= position[0] < source_words + offset and offset <= position[1] < target_words + offset):
        raise ValueError(
            f"{what} is out of range: the source has {source_words} words and the target {target_words} "
            f"(positions are {offset}-based): link words of this sentence pair, the source word first"
        )


def read_pharaoh_links(path: Path, sources: list[str], targets: list[str], one_based: bool = False) -> list[set[Link]]:
    """The links (0-based) of a predicted alignment file, what a word aligner writes: line n the
    links "i-j" of the n-th ``sources`` and ``targets`` sentence (words split on spaces), counted
    from 0 (from 1 with ``one_based``); an empty line a pair without links."""
    lines = read_lines(path)
    if not len(lines) == len(sources) == len(targets):
        raise ValueError(
            f"{path} has {len(lines)} lines but there are {len(sources)} source and {len(targets)} target "
            "sentences: give one line of links per sentence pair, in their order"
        )
    alignments = []
    for number, (line, source, target) in enumerate(zip(lines, sources, targets), start=1):
        where = f"{path}:{number}"
        parsed = parse_pharaoh_line(line, where, len(source.split()), len(target.split()), one_based)
        if not all(sure for _, sure in parsed):
            raise ValueError(f"{where}: possible links (i?j, ipj) belong in a gold standard: an alignment to score gives its links as i-j")
        alignments.append({link for link, _ in parsed})
    return alignments
