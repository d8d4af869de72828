"""rnnsearch-align: word alignments of a parallel corpus from a trained RNNsearch's attention.

    rnnsearch-align --path CKPT --data DATA/bin --source FILE --target FILE --out FILE
                    [--links argmax|threshold] [--threshold 0.3]
                    [--reverse-path CKPT --reverse-data DATA/bin [--symmetrise grow-diag-final-and]]
                    [--soft FILE]

Writes one line per pair of lines of --source and --target (tokenised text, one sentence a
line, words separated by spaces) in Pharaoh format, as fast_align and eflomal write it: "i-j" for
each link, i the 0-based word of the source line and j of the target line (``analysis/links.py``;
how links are made: ``analysis/corpus_alignment.py``). With a model of the other direction
(--reverse-path, its data folder --reverse-data) both directions are symmetrised: intersect,
union or grow-diag-final-and (Koehn et al. 2005; the default). --soft writes the word-level soft
alignments too, as JSON lines (``SOFT_FORMAT``).

A pair longer than a model accepts gets an empty line and is reported by line number. The
output appears under its name only when complete (FILE.part until then); a run interrupted and
started again with the same inputs and options resumes after the last pair it wrote. An input
that fails while it is read (changed after the check: cut short, or bytes that are not UTF-8)
stops the run in one line, FILE.part keeping the pairs aligned before.
"""

import argparse
import json
import logging
import os
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from ..alignment_options import ALIGNED_BY
from ..analysis.corpus_alignment import CHUNK, EXTRACTIONS, LinkRule, PairAlignment, align_corpus
from ..analysis.links import SYMMETRISATIONS, pharaoh_line
from ..blank import is_blank
from ..data.textio import DataError, ResumableLines, counted, input_file, stream_lines
from ..hub import USER_ERRORS, RNNSearchHubInterface, load

logger = logging.getLogger("rnnsearch_plugin.align")
SOFT_FORMAT = (
    '{"line": N, "source": [words], "target": [words], "weights": [[alpha of target word i over the source '
    'words] ...], "reverse_weights": [[the reverse model\'s, source word j over the target words] ...]} '
    '(reverse_weights only with --reverse-path; a skipped pair: {"line": N, "skipped": REASON})'
)


def check_inputs(source: Path, target: Path) -> int:
    """The number of pairs; DataError (one line) for a missing or non-UTF-8 file, a folder, a blank
    line (``blank.is_blank``: no visible character) or different line counts."""
    counts = []
    for path in (source, target):
        count = 0
        for count, line in enumerate(stream_lines(input_file(path)), 1):
            if is_blank(line):
                raise DataError(
                    f"{path}:{count} is blank (no visible character): every pair needs words on both sides; "
                    "remove that line from both files"
                )
        counts.append(count)
    if counts[0] != counts[1]:
        raise DataError(
            f"{source} {counted(counts[0])} and {target} {counted(counts[1])}: give the two sides of the same pairs, one pair a line"
        )
    return counts[0]


def check_outputs(outputs: dict[str, Optional[Path]]) -> None:
    """DataError (one line) for an output ({option: path}) that could not be written once the work
    is done: a folder, or a path under a file or under a folder this user may not write in."""
    for option, path in outputs.items():
        if path is None:
            continue
        if path.is_dir():
            raise DataError(f"{option} {path} is a folder: give the name of the file to write")
        parent = next(folder for folder in path.absolute().parents if folder.exists())
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise DataError(f"{option} {path} cannot be written ({parent} is not a folder this user may write in): give another path")


def check_model(model: RNNSearchHubInterface, checkpoint: Path) -> None:
    if not model.models[0].aligns:
        raise DataError(
            f"{checkpoint} has no attention and no alignment head to align with (an rnnencdec model?): "
            "give an rnnsearch checkpoint, or one trained with --alignment-head"
        )


def check_reverse(model: RNNSearchHubInterface, reverse: RNNSearchHubInterface, checkpoint: Path) -> None:
    check_model(reverse, checkpoint)
    if reverse.pair != model.pair[::-1]:
        forward = "->".join(model.pair)
        raise DataError(
            f"--reverse-path {checkpoint} translates {'->'.join(reverse.pair)}, not the reverse of "
            f"--path's {forward}: give a model of {'->'.join(model.pair[::-1])}"
        )


def soft_line(pair: PairAlignment) -> str:
    if pair.skipped is not None:
        return json.dumps({"line": pair.line, "skipped": pair.skipped})
    record = {"line": pair.line, "source": pair.source, "target": pair.target, "weights": rounded(pair.weights)}
    if pair.reverse_weights is not None:
        record["reverse_weights"] = rounded(pair.reverse_weights)
    return json.dumps(record, ensure_ascii=False)


def rounded(weights: np.ndarray) -> list:
    return np.round(weights.astype(float), 5).tolist()


