#!/usr/bin/env python3
"""Prepare a parallel corpus for fairseq, any language pair: raw text -> scheme -> binarized data.

    python scripts/prepare_data.py CORPUS --scheme {word,bpe,spm} --out DIR [--local-dir DIR]
        [--source-lang SRC --target-lang TGT]
    python scripts/prepare_data.py text --source-lang SRC --target-lang TGT --train PREFIX
        [--valid PREFIX] [--test PREFIX[,PREFIX...]] --out DIR        (or --tsv FILE for --train)

CORPUS (downloaded from the official locations into OUT/download, or read from --local-dir /
$CORPUS_DIR, a folder of already-downloaded files; --mirror replaces the official host):
  multi30k  the official repository's raw files ({train,val,test_2016_flickr,test_2017_flickr}.{en,fr}.gz)
  hansards  hansard.36.{1,2}.house.{en,fr}[.gz] as in ../shared/data/hansards (local only), cleaned and split
  wmt14     dev = newstest2012+2013 (dev.tgz), test = newstest2014 (test-full.tgz); training data:
            --wmt14-train selected (the paper's 348M-word bitext, bitexts.tgz) or full (the five
            WMT'14 corpora); the folder may hold the archives, or plain newstest201[234].{en,fr}[.gz]
            and train.{en,fr}[.gz]
  text      your own corpus, any pair: PREFIX.SRC / PREFIX.TGT (gzipped or not), or a tab-separated
            file of pairs (--tsv); cleaned (empty pairs and duplicates dropped; --max-ratio,
            --max-words); without --valid / --test, --held-out pairs each held out by hash
The named corpora are En-Fr, En->Fr by default; --source-lang fr --target-lang en reverses them.
Schemes: word (Moses tokens, --shortlist most frequent words, --max-len 30/50 training
filter), bpe (subword-nmt on Moses tokens, --bpe-merges, --bpe-separate), spm (sentencepiece
on raw text, --vocab-size, --spm-type). Output layout: rnnsearch_plugin/data/pipeline.py.
Idempotent: finished steps are skipped; rerun after an interruption.
Guided alignment (not the paper's; docs/training.md): prepare with --scheme word, align
OUT/word/train.SRC with OUT/word/train.TGT (Pharaoh i-j lines, e.g. eflomal or fast_align), then
run the same command again with --train-alignments FILE: it checks the file against those pairs and
binarises it as OUT/bin/train.align.SRC-TGT, which fairseq-train reads with --load-alignments.
Or, with any scheme, --eflomal: eflomal links the training pairs' words itself, and the links are
projected onto the scheme's pieces (rnnsearch_plugin/data/word_links.py).
"""

import argparse
import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rnnsearch_plugin.data.cleaning import Cleaning  # noqa: E402
from rnnsearch_plugin.data.corpora import CORPORA, LANGUAGES  # noqa: E402
from rnnsearch_plugin.data.pipeline import prepare  # noqa: E402
from rnnsearch_plugin.data.schemes import BPE, SCHEMES, SPM, WORD, BPEScheme, SentencePieceScheme, WordScheme  # noqa: E402
from rnnsearch_plugin.data.textio import DataError  # noqa: E402

CORPUS_OPTIONS = {
    "hansards": lambda args: {"held_out": 3000 if args.held_out is None else args.held_out},
    "wmt14": lambda args: {"train": args.wmt14_train},
    "text": lambda args: {
        "train": args.train,
        "tsv": args.tsv,
        "tsv_columns": args.tsv_columns,
        "valid": args.valid,
        "test": tuple(args.test.split(",")) if args.test else (),
        "cleaning": Cleaning(args.max_words, args.max_ratio, args.keep_duplicates),
        "held_out": 1000 if args.held_out is None else args.held_out,
    },
}


def columns(text: str) -> tuple[int, int]:
    """--tsv-columns S,T: two different 1-based column numbers."""
    try:
        source, target = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not two column numbers such as 1,2") from None
    if min(source, target) < 1 or source == target:
        raise argparse.ArgumentTypeError(f"{text!r}: two different column numbers, counted from 1")
    return source, target


