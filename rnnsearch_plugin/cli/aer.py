"""rnnsearch-aer: the alignment error rate of a trained RNNsearch's soft alignments (its
alignment head's where it has one, and the output then says so; else its attention's).

    rnnsearch-aer --path CKPT --data DATA/bin --gold GOLD [--download-gold] [--threshold 0.3 ...] --out DIR
                  [--reverse-path CKPT --reverse-data DATA/bin]
    rnnsearch-aer --path CKPT --data DATA/bin --gold gold.talp --gold-source gold.de --gold-target gold.en
                  [--gold-langs de-en] [--gold-one-based] --out DIR
    rnnsearch-aer --alignments FILE [--name NAME] [--alignments-langs en-fr] [--alignments-one-based]
                  --gold GOLD --out DIR

AER (Och & Ney 2003) against a gold standard (``analysis/aer.py``): a folder in the NAACL format
of the Hansards set (dev.e, dev.f, dev.wa.nonullalign: English and French; --download-gold fetches
it into the folder GOLD, ``data/alignment_gold.py``), or a Pharaoh file
("i-j" sure, "i?j" possible, 0-based) with its tokenised sentences, whose languages are the
model's unless --gold-langs names them. A gold standard of the model's pair the other way round
(the Hansards' English-French for a Fr->En model) is transposed, and the output says so. The gold
target sentences are force-decoded given the sources, each gold word encoded on its own so that
every piece maps to one gold word (in the Hansards set, the first word of each sentence given back
the capital the set took from it, where the model's dictionary has the capitalised word); piece
weights become word weights (source pieces summed, target pieces averaged, </s> left out), and
links are each target word's most-attended source word (argmax) or, in addition, every word pair
with weight >= --threshold (several thresholds: a row for each). The diagonal alignment is
reported beside them as a baseline.

With a model of the other direction (--reverse-path, --reverse-data), the rows of the links
rnnsearch-align writes from both: each direction's argmax or thresholded links (without the
argmax links the threshold rows above add), the reverse model's transposed, symmetrised by
intersect, union and grow-diag-final-and.

With --alignments instead of --path and --data, the links are those of a file in Pharaoh format
(``analysis/links.py``), from any word aligner: one line per gold sentence pair in the gold's
order, "i-j" the 0-based positions of a gold source and target word; its row is named after the
file (or --name). Its languages are the gold's unless --alignments-langs names them (the gold's
pair reversed transposes the gold).
"""

import argparse
import json
import sys
from dataclasses import dataclass, replace
from functools import partial
from itertools import product
from pathlib import Path

import numpy as np

from ..alignment_options import ALIGNED_BY
from ..analysis import aer
from ..analysis.corpus_alignment import LinkRule, word_weights
from ..analysis.links import SYMMETRISATIONS, read_pharaoh_links
from ..analysis.markdown import markdown_table
from ..data import alignment_gold
from ..data.textio import DataError, read_lines, write_atomic
from ..hub import USER_ERRORS, RNNSearchHubInterface, load
from .align import check_model, check_reverse

Pair = tuple[str, str]


@dataclass(frozen=True)
class GoldStandard:
    """Gold sentences and links as the files give them: ``links`` are (first, second) positions,
    ``first`` and ``second`` the sentences of ``pair`` (None: the model's pair, unnamed)."""

    first: list[str]
    second: list[str]
    links: aer.Gold
    pair: Pair | None
    naacl: bool


