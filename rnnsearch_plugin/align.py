"""Soft alignments of a trained RNNsearch: Figure 3's heatmaps and the alignment error rate.

    rnnsearch-heatmaps --path CKPT --data DATA/bin --input raw/test.en [--reference raw/test.fr]
                       [--ids 0,5,9] [--grid] [--pieces] --out DIR
    rnnsearch-heatmaps --generate-output gen.out --scheme spm [--ids ...] --out DIR
    rnnsearch-aer --path CKPT --data DATA/bin --gold ../shared/data/alignment-gold [--threshold 0.3] --out DIR

Heatmaps: the weights alpha_ij (Eq. 6) of the beam-search translation (or of the forced
reference with --reference), source words on the x-axis, target words on the y-axis, 0 black
and 1 white; subword pieces merged into words unless --pieces. From a model, or from the
``A-`` lines of ``fairseq-generate --print-alignment soft`` (run without --remove-bpe, so that
the S-/H- lines hold the pieces the weights belong to).

AER (Och & Ney 2003) against the Hansards gold standard: the gold French is force-decoded given
the English, each gold word encoded on its own so that every piece maps to one gold word; piece
weights become word weights (source pieces summed, target pieces averaged, </s> left out), and
links are each French word's most-attended English word (argmax) or, in addition, every word
pair with weight >= --threshold. The diagonal alignment is reported beside them as a baseline.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from .analysis import aer
from .analysis.alignment import merge_groups, merge_pieces, parse_soft_alignments
from .analysis.heatmap import plot_alignment, plot_alignment_grid
from .analysis.markdown import markdown_table
from .data.textio import DataError, read_lines, write_atomic
from .hub import RNNSearchHubInterface, load
from .scoring import first_of_kind


def selected_ids(text: str | None, count: int, default: int = 3) -> list[int]:
    ids = [int(x) for x in text.split(",")] if text else list(range(min(default, count)))
    if any(not 0 <= i < count for i in ids):
        raise DataError(f"--ids {text}: the input has sentences 0..{count - 1}")
    return ids


Item = tuple[int, np.ndarray, list[str], list[str]]  # sentence, weights T x S, source and target tokens


def model_alignments(args: argparse.Namespace) -> tuple[list[Item], str]:
    model = load(args.path, args.data)
    sources = read_lines(args.input)
    references = read_lines(args.reference) if args.reference else None
    items = []
    for index in selected_ids(args.ids, len(sources)):
        found = model.align(sources[index], references[index] if references else None, beam=args.beam)
        items.append((index, found.weights, found.source_tokens, found.target_tokens))
    return items, model.scheme


def generated_alignments(args: argparse.Namespace) -> tuple[list[Item], str]:
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
            raise DataError(f"sentence {index}: the A- line has {weights.shape} weights for {len(target)} x {len(source)} "
                            "tokens: run fairseq-generate without --remove-bpe/--post-process")
        items.append((index, weights, source, target))
    return items, args.scheme or "word"


def heatmaps_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rnnsearch-heatmaps", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, help="checkpoint")
    parser.add_argument("--data", type=Path, help="the fairseq-binarized folder the model was trained on")
    parser.add_argument("--input", type=Path, help="raw source sentences, one a line")
    parser.add_argument("--reference", type=Path, help="align these targets instead of the translations")
    parser.add_argument("--generate-output", type=Path, help="fairseq-generate --print-alignment soft output")
    parser.add_argument("--scheme", choices=["spm", "bpe", "word"], help="with --generate-output: how pieces make words")
    parser.add_argument("--ids", help="comma-separated sentence numbers (0-based; default the first three)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--pieces", action="store_true", help="keep subword pieces instead of merging them into words")
    parser.add_argument("--grid", action="store_true", help="one figure with every sentence instead of one per sentence")
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.generate_output:
            items, scheme = generated_alignments(args)
        elif args.path and args.data and args.input:
            items, scheme = model_alignments(args)
        else:
            raise DataError("give --path, --data and --input (a model), or --generate-output")
        figures = []
        for index, weights, source, target in items:
            if not args.pieces:
                weights, source, target = merge_pieces(weights, source, target, scheme)
            figures.append((weights, source, target, f"sentence {index}"))
        args.out.mkdir(parents=True, exist_ok=True)
        if args.grid:
            plot_alignment_grid(figures, args.out / f"alignments.{args.format}")
        for (index, *_), (weights, source, target, title) in zip(items, figures if not args.grid else []):
            plot_alignment(weights, source, target, args.out / f"alignment_{index}.{args.format}", title)
    except (DataError, ValueError, OSError) as error:
        sys.exit(f"rnnsearch-heatmaps: error: {error}")
    print(f"| wrote {len(items)} alignment{'s' if len(items) != 1 else ''} to {args.out}")


def encode_words(model: RNNSearchHubInterface, words: list[str], target: bool) -> tuple[torch.Tensor, list[int]]:
    """Token ids of the gold words, each tokenised and subword-encoded on its own (+ </s>),
    and the gold word of each piece."""
    pieces, groups = [], []
    for index, word in enumerate(words):
        encoded = model.apply_bpe(model.tokenize(word)).split()
        pieces += encoded
        groups += [index] * len(encoded)
    dictionary = model.tgt_dict if target else model.src_dict
    return dictionary.encode_line(" ".join(pieces), add_if_not_exist=False).long(), groups


def gold_links(model: RNNSearchHubInterface, english: list[str], french: list[str], threshold: float) -> dict[str, dict[int, set]]:
    """Predicted links of every gold sentence pair (1-based ids), by method."""
    encoded = [(encode_words(model, e.split(), False), encode_words(model, f.split(), True)) for e, f in zip(english, french)]
    forced = model.forced([source for (source, _), _ in encoded], [target for _, (target, _) in encoded])
    links: dict[str, dict[int, set]] = {"argmax": {}, f"threshold {threshold}": {}, "diagonal": {}}
    for number, (e, f, ((_, source_groups), (_, target_groups)), (_, weights)) in enumerate(zip(english, french, encoded, forced), 1):
        # F x E: </s> (the last row and column) left out
        words = merge_groups(weights.numpy()[: len(target_groups), : len(source_groups)], target_groups, source_groups,
                             len(f.split()), len(e.split()))
        links["argmax"][number] = aer.argmax_links(words)
        links[f"threshold {threshold}"][number] = aer.threshold_links(words, threshold)
        links["diagonal"][number] = aer.diagonal_links(words.shape[1], words.shape[0])
    return links


def aer_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rnnsearch-aer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, required=True, help="checkpoint of an rnnsearch model")
    parser.add_argument("--data", type=Path, required=True, help="the fairseq-binarized folder the model was trained on")
    parser.add_argument("--gold", type=Path, required=True, help="folder with dev.e, dev.f, dev.wa.nonullalign")
    parser.add_argument("--threshold", type=float, default=0.3, help="thresholded links: weight >= this")
    parser.add_argument("--out", type=Path, help="write aer.md and aer.json here")
    args = parser.parse_args(argv)
    try:
        gold = aer.read_gold(args.gold / "dev.wa.nonullalign")
        english, french = read_lines(args.gold / "dev.e"), read_lines(args.gold / "dev.f")
        if len(english) != len(french) or len(english) != len(gold):
            raise DataError(f"{args.gold}: dev.e, dev.f and the gold links cover {len(english)}, {len(french)}, {len(gold)} sentences")
        links = gold_links(load(args.path, args.data), english, french, args.threshold)
        scores = {method: aer.alignment_error_rate(predicted, gold) for method, predicted in links.items()}
    except (DataError, ValueError, OSError) as error:
        sys.exit(f"rnnsearch-aer: error: {error}")
    table = markdown_table(["links", "precision", "recall", "AER"],
                           [[m, *(f"{s[key]:.3f}" for key in ("precision", "recall", "aer"))] for m, s in scores.items()])
    print("\n".join(table))
    if args.out:
        write_atomic(args.out / "aer.md", [f"# Alignment error rate, {len(gold)} sentences of {args.gold}, {args.path}", "", *table])
        write_atomic(args.out / "aer.json", [json.dumps(scores, indent=2)])