def language_pair(args: argparse.Namespace) -> tuple[str, str]:
    """(source, target) as given; a named corpus's default direction, or its reverse when one of
    them is given; text needs both."""
    if args.corpus == "text" and not (args.source_lang and args.target_lang):
        raise DataError("text needs --source-lang and --target-lang (the suffixes of its files, e.g. de and en)")
    default = LANGUAGES.get(args.corpus, (args.source_lang, args.target_lang))
    other = {default[0]: default[1], default[1]: default[0]}
    source = args.source_lang or other.get(args.target_lang, default[0])
    target = args.target_lang or other.get(source, default[1])
    if source == target:
        raise DataError(f"--source-lang and --target-lang are both {source}: a pair needs two languages")
    return source, target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=sorted(CORPORA))
    parser.add_argument("--scheme", choices=SCHEMES, default=SPM)
    parser.add_argument("-s", "--source-lang", help="source language (default: the corpus's, en for the named ones)")
    parser.add_argument("-t", "--target-lang", help="target language (default: the corpus's, fr for the named ones)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--local-dir", type=Path, help="folder with the raw files (default: $CORPUS_DIR, else download)")
    parser.add_argument("--mirror", help="download from this URL prefix instead of each file's official location")
    parser.add_argument(
        "--wmt14-train",
        choices=["selected", "full"],
        default="selected",
        help="wmt14: the paper's selected bitext or all five WMT'14 parallel corpora",
    )
    parser.add_argument("--train-lines", type=int, default=0, help="use only the first N training pairs")
    parser.add_argument("--shortlist", type=int, default=30000, help="word scheme: words kept per language")
    parser.add_argument("--max-len", type=int, default=0, help="drop training pairs longer than N tokens (30, 50)")
    parser.add_argument("--bpe-merges", type=int, default=32000)
    parser.add_argument("--bpe-separate", action="store_true", help="one BPE model per language")
    parser.add_argument("--vocab-size", type=int, default=8000, help="spm vocabulary (joint)")
    parser.add_argument("--spm-type", choices=["unigram", "bpe"], default="unigram")
    parser.add_argument(
        "--held-out",
        type=int,
        help="hansards and text without --valid/--test: pairs held out "
        "for dev and for test each (default 3000 for hansards, 1000 for text)",
    )
    own = parser.add_argument_group("text: your own corpus")
    own.add_argument("--train", metavar="PREFIX", help="training pairs PREFIX.SRC and PREFIX.TGT (gzipped or not)")
    own.add_argument("--tsv", type=Path, metavar="FILE", help="training pairs as a tab-separated file instead of --train")
    own.add_argument(
        "--tsv-columns",
        type=columns,
        default=(1, 2),
        metavar="S,T",
        help="the source and target columns of --tsv, from 1 (default 1,2; others are ignored)",
    )
    own.add_argument("--valid", metavar="PREFIX", help="dev pairs (default: held out of the training pairs)")
    own.add_argument("--test", metavar="PREFIX[,PREFIX...]", help="test sets: test, test1, ... (default: held out)")
    own.add_argument(
        "--max-ratio",
        type=float,
        default=0.0,
        help="drop training pairs one side of which is over N times as long as the other (default 0: keep)",
    )
    own.add_argument(
        "--max-words",
        type=int,
        default=0,
        help="drop training pairs with a side over N words, or characters for Chinese, Japanese, Thai "
        "(default 0: keep; --max-len limits tokens after the scheme)",
    )
    own.add_argument("--keep-duplicates", action="store_true", help="keep repeated training pairs (default: drop)")
    parser.add_argument(
        "--train-alignments",
        type=Path,
        metavar="FILE",
        help="word scheme: Pharaoh alignments (0-based i-j) of OUT/word/train.SRC and train.TGT, line for "
        "line, binarised for fairseq-train --load-alignments",
    )
    parser.add_argument(
        "--eflomal",
        action="store_true",
        help="link the training pairs' words with eflomal (both directions, grow-diag-final-and), projected onto "
        "the scheme's pieces and binarised for fairseq-train --load-alignments (an alignment head's links)",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    local_dir = args.local_dir or os.environ.get(f"{args.corpus.upper()}_DIR")
    if local_dir and not Path(local_dir).is_dir():
        sys.exit(f"prepare_data: error: {local_dir} is not a folder")
    scheme = {
        WORD: lambda: WordScheme(args.workers),
        BPE: lambda: BPEScheme(args.bpe_merges, not args.bpe_separate, args.workers),
        SPM: lambda: SentencePieceScheme(args.vocab_size, args.spm_type, args.workers),
    }[args.scheme]()
    try:
        langs = language_pair(args)
        scheme.use_languages(langs)
        manifest = prepare(
            args.corpus,
            scheme,
            args.out,
            langs,
            Path(local_dir) if local_dir else None,
            args.train_lines,
            args.shortlist if args.scheme == WORD else 0,
            args.max_len,
            args.workers,
            args.mirror,
            args.train_alignments,
            args.eflomal,
            **CORPUS_OPTIONS.get(args.corpus, lambda a: {})(args),
        )
    except DataError as error:
        sys.exit(f"prepare_data: error: {error}")
    print(
        f"| prepared {args.out} ({langs[0]}->{langs[1]}): pairs {manifest['pairs']}, dropped {manifest['dropped_in_cleaning']}, "
        f"{manifest['dropped_by_length']} training pairs over --max-len, vocabulary {manifest['vocabulary']}"
    )
    if "train_alignments" in manifest:
        aligned = manifest["train_alignments"]
        print(f"| alignments: {aligned['links']} links in {aligned['pairs_with_links']} training pairs, {aligned['fairseq_split']}")


if __name__ == "__main__":
    main()
    # Every file is closed: spare the exit its last collection, a walk over the millions of objects that
    # importing fairseq made (0.7 s, as long as the smallest corpora's counts and report).
    gc.freeze()