def read_gold_standard(args: argparse.Namespace) -> GoldStandard:
    """The NAACL folder or the Pharaoh file of --gold, checked against its sentences; with
    --download-gold, the Hansards' downloaded into the folder first where it lacks them."""
    if args.download_gold:
        alignment_gold.fetch(args.gold, args.gold_mirror)
    if not args.gold.exists():
        raise DataError(f"--gold {args.gold} does not exist")
    if args.gold.is_dir() and (args.gold_source or args.gold_target):
        raise DataError(f"--gold {args.gold} is a folder (NAACL format): --gold-source and --gold-target go with a Pharaoh file")
    if args.gold.is_dir():
        first, second, links_file = (args.gold / name for name in alignment_gold.FILES)
        english, french, links = read_lines(first), read_lines(second), aer.read_naacl(links_file)
        if len(english) != len(french) or len(english) != len(links):
            raise DataError(f"{args.gold}: dev.e, dev.f and the gold links cover {len(english)}, {len(french)}, {len(links)} sentences")
        aer.check_positions(links, english, french, str(links_file))
        return GoldStandard(english, french, links, alignment_gold.PAIR, naacl=True)
    if not (args.gold_source and args.gold_target):
        raise DataError(
            f"--gold {args.gold} is a file: give its tokenised sentences with --gold-source and --gold-target "
            f"(Pharaoh format), or a folder of the NAACL format ({', '.join(alignment_gold.FILES)})"
        )
    sources, targets = read_lines(args.gold_source), read_lines(args.gold_target)
    links = aer.read_pharaoh(args.gold, sources, targets, args.gold_one_based)
    return GoldStandard(sources, targets, links, gold_pair(args.gold_langs), naacl=False)


def gold_pair(text: str | None, option: str = "--gold-langs") -> Pair | None:
    """'de-en' -> ("de", "en"), as fairseq names a pair; ``option`` names it in an error."""
    if text is None:
        return None
    languages = text.split("-")
    if len(languages) != 2 or not all(languages):
        raise DataError(f"{option} {text}: name the source and target languages as SRC-TGT, e.g. de-en")
    return languages[0], languages[1]


def oriented(gold: GoldStandard, pair: Pair | None, aligner: str) -> tuple[list[str], list[str], aer.Gold, bool]:
    """The gold sources and targets in the aligner's source and target languages (``pair``; None:
    the gold's), the links as (source, target) positions, and whether the gold was transposed to
    get them; ``aligner`` ("CKPT translates", "FILE aligns") names it in an error."""
    if pair is None or gold.pair is None or gold.pair == pair:
        return gold.first, gold.second, gold.links, False
    if gold.pair == pair[::-1]:
        return gold.second, gold.first, aer.transposed(gold.links), True
    raise DataError(
        f"the gold standard aligns {gold.pair[0]} with {gold.pair[1]}, but {aligner} "
        f"{pair[0]}->{pair[1]}: give a gold standard of {pair[0]} and {pair[1]} (Pharaoh: --gold FILE "
        "--gold-source FILE --gold-target FILE)"
    )


def initial_capital(model: RNNSearchHubInterface, words: list[str], target: bool) -> list[str]:
    """The gold set lowercases the first word of every sentence (names keep their capitals), where
    the model's training text begins sentences with a capital: WORDS with their first word
    capitalised when the model's dictionary has every piece of that form, else as given (a
    model trained on lowercased text)."""
    if not words or not words[0][:1].islower():
        return words
    capital = words[0][:1].upper() + words[0][1:]
    dictionary = model.tgt_dict if target else model.src_dict
    ids = dictionary.encode_line(model.apply_bpe(model.tokenize(capital)), add_if_not_exist=False, append_eos=False)
    return words if dictionary.unk() in ids.tolist() else [capital, *words[1:]]


def gold_words(model: RNNSearchHubInterface, sentence: str, target: bool, capitals: bool) -> list[str]:
    """The words of a gold sentence, with its initial capital given back where ``capitals``."""
    return initial_capital(model, sentence.split(), target) if capitals else sentence.split()


def gold_weights(model: RNNSearchHubInterface, sources: list[str], targets: list[str], capitals: bool) -> list[np.ndarray]:
    """The word-level soft alignment (target words x source words) of every gold sentence pair, as
    rnnsearch-align computes it (``corpus_alignment.word_weights``); ``capitals``: give each
    sentence's first word back its capital (the Hansards set)."""
    pairs = [(gold_words(model, s, False, capitals), gold_words(model, t, True, capitals)) for s, t in zip(sources, targets)]
    weights = word_weights(model, pairs)
    for number, found in enumerate(weights, 1):
        if isinstance(found, str):
            raise DataError(f"gold sentence pair {number} cannot be force-decoded: {found}")
    return weights  # type: ignore[return-value]


