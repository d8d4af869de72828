"""fairseq-generate's (and fairseq-interactive's) output: the lines of each kind per sentence id, and
the hypotheses in source order, refusing a set in which a sentence is missing or extra (so that a
dropped or duplicated sentence can never pass as a lower or higher BLEU)."""

import re
from pathlib import Path
from typing import Iterable

LINE = re.compile(r"^(?P<kind>[SDH])-(?P<id>\d+)\t(?P<rest>.*)$")


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
    """{sentence id: first (best) hypothesis of that kind} of a fairseq-generate output file."""
    with open(path, encoding="utf-8") as handle:
        return first_of_kind(handle, kind)


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
