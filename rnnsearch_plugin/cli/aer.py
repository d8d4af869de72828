"""rnnsearch-aer: the alignment error rate of a trained RNNsearch's soft alignments.

    rnnsearch-aer --path CKPT --data DATA/bin --gold ../shared/data/alignment-gold [--threshold 0.3] --out DIR

AER (Och & Ney 2003) against the Hansards gold standard: the gold French is force-decoded given
the English, the first word of each sentence given back the capital the gold set took from it
(where the model's dictionary has the capitalised word), each gold word encoded on its own so
that every piece maps to one gold word; piece weights become word weights (source pieces
summed, target pieces averaged, </s> left out), and links are each French word's most-attended
English word (argmax) or, in addition, every word pair with weight >= --threshold. The diagonal
alignment is reported beside them as a baseline.
"""
import argparse
import json
import sys
from pathlib import Path

import torch

from ..analysis import aer
from ..analysis.alignment import merge_groups
from ..analysis.markdown import markdown_table
from ..data.textio import DataError, read_lines, write_atomic
from ..hub import USER_ERRORS, RNNSearchHubInterface, load

GOLD_PAIR = ("en", "fr")  # the Hansards gold standard: English dev.e, French dev.f


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


def gold_links(model: RNNSearchHubInterface, english: list[str], french: list[str], threshold: float) -> dict[str, dict[int, set]]:
    """Predicted links of every gold sentence pair (1-based ids), by method."""
    encoded = [(encode_words(model, initial_capital(model, e.split(), False), False),
                encode_words(model, initial_capital(model, f.split(), True), True)) for e, f in zip(english, french)]
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


def main(argv: list[str] | None = None) -> None:
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
        model = load(args.path, args.data)
        pair = (model.cfg.task.source_lang, model.cfg.task.target_lang)
        if pair != GOLD_PAIR:
            raise DataError(f"the gold standard aligns {GOLD_PAIR[0]} (dev.e) with {GOLD_PAIR[1]} (dev.f), but {args.path} "
                            f"translates {pair[0]}->{pair[1]}: give an {GOLD_PAIR[0]}->{GOLD_PAIR[1]} model")
        links = gold_links(model, english, french, args.threshold)
        scores = {method: aer.alignment_error_rate(predicted, gold) for method, predicted in links.items()}
    except USER_ERRORS as error:
        sys.exit(f"rnnsearch-aer: error: {error}")
    table = markdown_table(["links", "precision", "recall", "AER"],
                           [[m, *(f"{s[key]:.3f}" for key in ("precision", "recall", "aer"))] for m, s in scores.items()])
    print("\n".join(table))
    if args.out:
        write_atomic(args.out / "aer.md", [f"# Alignment error rate, {len(gold)} sentences of {args.gold}, {args.path}", "", *table])
        write_atomic(args.out / "aer.json", [json.dumps(scores, indent=2)])