def gold_links(weights: list[np.ndarray], thresholds: list[float]) -> dict[str, dict[int, set]]:
    """Predicted links (source, target) of every gold sentence pair (1-based ids), by method: argmax,
    "threshold T" for each threshold (argmax's links and those at or above T), the diagonal."""
    rules = {"argmax": aer.argmax_links, **{f"threshold {t}": partial(aer.threshold_links, threshold=t) for t in thresholds}}
    links = {name: {number: rule(words) for number, words in enumerate(weights, 1)} for name, rule in rules.items()}
    links["diagonal"] = {number: aer.diagonal_links(words.shape[1], words.shape[0]) for number, words in enumerate(weights, 1)}
    return links


def symmetrised_links(weights: list[np.ndarray], reverse_weights: list[np.ndarray], thresholds: list[float]) -> dict[str, dict[int, set]]:
    """The links rnnsearch-align writes with a reverse model, by extraction (argmax, then each
    threshold) and symmetrisation ("argmax grow-diag-final-and", "threshold 0.3 intersect", ...), 1-based."""
    extractions = {"argmax": LinkRule("argmax"), **{f"threshold {t}": LinkRule("threshold", t) for t in thresholds}}
    rows = {}
    for (name, rule), symmetrisation in product(extractions.items(), SYMMETRISATIONS):
        both = replace(rule, symmetrisation=symmetrisation)
        rows[f"{name} {symmetrisation}"] = {
            number: aer.from_zero_based(both.links(w, r)) for number, (w, r) in enumerate(zip(weights, reverse_weights), 1)
        }
    return rows


# gold links, transposition, predicted links by row, the alignment head where the links are its (None: the
# attention's, or a file's)
Scored = tuple[aer.Gold, str | None, dict[str, dict[int, set]], str | None]


def checkpoint_links(args: argparse.Namespace, gold: GoldStandard) -> Scored:
    """The gold links in the model's orientation, the line saying the gold was transposed for it
    (None if not), and the model's links by method."""
    model = load(args.path, args.data)
    check_model(model, args.path)
    pair = model.pair
    sources, targets, links, flipped = oriented(gold, pair, f"{args.path} translates")
    weights = gold_weights(model, sources, targets, capitals=gold.naacl)
    rows = gold_links(weights, args.threshold)
    if args.reverse_path:
        reverse = load(args.reverse_path, args.reverse_data)
        check_reverse(model, reverse, args.reverse_path)
        rows.update(symmetrised_links(weights, gold_weights(reverse, targets, sources, capitals=gold.naacl), args.threshold))
    return links, transposition(gold, pair, "model") if flipped else None, rows, ALIGNED_BY["head"] if model.aligned_by == "head" else None


def file_links(args: argparse.Namespace, gold: GoldStandard) -> Scored:
    """The gold links in the alignment file's orientation (--alignments-langs; the gold's without
    it), the line saying the gold was transposed for it (None if not), and the file's links
    (1-based), one row named after the file or --name."""
    pair = gold_pair(args.alignments_langs, "--alignments-langs")
    sources, targets, links, flipped = oriented(gold, pair, f"{args.alignments} aligns")
    found = read_pharaoh_links(args.alignments, sources, targets, args.alignments_one_based)
    rows = {args.name or args.alignments.name: {number: aer.from_zero_based(sentence) for number, sentence in enumerate(found, 1)}}
    return links, transposition(gold, pair, "alignment") if flipped else None, rows, None


def transposition(gold: GoldStandard, pair: Pair, aligner: str) -> str:
    return f"the {gold.pair[0]}-{gold.pair[1]} gold standard transposed for this {pair[0]}->{pair[1]} {aligner}"


