"""rnnsearch-heatmaps: Figure 3's heatmaps of the soft alignments of a trained RNNsearch.

    rnnsearch-heatmaps --path CKPT --data DATA/bin --input raw/test.en [--reference raw/test.fr]
                       [--ids 0,5,9] [--grid] [--pieces] --out DIR
    rnnsearch-heatmaps --generate-output gen.out --scheme spm [-s SRC -t TGT] [--ids ...] --out DIR

The weights alpha_ij (Eq. 6; the attention's even where the model has an alignment head) of the beam-search translation (or of the forced
reference with --reference), source words on the x-axis, target words on the y-axis, 0 black
and 1 white; subword pieces merged into words unless --pieces. From a model, or from the
``A-`` lines of ``fairseq-generate --print-alignment soft`` (run without --remove-bpe, so that
the S-/H- lines hold the pieces the weights belong to). Labels are drawn in any script
(``analysis/fonts.py``), tagged with the model's languages (or -s/-t with --generate-output).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

from ..analysis.alignment import merge_pieces, parse_soft_alignments
from ..analysis.generate_output import first_of_kind
from ..analysis.heatmap import Languages, plot_alignment, plot_alignment_grid
from ..data.schemes import SCHEMES, WORD
from ..data.textio import DataError, read_lines
from ..hub import USER_ERRORS, load


def selected_ids(text: str | None, count: int, default: int = 3) -> list[int]:
    ids = [int(x) for x in text.split(",")] if text else list(range(min(default, count)))
    if any(not 0 <= i < count for i in ids):
        raise DataError(f"--ids {text}: the input has sentences 0..{count - 1}")
    return ids


Item = tuple[int, np.ndarray, list[str], list[str]]  # sentence, weights T x S, source and target tokens


def model_alignments(args: argparse.Namespace) -> tuple[list[Item], str, Languages]:
    model = load(args.path, args.data)
    sources = read_lines(args.input)
    references = read_lines(args.reference) if args.reference else None
    items = []
    for index in selected_ids(args.ids, len(sources)):
        found = model.align(sources[index], references[index] if references else None, beam=args.beam, attention=True)
        items.append((index, found.weights, found.source_tokens, found.target_tokens))
    return items, model.scheme, model.pair


def generated_alignments(args: argparse.Namespace) -> tuple[list[Item], str, Languages]:
    lines = read_lines(args.generate_output)
    matrices = parse_soft_alignments(lines)
    texts = {kind: first_of_kind(lines, kind) for kind in "SH"}
    items = []
    for index in selected_ids(args.ids, len(matrices)):
        if index not in matrices:
            raise DataError(f"{args.generate_output} has no A- line for sentence {index}: run fairseq-generate with --print-alignment soft")
        weights, source, target = matrices[index], texts["S"][index].split() + ["</s>"], texts["H"][index].split() + ["</s>"]
        source, target = source[: weights.shape[1]], target[: weights.shape[0]]
        if weights.shape != (len(target), len(source)):
            raise DataError(
                f"sentence {index}: the A- line has {weights.shape} weights for {len(target)} x {len(source)} "
                "tokens: run fairseq-generate without --remove-bpe/--post-process"
            )
        items.append((index, weights, source, target))
    return items, args.scheme or WORD, (args.source_lang, args.target_lang)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rnnsearch-heatmaps", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, help="checkpoint")
    parser.add_argument("--data", type=Path, help="the fairseq-binarized folder the model was trained on")
    parser.add_argument("--input", type=Path, help="raw source sentences, one a line")
    parser.add_argument("--reference", type=Path, help="align these targets instead of the translations")
    parser.add_argument("--generate-output", type=Path, help="fairseq-generate --print-alignment soft output")
    parser.add_argument("--scheme", choices=SCHEMES, help="with --generate-output: how pieces make words")
    parser.add_argument("-s", "--source-lang", help="with --generate-output: the source language (its labels' glyph forms)")
    parser.add_argument("-t", "--target-lang", help="with --generate-output: the target language")
    parser.add_argument("--ids", help="comma-separated sentence numbers (0-based; default the first three)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--pieces", action="store_true", help="keep subword pieces instead of merging them into words")
    parser.add_argument("--grid", action="store_true", help="one figure with every sentence instead of one per sentence")
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.generate_output:
            items, scheme, languages = generated_alignments(args)
        elif args.path and args.data and args.input:
            items, scheme, languages = model_alignments(args)
        else:
            raise DataError("give --path, --data and --input (a model), or --generate-output")
        figures = []
        for index, weights, source, target in items:
            if not args.pieces:
                weights, source, target = merge_pieces(weights, source, target, scheme)
            figures.append((weights, source, target, f"sentence {index}"))
        args.out.mkdir(parents=True, exist_ok=True)
        if args.grid:
            plot_alignment_grid(figures, args.out / f"alignments.{args.format}", languages=languages)
        for (index, *_), (weights, source, target, title) in zip(items, figures if not args.grid else []):
            plot_alignment(weights, source, target, args.out / f"alignment_{index}.{args.format}", title, languages)
    except USER_ERRORS as error:
        sys.exit(f"rnnsearch-heatmaps: error: {error}")
    print(f"| wrote {len(items)} alignment{'s' if len(items) != 1 else ''} to {args.out}")