def signature(args: argparse.Namespace) -> dict:
    """What a resumed run must share with the interrupted one: inputs (path, size, time), models, options."""
    files = [args.source, args.target, args.path, args.data, args.reverse_path, args.reverse_data]
    stamps = [[str(path.resolve()), path.stat().st_size, path.stat().st_mtime_ns] if path else None for path in files]
    return {
        "files": stamps,
        "links": args.links,
        "threshold": args.threshold,
        "symmetrise": args.symmetrise,
        "soft": str(args.soft) if args.soft else None,
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rnnsearch-align", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, required=True, help="checkpoint of an rnnsearch model")
    parser.add_argument("--data", type=Path, required=True, help="the fairseq-binarized folder the model was trained on")
    parser.add_argument("--source", type=Path, required=True, help="tokenised source sentences, one a line")
    parser.add_argument("--target", type=Path, required=True, help="tokenised target sentences, line for line")
    parser.add_argument("--out", type=Path, required=True, help="the links, one line per pair (Pharaoh i-j, 0-based)")
    parser.add_argument(
        "--links",
        choices=EXTRACTIONS,
        default="argmax",
        help="per direction: each target word's most-attended source word, or every pair >= --threshold",
    )
    parser.add_argument("--threshold", type=float, default=0.3)
    parser.add_argument("--reverse-path", type=Path, help="checkpoint of an rnnsearch model of the other direction")
    parser.add_argument("--reverse-data", type=Path, help="the binarized folder of --reverse-path")
    parser.add_argument(
        "--symmetrise",
        choices=SYMMETRISATIONS,
        help="how both directions' links combine (with --reverse-path; default grow-diag-final-and)",
    )
    parser.add_argument("--soft", type=Path, help=f"also write the soft alignments here, JSON lines: {SOFT_FORMAT}")
    args = parser.parse_args(argv)
    if (args.reverse_path is None) != (args.reverse_data is None):
        parser.error("--reverse-path and --reverse-data go together")
    if args.symmetrise and args.reverse_path is None:
        parser.error("--symmetrise needs a model of the other direction: give --reverse-path and --reverse-data")
    if args.reverse_path is not None and args.symmetrise is None:
        args.symmetrise = "grow-diag-final-and"
    return args


def main(argv: Optional[list[str]] = None) -> None:
    args = parse_args(argv)
    try:
        total = check_inputs(args.source, args.target)
        check_outputs({"--out": args.out, "--soft": args.soft})
        model = load(args.path, args.data)
        check_model(model, args.path)
        reverse = load(args.reverse_path, args.reverse_data) if args.reverse_path else None
        if reverse is not None:
            check_reverse(model, reverse, args.reverse_path)
        rule = LinkRule(args.links, args.threshold, args.symmetrise)
        output = ResumableLines([args.out] + ([args.soft] if args.soft else []), signature(args))
        done = output.open()
    except USER_ERRORS as error:
        sys.exit(f"rnnsearch-align: error: {error}")
    if done:
        logger.info(f"resuming after line {done} of {total} ({output.parts[0]})")
    skipped = write_alignments(output, model, reverse, rule, args, done, total)
    output.finish()
    print(
        f"| wrote {total} alignments ({ALIGNED_BY[model.aligned_by]}) to {args.out}"
        + (f" and {args.soft}" if args.soft else "")
        + (f"; {len(skipped)} pairs over a model's length limit have no links (lines {', '.join(map(str, skipped))})" if skipped else "")
    )


def write_alignments(
    output: ResumableLines,
    model: RNNSearchHubInterface,
    reverse: Optional[RNNSearchHubInterface],
    rule: LinkRule,
    args: argparse.Namespace,
    done: int,
    total: int,
) -> list[int]:
    """Align the pairs after line ``done``, writing each chunk as it is done; the skipped lines.
    Stopped (Ctrl-C, or an input that fails to read), it writes the pairs aligned so far to the
    ``.part`` files, which keep their names, and exits with one line saying so."""
    sources, targets = lines_after(args.source, done, total), lines_after(args.target, done, total)
    skipped, rows, aligned, start = [], [], done, time.perf_counter()
    try:
        for pair in align_corpus(model, sources, targets, reverse, rule, first_line=done + 1):
            if pair.skipped is not None:
                logger.warning(f"line {pair.line}: no links, {pair.skipped}")
                skipped.append(pair.line)
            rows.append([pharaoh_line(pair.links)] + ([soft_line(pair)] if args.soft else []))
            aligned = pair.line
            if len(rows) == CHUNK or pair.line == total:
                output.write(rows)
                rows = []
                logger.info(f"aligned {pair.line:,} of {total:,} pairs ({(pair.line - done) / (time.perf_counter() - start):.1f} pairs/s)")
    except (KeyboardInterrupt, *USER_ERRORS) as error:
        output.write(rows)
        output.close()
        sys.exit(stopped(error, output.parts[0], aligned))
    return skipped


def lines_after(path: Path, done: int, total: int) -> Iterator[str]:
    """Lines ``done`` + 1 to ``total`` of ``path`` (those ``check_inputs`` counted); DataError where
    the file ends before (it was cut short during the run)."""
    count = 0
    for count, line in enumerate(islice(stream_lines(path), total), 1):
        if count > done:
            yield line
    if count < total:
        raise DataError(f"{path} changed during the run: it now ends after {count:,} lines, where it had {total:,} when the run began")


def stopped(error: BaseException, part: Path, aligned: int) -> str:
    """The line rnnsearch-align exits with when ``error`` stopped it, ``part`` holding the first ``aligned`` pairs."""
    if isinstance(error, KeyboardInterrupt):
        return f"rnnsearch-align: interrupted; {part} holds the pairs done: run the same command again to resume"
    return f"rnnsearch-align: error: {error} ({part} keeps the {aligned:,} pairs aligned before it; it is not the whole output)"
