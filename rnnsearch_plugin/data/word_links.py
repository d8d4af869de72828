"""Word links of the prepared training pairs by a statistical aligner, on any scheme's pieces:
the links an alignment head (or the attention, ``--alignment-lambda``) is trained toward.

``scripts/prepare_data.py ... --eflomal`` aligns OUT/{scheme}/train.{src,tgt} (the pairs the model
trains on, after cleaning and --max-len) with eflomal (Östling & Tiedemann 2016; its own defaults,
``ALIGNER``), each direction, symmetrises the two by grow-diag-final-and (Koehn et al. 2005,
``analysis/links.py``) and projects the word links onto the pieces the model reads. The words are
the pieces' own, joined as ``analysis/alignment.py`` joins them for output (a sentencepiece piece
starting with "▁" or a piece after one without "@@" begins a word; the word scheme's pieces are its
words), so a link of two words becomes a link of each piece of the one with each piece of the
other, and the model's links, merged back into words, are the same words again (``to_words`` of
``to_pieces`` is the identity). eflomal is sampled without a seed: a rerun links slightly differently.
"""

import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..analysis.alignment import word_groups, word_labels
from ..analysis.links import SYMMETRISATIONS, Link, parse_pharaoh_line, pharaoh_line
from .textio import DataError

ALIGNER = {"model": 3, "n_samplers": 3, "null_prior": 0.2, "rel_iterations": 1.0}  # eflomal's own defaults
SYMMETRISATION = "grow-diag-final-and"
DIRECTIONS = {"forward": "links_filename_fwd", "reverse": "links_filename_rev"}  # eflomal's option for each


def run_eflomal(sources: list[str], targets: list[str], direction: str, path: Path) -> None:
    """eflomal's links of every pair of (tokenised) lines in ``direction`` ("forward": each target word
    to at most one source word; "reverse": the other way), written to PATH in source-target order."""
    try:
        import eflomal
    except ImportError:
        raise DataError(
            "--eflomal needs eflomal, which is not installed: pip install '.[results]' (scripts/setup.sh installs it)"
        ) from None
    eflomal.Aligner(**ALIGNER).align(sources, targets, **{DIRECTIONS[direction]: str(path)})


def to_pieces(links: Iterable[Link], source_groups: list[int], target_groups: list[int]) -> set[Link]:
    """Word links -> the links of each piece of the source word with each piece of the target word
    (groups: each piece's 0-based word)."""
    pieces: dict[str, dict[int, list[int]]] = {"source": {}, "target": {}}
    for side, groups in (("source", source_groups), ("target", target_groups)):
        for piece, word in enumerate(groups):
            pieces[side].setdefault(word, []).append(piece)
    return {(i, j) for s, t in links for i in pieces["source"][s] for j in pieces["target"][t]}


def to_words(links: Iterable[Link], source_groups: list[int], target_groups: list[int]) -> set[Link]:
    """Piece links -> the links of their words."""
    return {(source_groups[i], target_groups[j]) for i, j in links}


def word_lines(source_pieces: list[str], target_pieces: list[str], scheme: str) -> tuple[list[str], list[str]]:
    """The words of every pair of piece lines (what eflomal aligns), each line's words joined by spaces."""
    return [" ".join(words(line, scheme)) for line in source_pieces], [" ".join(words(line, scheme)) for line in target_pieces]


def words(line: str, scheme: str) -> list[str]:
    pieces = line.split()
    return word_labels(pieces, word_groups(pieces, scheme), scheme)


def aligned_pieces(source_pieces: list[str], target_pieces: list[str], scheme: str) -> Iterator[str]:
    """Pharaoh lines of piece links, one per pair of piece lines: eflomal on their words, both
    directions, grow-diag-final-and, projected onto the pieces."""
    sources, targets = word_lines(source_pieces, target_pieces, scheme)
    with tempfile.TemporaryDirectory() as folder:
        files = {direction: Path(folder) / direction for direction in DIRECTIONS}
        for direction, path in files.items():
            run_eflomal(sources, targets, direction, path)
        lines = {direction: path.read_text(encoding="utf-8").splitlines() for direction, path in files.items()}
    symmetrise = SYMMETRISATIONS[SYMMETRISATION]
    for number, (source, target, source_line, target_line) in enumerate(zip(sources, targets, source_pieces, target_pieces), 1):
        lengths = len(source.split()), len(target.split())
        forward, reverse = (
            {link for link, _ in parse_pharaoh_line(lines[d][number - 1], f"eflomal {d}, pair {number}", *lengths)} for d in DIRECTIONS
        )
        source_groups, target_groups = word_groups(source_line.split(), scheme), word_groups(target_line.split(), scheme)
        yield pharaoh_line(to_pieces(symmetrise(forward, reverse, *lengths), source_groups, target_groups))
