"""Soft alignments (the annotation weights alpha_ij of Eq. 6, drawn in Figure 3) as data.

``parse_soft_alignments`` reads what ``fairseq-generate --print-alignment soft`` prints
(fairseq 0.12: ``fairseq_cli/generate.py``, ``utils.extract_soft_alignment``,
``sequence_generator.SequenceGeneratorWithAlignment``):

    A-<id>\\t<row 1> <row 2> ... <row T>        each row "a_1,a_2,...,a_S" ("%.6f" each)

- rows, in order: every token of the hypothesis, its final </s> included (T = the pieces of
  the H- line as printed without --post-process / --remove-bpe, plus one);
- columns, in order: every source token, the source's </s> included, padding removed (S = the
  pieces of the S- line without --post-process, plus one);
- each row is the distribution the decoder attended with when it emitted that token, the one
  beam search recorded (RNNsearch has no ``full_context_alignment``; it equals the teacher-forced
  attention of ``hub.RNNSearchHubInterface.align`` up to the print rounding), so rows sum to 1
  within S * 5e-7.

``merge_pieces`` turns a piece-level matrix into a word-level one, as Figure 3 shows words.
"""

import re
from typing import Iterable

import numpy as np

from ..data.schemes import BPE, SCHEMES, SPM, WORD

ALIGNMENT_LINE = re.compile(r"A-(\d+)\t(.*)")
SPM_WORD_START = "\u2581"  # sentencepiece's "▁": the piece begins a word
BPE_CONTINUES = "@@"  # subword-nmt: the piece continues into the next one
# Sentence boundaries and padding are words of their own. <unk> is not in this set: it stands
# for a piece whose marker was lost, so it is treated as an ordinary piece without a marker.
BOUNDARY_SYMBOLS = frozenset({"<s>", "</s>", "<pad>"})


def parse_soft_alignments(lines: Iterable[str]) -> dict[int, np.ndarray]:
    """{sentence id: alpha, T x S (target tokens x source tokens, </s> row and column
    included)} from fairseq-generate's output; other lines are skipped, and of an nbest list
    the first (best) hypothesis is kept, as ``scoring.read_hypotheses`` does.

    Raises ValueError naming the (1-based) line number of a malformed A- line."""
    alignments: dict[int, np.ndarray] = {}
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.startswith("A-"):
            continue
        match = ALIGNMENT_LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"line {number}: expected 'A-<id><TAB><rows>', got {line[:80]!r}")
        alignments.setdefault(int(match[1]), parse_rows(match[2], number))
    return alignments


def parse_rows(text: str, number: int) -> np.ndarray:
    """'0.9,0.1 0.2,0.8' -> [[0.9, 0.1], [0.2, 0.8]] (T x S); an empty alignment -> 0 x 0."""
    rows = [group.split(",") for group in text.split()]
    if not rows:
        return np.zeros((0, 0))
    if len({len(row) for row in rows}) > 1:
        raise ValueError(f"line {number}: rows of different lengths {sorted({len(row) for row in rows})}")
    try:
        return np.array(rows, dtype=float)  # T x S
    except ValueError:
        raise ValueError(
            f"line {number}: not comma-separated probabilities (was it printed with --print-alignment hard instead of soft?)"
        ) from None


def begins_word(previous: str | None, piece: str, scheme: str) -> bool:
    """Whether ``piece`` starts a new word after ``previous`` (None: it is the first piece)."""
    if previous is None or scheme == WORD or piece in BOUNDARY_SYMBOLS or previous in BOUNDARY_SYMBOLS:
        return True
    if scheme == SPM:
        return piece.startswith(SPM_WORD_START)
    return not previous.endswith(BPE_CONTINUES)


def word_groups(pieces: list[str], scheme: str) -> list[int]:
    """The 0-based word index of each piece. scheme "spm": a piece starting with "▁" begins a
    word; "bpe": a piece ending in "@@" continues into the next (subword-nmt); "word": every
    piece is a word. </s>, <s> and <pad> are always words of their own."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}: use one of {', '.join(SCHEMES)}")
    starts = [begins_word(pieces[index - 1] if index else None, piece, scheme) for index, piece in enumerate(pieces)]
    return [int(group) for group in np.cumsum(starts) - 1]


def word_label(pieces: list[str], scheme: str) -> str:
    """The pieces of one word joined, their markers removed ("▁kit" "ten" -> "kitten")."""
    if scheme == SPM:
        joined = "".join(pieces)
        return joined.removeprefix(SPM_WORD_START) or joined
    if scheme == BPE:
        return "".join(piece.removesuffix(BPE_CONTINUES) for piece in pieces)
    return "".join(pieces)


def word_count(groups: list[int]) -> int:
    return groups[-1] + 1 if groups else 0


def word_labels(pieces: list[str], groups: list[int], scheme: str) -> list[str]:
    """One label per word, from the pieces and their word indices."""
    words: list[list[str]] = [[] for _ in range(word_count(groups))]
    for piece, group in zip(pieces, groups):
        words[group].append(piece)
    return [word_label(word, scheme) for word in words]


def membership(groups: list[int], words: int) -> np.ndarray:
    """P x W, 1 where piece p belongs to word w, else 0."""
    matrix = np.zeros((len(groups), words))
    matrix[np.arange(len(groups)), groups] = 1.0
    return matrix


def merge_groups(
    weights: np.ndarray, target_groups: list[int], source_groups: list[int], target_words: int, source_words: int
) -> np.ndarray:
    """Piece weights (T x S) -> word weights (T' x S'), pieces given by their word index: the
    source columns of one word are summed (a row stays a distribution over the source), the
    target rows of one word averaged (each stays a distribution); a word without pieces gets 0."""
    source, target = membership(source_groups, source_words), membership(target_groups, target_words)  # S x S', T x T'
    summed = target.T @ weights @ source  # T' x S': summed over the pieces of both words
    return summed / np.maximum(target.sum(axis=0), 1.0)[:, None]  # T' x S': averaged over the target pieces


def merge_pieces(
    weights: np.ndarray, source_pieces: list[str], target_pieces: list[str], scheme: str
) -> tuple[np.ndarray, list[str], list[str]]:
    """Word-level soft alignment from a piece-level one (weights: T x S, target x source):
    the source columns of one word are summed (a row stays a distribution over the source),
    the target rows of one word are averaged (each stays a distribution). Returns the
    T' x S' matrix with the source and target word labels."""
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (len(target_pieces), len(source_pieces)):
        raise ValueError(f"weights are {weights.shape} but there are {len(target_pieces)} target and {len(source_pieces)} source pieces")
    source_groups, target_groups = word_groups(source_pieces, scheme), word_groups(target_pieces, scheme)
    merged = merge_groups(weights, target_groups, source_groups, word_count(target_groups), word_count(source_groups))
    return merged, word_labels(source_pieces, source_groups, scheme), word_labels(target_pieces, target_groups, scheme)
