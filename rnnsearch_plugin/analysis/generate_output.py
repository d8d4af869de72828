"""fairseq-generate's (and fairseq-interactive's) output: the lines of each kind per sentence id, and
the hypotheses in source order, refusing a set in which a sentence is missing or extra (so that a
dropped or duplicated sentence can never pass as a lower or higher BLEU)."""

import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Optional

from ..data.textio import read_lines

LINE = re.compile(r"^(?P<kind>[SDH])-(?P<id>\d+)\t(?P<rest>.*)$")
SENTENCE_LINE = re.compile(r"^(?P<kind>[A-Z])-(?P<id>\d+)\t")  # any of fairseq's S-, T-, H-, D-, P-, A-, W-, ... lines


class ScoringError(ValueError):
    """Hypotheses that do not match the references one for one."""


def first_of_kind(lines: Iterable[str], kind: str) -> dict[int, str]:
    """{sentence id: text of its first line of that kind}: ``S`` the source, ``H``/``D`` the
    (first, best) hypothesis with its score left out; nbest lists keep their first."""
    found: dict[int, str] = {}
    for line in lines:
        match = LINE.match(line.rstrip("\n"))
        if match and match["kind"] == kind:
            found.setdefault(int(match["id"]), match["rest"] if kind == "S" else match["rest"].partition("\t")[2])
    return found


def read_hypotheses(path: Path, kind: str = "D") -> dict[int, str]:
    """{sentence id: first (best) hypothesis of that kind} of a fairseq-generate output file, whose
    lines end at a line feed only (``textio.read_lines``); raises if a sentence is printed twice."""
    lines = read_lines(path)
    check_printed_once(lines, kind, path)
    return first_of_kind(lines, kind)


def check_printed_once(lines: list[str], kind: str, path: Path) -> None:
    """Raises unless every sentence is printed once, as fairseq-generate and -interactive print
    it: its lines together, at most one S- line, and one ``kind`` line per hypothesis (as many as
    its lines of the other kind, H- for D-, D- for H-: several with --nbest; one without them)."""
    places: Counter[int] = Counter()
    counts: Counter[tuple[str, int]] = Counter()
    previous = None
    for line in lines:
        match = SENTENCE_LINE.match(line)
        if match:
            sentence = int(match["id"])
            places[sentence] += sentence != previous
            counts[match["kind"], sentence] += 1
            previous = sentence
    for sentence, place_count in places.items():
        reason = repetition(sentence, place_count, counts, kind)
        if reason is not None:
            raise ScoringError(f"{path}: sentence {sentence} is printed more than once ({reason}); regenerate the test set before scoring")


def repetition(sentence: int, places: int, counts: Counter[tuple[str, int]], kind: str) -> Optional[str]:
    """Why the lines of ``sentence`` (``counts``: {(kind, id): lines}) hold it more than once, or None."""
    other = "D" if kind == "H" else "H"
    hypotheses, others = counts[kind, sentence], counts[other, sentence]
    if places > 1:
        return f"its lines come in {places} places"
    if counts["S", sentence] > 1:
        return f"{counts['S', sentence]} S-{sentence} lines"
    if hypotheses > max(others, 1):
        return f"{hypotheses} {kind}-{sentence} lines for {others} {other}-{sentence} line{'' if others == 1 else 's'}"
    return None


def aligned_hypotheses(hypotheses: dict[int, str], reference_count: int) -> list[str]:
    """The hypotheses in source order; raises if any sentence is missing or extra."""
    missing = sorted(set(range(reference_count)) - hypotheses.keys())
    extra = sorted(hypotheses.keys() - set(range(reference_count)))
    if missing or extra:
        raise ScoringError(
            f"{len(hypotheses)} hypotheses for {reference_count} reference lines "
            f"(missing ids {missing[:5]}{'...' if len(missing) > 5 else ''}, "
            f"unexpected ids {extra[:5]}{'...' if len(extra) > 5 else ''}); "
            "regenerate the whole test set before scoring"
        )
    return [hypotheses[index] for index in range(reference_count)]