def check_aligner(args: argparse.Namespace) -> None:
    """A checkpoint (--path and --data) or an alignment file (--alignments, which --name,
    --alignments-langs and --alignments-one-based describe), not both."""
    if args.alignments and (args.path or args.data):
        raise DataError("--alignments scores a file, --path and --data a checkpoint: give one of them")
    file_options = [
        option
        for option, value in (
            ("--name", args.name),
            ("--alignments-langs", args.alignments_langs),
            ("--alignments-one-based", args.alignments_one_based),
        )
        if value
    ]
    if file_options and not args.alignments:
        raise DataError(f"{', '.join(file_options)}: only with an alignment file to score (--alignments FILE)")
    if (args.reverse_path is None) != (args.reverse_data is None) or (args.reverse_path and not args.path):
        raise DataError("--reverse-path and --reverse-data go together, beside a checkpoint's --path and --data")
    if not args.alignments and not (args.path and args.data):
        raise DataError(
            "give a checkpoint to score (--path CKPT --data BIN, the folder it was trained on) or an alignment file (--alignments FILE)"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rnnsearch-aer", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, help="checkpoint of an rnnsearch model")
    parser.add_argument("--data", type=Path, help="the fairseq-binarized folder the model was trained on")
    parser.add_argument(
        "--alignments", type=Path, help="score this Pharaoh file instead of a checkpoint: one line of i-j links per gold sentence pair"
    )
    parser.add_argument("--name", help="the row of --alignments (default: its file name)")
    parser.add_argument(
        "--alignments-langs",
        metavar="SRC-TGT",
        help="the languages of --alignments' i and j (default: the gold's); the gold's pair reversed transposes the gold",
    )
    parser.add_argument("--alignments-one-based", action="store_true", help="--alignments counts positions from 1")
    parser.add_argument(
        "--gold",
        type=Path,
        required=True,
        help=f"a NAACL folder ({', '.join(alignment_gold.FILES)}), or a Pharaoh file with --gold-source/--gold-target",
    )
    parser.add_argument(
        "--download-gold",
        action="store_true",
        help="where the folder --gold lacks them, download the Hansards' English-French gold alignments into it first",
    )
    parser.add_argument("--gold-mirror", metavar="URL", help="--download-gold from this URL prefix instead of their public repository")
    parser.add_argument("--gold-source", type=Path, help="the tokenised source sentences of a Pharaoh --gold, one a line")
    parser.add_argument("--gold-target", type=Path, help="the tokenised target sentences of a Pharaoh --gold, one a line")
    parser.add_argument(
        "--gold-langs",
        metavar="SRC-TGT",
        help="the languages of --gold-source and --gold-target (default: the model's); the model's pair reversed transposes the gold",
    )
    parser.add_argument("--gold-one-based", action="store_true", help="the Pharaoh --gold counts positions from 1")
    parser.add_argument(
        "--threshold",
        type=float,
        nargs="+",
        default=[0.3],
        help="a checkpoint's thresholded links: weight >= this (several values: a row for each)",
    )
    parser.add_argument("--reverse-path", type=Path, help="a checkpoint of the other direction: adds the symmetrised rows")
    parser.add_argument("--reverse-data", type=Path, help="the binarized folder of --reverse-path")
    parser.add_argument("--out", type=Path, help="write aer.md and aer.json here")
    args = parser.parse_args(argv)
    try:
        check_aligner(args)
        gold = read_gold_standard(args)
        links, transposed, predicted, aligned_by = (file_links if args.alignments else checkpoint_links)(args, gold)
        scores = {method: aer.alignment_error_rate(found, links) for method, found in predicted.items()}
    except USER_ERRORS as error:
        sys.exit(f"rnnsearch-aer: error: {error}")
    heading = f"# Alignment error rate, {len(links)} sentences of {args.gold}, {args.alignments or args.path}"
    if aligned_by:
        print(f"| links of {aligned_by}")
        heading += f" (links of {aligned_by})"
    if transposed:
        print(f"| {transposed}")
        heading += f" ({transposed})"
    table = markdown_table(
        ["links", "precision", "recall", "AER"],
        [[m, *(f"{s[key]:.3f}" for key in ("precision", "recall", "aer"))] for m, s in scores.items()],
    )
    print("\n".join(table))
    if args.out:
        write_atomic(args.out / "aer.md", [heading, "", *table])
        write_atomic(args.out / "aer.json", [json.dumps(scores, indent=2)])
