#!/usr/bin/env python3
"""Prepare a parallel corpus for fairseq, En->Fr: raw text -> scheme -> binarized data.

    python scripts/prepare_data.py CORPUS --scheme {word,bpe,spm} --out DIR [--local-dir DIR]

CORPUS (downloaded from the official locations into OUT/download, or read from --local-dir /
$CORPUS_DIR, a folder of already-downloaded files; --mirror replaces the official host):
  multi30k  the official repository's raw files ({train,val,test_2016_flickr,test_2017_flickr}.{en,fr}.gz)
  hansards  hansard.36.{1,2}.house.{en,fr}[.gz] as in ../shared/data/hansards (local only), cleaned and split
  wmt14     dev = newstest2012+2013 (dev.tgz), test = newstest2014 (test-full.tgz); training data:
            --wmt14-train selected (the paper's 348M-word bitext, bitexts.tgz) or full (the five
            WMT'14 corpora); the folder may hold the archives, or plain newstest201[234].{en,fr}[.gz]
            and train.{en,fr}[.gz]
Schemes: word (Moses tokens, --shortlist most frequent words, --max-len 30/50 training
filter), bpe (subword-nmt on Moses tokens, --bpe-merges, --bpe-separate), spm (sentencepiece
on raw text, --vocab-size, --spm-type). Output layout: rnnsearch_plugin/data/pipeline.py.
Idempotent: finished steps are skipped; rerun after an interruption.
"""
import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rnnsearch_plugin.data.corpora import CORPORA  # noqa: E402
from rnnsearch_plugin.data.pipeline import prepare  # noqa: E402
from rnnsearch_plugin.data.schemes import BPEScheme, SentencePieceScheme, WordScheme  # noqa: E402
from rnnsearch_plugin.data.textio import DataError  # noqa: E402

CORPUS_OPTIONS = {"hansards": lambda args: {"held_out": args.held_out}, "wmt14": lambda args: {"train": args.wmt14_train}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=sorted(CORPORA))
    parser.add_argument("--scheme", choices=["word", "bpe", "spm"], default="spm")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--local-dir", type=Path, help="folder with the raw files (default: $CORPUS_DIR, else download)")
    parser.add_argument("--mirror", help="download from this URL prefix instead of each file's official location")
    parser.add_argument("--wmt14-train", choices=["selected", "full"], default="selected",
                        help="wmt14: the paper's selected bitext or all five WMT'14 parallel corpora")
    parser.add_argument("--train-lines", type=int, default=0, help="use only the first N training pairs")
    parser.add_argument("--shortlist", type=int, default=30000, help="word scheme: words kept per language")
    parser.add_argument("--max-len", type=int, default=0, help="drop training pairs longer than N tokens (30, 50)")
    parser.add_argument("--bpe-merges", type=int, default=32000)
    parser.add_argument("--bpe-separate", action="store_true", help="one BPE model per language")
    parser.add_argument("--vocab-size", type=int, default=8000, help="spm vocabulary (joint)")
    parser.add_argument("--spm-type", choices=["unigram", "bpe"], default="unigram")
    parser.add_argument("--held-out", type=int, default=3000, help="hansards: pairs in dev and in test")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    local_dir = args.local_dir or os.environ.get(f"{args.corpus.upper()}_DIR")
    if local_dir and not Path(local_dir).is_dir():
        sys.exit(f"prepare_data: error: {local_dir} is not a folder")
    scheme = {
        "word": lambda: WordScheme(args.workers),
        "bpe": lambda: BPEScheme(args.bpe_merges, not args.bpe_separate, args.workers),
        "spm": lambda: SentencePieceScheme(args.vocab_size, args.spm_type, args.workers),
    }[args.scheme]()
    try:
        manifest = prepare(args.corpus, scheme, args.out, Path(local_dir) if local_dir else None, args.train_lines,
                           args.shortlist if args.scheme == "word" else 0, args.max_len, args.workers, args.mirror,
                           **CORPUS_OPTIONS.get(args.corpus, lambda a: {})(args))
    except DataError as error:
        sys.exit(f"prepare_data: error: {error}")
    print(f"| prepared {args.out}: pairs {manifest['pairs']}, dropped {manifest['dropped_in_cleaning']}, "
          f"{manifest['dropped_by_length']} training pairs over --max-len, vocabulary {manifest['vocabulary']}")


if __name__ == "__main__":
    main()
