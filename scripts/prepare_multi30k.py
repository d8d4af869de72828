#!/usr/bin/env python3
"""Prepare Multi30k En->Fr (task 1) for fairseq: raw text -> sentencepiece -> binarized data.

    python scripts/prepare_multi30k.py --out work/multi30k [--local-dir DIR] [--vocab-size 8000]

Files come from the dataset's official repository (github.com/multi30k/dataset,
data/task1/raw) unless --local-dir (or $MULTI30K_DIR) names a folder that holds
{train,val,test_2016_flickr,test_2017_flickr}.{en,fr}[.gz]. Nothing is written into that folder.

Output under --out: raw/ (plain text, the references for sacreBLEU), spm/ (the sentencepiece
model and encoded text), bin/ (fairseq-preprocess output: train, valid = val,
test = test_2016_flickr, test1 = test_2017_flickr) and manifest.json. Each step writes to a
temporary name and renames when complete, so a rerun redoes only unfinished steps.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}.gz"
SPLITS = {"train": "train", "valid": "val", "test": "test_2016_flickr", "test1": "test_2017_flickr"}
LANGS = ("en", "fr")


def fail(message: str) -> None:
    sys.exit(f"prepare_multi30k: error: {message}")


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
            return handle.read().splitlines()
    except UnicodeDecodeError as error:
        fail(f"{path} is not valid UTF-8 ({error}); fix or re-download it")


def fetch(name: str, local_dir: Path | None, workdir: Path) -> Path:
    """The path of ``name`` (e.g. 'train.en'), from the local folder or downloaded."""
    if local_dir is not None:
        for candidate in (local_dir / f"{name}.gz", local_dir / name):
            if candidate.exists():
                return candidate
        fail(f"{name}[.gz] not found in {local_dir}; point --local-dir at the Multi30k raw files")
    target = workdir / "download" / f"{name}.gz"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        print(f"| downloading {URL.format(name=name)}", flush=True)
        try:
            urllib.request.urlretrieve(URL.format(name=name), f"{target}.part")
        except OSError as error:
            fail(f"download of {name} failed ({error}); use --local-dir with the files instead")
        os.replace(f"{target}.part", target)
    return target


def console_script(name: str) -> str:
    """A console script of this Python's environment, also when it is not activated."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def write_atomic(path: Path, lines: list[str]) -> None:
    temporary = path.with_name(path.name + ".part")
    temporary.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(temporary, path)


def extract_raw(args: argparse.Namespace, raw: Path) -> dict[str, int]:
    """raw/{split}.{lang}: checked for equal line counts and no empty lines."""
    raw.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, name in SPLITS.items():
        pair = {lang: read_lines(fetch(f"{name}.{lang}", args.local_dir, args.out)) for lang in LANGS}
        if len(pair["en"]) != len(pair["fr"]):
            fail(f"{name}: {len(pair['en'])} English vs {len(pair['fr'])} French lines; the corpus is misaligned")
        if split == "train" and args.train_lines:
            pair = {lang: lines[: args.train_lines] for lang, lines in pair.items()}
        empty = [i + 1 for i, pair_ in enumerate(zip(*pair.values())) if not all(s.strip() for s in pair_)]
        if empty:
            fail(f"{name}: empty sentence on line(s) {empty[:5]}; remove those pairs first")
        for lang, lines in pair.items():
            write_atomic(raw / f"{split}.{lang}", lines)
        counts[split] = len(pair["en"])
    return counts


def train_sentencepiece(args: argparse.Namespace, raw: Path, spm_dir: Path) -> Path:
    import sentencepiece

    model = spm_dir / "spm.model"
    if model.exists():
        return model
    spm_dir.mkdir(parents=True, exist_ok=True)
    prefix = spm_dir / "spm.part"
    sentencepiece.SentencePieceTrainer.train(
        input=[str(raw / f"train.{lang}") for lang in LANGS],
        model_prefix=str(prefix),
        vocab_size=args.vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        num_threads=os.cpu_count() or 1,
        minloglevel=2,
    )
    os.replace(f"{prefix}.vocab", spm_dir / "spm.vocab")
    os.replace(f"{prefix}.model", model)
    return model


def encode(model: Path, raw: Path, spm_dir: Path) -> None:
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
    for split in SPLITS:
        for lang in LANGS:
            lines = (raw / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            pieces = processor.encode(lines, out_type=str)
            write_atomic(spm_dir / f"{split}.{lang}", [" ".join(p) for p in pieces])


def binarize(spm_dir: Path, bin_dir: Path, workers: int) -> None:
    if (bin_dir / "preprocess.done").exists():
        return
    temporary = bin_dir.with_name(bin_dir.name + ".part")
    shutil.rmtree(temporary, ignore_errors=True)
    command = [
        console_script("fairseq-preprocess"), "--source-lang", "en", "--target-lang", "fr",
        "--trainpref", str(spm_dir / "train"), "--validpref", str(spm_dir / "valid"),
        "--testpref", f"{spm_dir / 'test'},{spm_dir / 'test1'}",
        "--destdir", str(temporary), "--workers", str(workers),
    ]
    print("| " + " ".join(command), flush=True)
    subprocess.run(command, check=True)
    (temporary / "preprocess.done").touch()
    shutil.rmtree(bin_dir, ignore_errors=True)
    os.replace(temporary, bin_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--local-dir", type=Path, default=os.environ.get("MULTI30K_DIR") or None,
        help="folder with the raw files (default: $MULTI30K_DIR, else download)",
    )
    parser.add_argument("--vocab-size", type=int, default=8000, help="joint sentencepiece vocabulary")
    parser.add_argument("--train-lines", type=int, default=0, help="use only the first N training pairs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if args.local_dir is not None and not Path(args.local_dir).is_dir():
        fail(f"--local-dir {args.local_dir} is not a folder")
    args.local_dir = Path(args.local_dir) if args.local_dir else None
    raw, spm_dir, bin_dir = args.out / "raw", args.out / "spm", args.out / "bin"
    counts = extract_raw(args, raw)
    model = train_sentencepiece(args, raw, spm_dir)
    encode(model, raw, spm_dir)
    binarize(spm_dir, bin_dir, args.workers)
    manifest = {
        "corpus": "multi30k", "pair": "en-fr", "scheme": "spm", "vocab_size": args.vocab_size,
        "pairs": counts, "splits": SPLITS, "sentencepiece_model": str(model),
    }
    write_atomic(args.out / "manifest.json", [json.dumps(manifest, indent=2)])
    print(f"| prepared {args.out}: {counts}", flush=True)


if __name__ == "__main__":
    main()
