"""Score a fairseq-generate (or fairseq-interactive) output with sacreBLEU, losing nothing.

    rnnsearch-score GENERATE_OUTPUT --reference RAW_REFERENCE_FILE

Reads the detokenised hypotheses (the ``D-<id>`` lines; ``H-<id>`` with --use-h), puts them
back in source order and scores them against the raw reference text. It refuses to score
unless there is exactly one hypothesis for every reference line, so a dropped or duplicated
sentence can never pass as a lower or higher BLEU.
"""
import argparse
import sys
from pathlib import Path

from ..analysis.bleu import corpus_bleu
from ..analysis.generate_output import ScoringError, aligned_hypotheses, read_hypotheses
from ..data.textio import write_atomic


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
