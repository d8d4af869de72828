"""Score a fairseq-generate (or fairseq-interactive) output with sacreBLEU, losing nothing.

    rnnsearch-score GENERATE_OUTPUT --reference RAW_REFERENCE_FILE

Reads the detokenised hypotheses (the ``D-<id>`` lines; ``H-<id>`` with --use-h), puts them
back in source order and scores them against the raw reference text. It refuses to score
unless there is exactly one hypothesis for every reference line, so a dropped or duplicated
sentence can never pass as a lower or higher BLEU.
"""
import argparse
import re
import sys
from pathlib import Path
from typing import Iterable

from sacrebleu.metrics.bleu import BLEU, BLEUScore

from .data.textio import write_atomic

LINE = re.compile(r"^(?P<kind>[SDH])-(?P<id>\d+)\t(?P<rest>.*)$")


class ScoringError(ValueError):
    pass


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


def corpus_bleu(hypotheses: list[str], references: list[str]) -> tuple[BLEUScore, str]:
    """sacreBLEU's corpus score and signature; refuses unequal line counts."""
    if len(hypotheses) != len(references):
        raise ScoringError(f"{len(hypotheses)} hypotheses for {len(references)} reference lines")
    metric = BLEU()
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rnnsearch-score", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("generate_output", type=Path, help="output of fairseq-generate/-interactive")
    parser.add_argument("--reference", type=Path, required=True, help="raw reference text, one line each")
    parser.add_argument("--use-h", action="store_true", help="score H- lines instead of detokenised D- lines")
    parser.add_argument("--output", type=Path, help="also write the hypotheses here, in source order")
    args = parser.parse_args(argv)
    try:
        references = args.reference.read_text(encoding="utf-8").splitlines()
        hypotheses = aligned_hypotheses(read_hypotheses(args.generate_output, "H" if args.use_h else "D"), len(references))
        bleu, signature = corpus_bleu(hypotheses, references)
    except (OSError, UnicodeDecodeError, ScoringError) as error:
        sys.exit(f"rnnsearch-score: error: {error}")
    if args.output:
        write_atomic(args.output, hypotheses)
    print(f"sacreBLEU = {bleu.score:.2f} ({bleu}) on {len(references)} sentences; {signature}")


if __name__ == "__main__":
    main()
