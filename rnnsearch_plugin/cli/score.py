"""Score a fairseq-generate (or fairseq-interactive) output with sacreBLEU, losing nothing.

    rnnsearch-score GENERATE_OUTPUT --reference RAW_REFERENCE_FILE [--target-lang LANG]

Reads the detokenised hypotheses (the ``D-<id>`` lines; ``H-<id>`` with --use-h), puts them
back in source order and scores them against the raw reference text: sacreBLEU, tokenised for
the target language (zh, ja-mecab, ko-mecab, else 13a; char where MeCab is missing or the language
has no spaces), and chrF2, each with its signature. The target language is the reference file's
extension (fairseq's PREFIX.LANG, e.g. raw/test.fr) unless --target-lang names it. A line of
either file ends at a line feed only, as fairseq writes them and sacreBLEU reads them (a form feed
or U+2028 is part of its line). It refuses to score unless there is exactly one hypothesis for
every reference line, so a dropped or duplicated sentence can never pass as a lower or higher BLEU.
"""

import argparse
import sys
from pathlib import Path

from ..analysis.bleu import corpus_bleu, corpus_chrf, sacrebleu_tokenizer
from ..analysis.generate_output import ScoringError, aligned_hypotheses, read_hypotheses
from ..data.textio import DataError, read_lines, write_atomic


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rnnsearch-score", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("generate_output", type=Path, help="output of fairseq-generate/-interactive")
    parser.add_argument("--reference", type=Path, required=True, help="raw reference text, one line each")
    parser.add_argument("--use-h", action="store_true", help="score H- lines instead of detokenised D- lines")
    parser.add_argument("--target-lang", help="the references' language (default: the reference file's extension)")
    parser.add_argument("--output", type=Path, help="also write the hypotheses here, in source order")
    args = parser.parse_args(argv)
    target = args.target_lang or args.reference.suffix[1:]
    if not target:
        parser.error(f"--reference {args.reference} has no extension naming its language: give --target-lang")
    try:
        references = read_lines(args.reference)
        hypotheses = aligned_hypotheses(read_hypotheses(args.generate_output, "H" if args.use_h else "D"), len(references))
        bleu, signature = corpus_bleu(hypotheses, references, target)
        chrf, chrf_signature = corpus_chrf(hypotheses, references)
    except (OSError, DataError, ScoringError) as error:
        sys.exit(f"rnnsearch-score: error: {error}")
    note = sacrebleu_tokenizer(target)[1]
    if note:
        print(f"rnnsearch-score: note: {note}", file=sys.stderr)
    if args.output:
        write_atomic(args.output, hypotheses)
    print(f"sacreBLEU = {bleu.score:.2f} ({bleu}); {chrf} on {len(references)} sentences of {target}; {signature}; {chrf_signature}")


if __name__ == "__main__":
    main()
