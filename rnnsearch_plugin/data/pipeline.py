"""The steps from raw text to fairseq-binarized data, each skipped when already complete, for
a language pair ``langs`` = (source, target), e.g. ("en", "fr"):

    OUT/raw/{split}.{src,tgt}      raw text (the references for sacreBLEU), report.json
    OUT/{scheme}/...               the scheme's model and the encoded text
    OUT/bin/                       fairseq's binarized data ({split}.{src}-{tgt}.*, dict.{lang}.txt) as
                                   fairseq-preprocess writes it (``binarise.py``), binarised.json
    OUT/word/train.align, OUT/bin/train.align.{src}-{tgt}.*   with ``train_alignments``: the
                                   training pairs' word alignments, checked and binarised (``alignments.py``);
                                   with ``eflomal``, OUT/{scheme}/train.align: eflomal's, on the pieces (``word_links.py``)
    OUT/manifest.json              corpus, languages, scheme, sizes, vocabularies, <unk> counts, commands

Every step writes under a temporary name and renames when complete, so an interrupted run
leaves nothing that a rerun mistakes for finished output.
"""

import json
import multiprocessing
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from functools import partial
from itertools import islice
from pathlib import Path
from typing import IO, Any, Optional

from fairseq.data import Dictionary

from .alignments import binarised_entry, binarize_alignments, checked_alignments
from .binarise import binarise_language
from .commands import console_script
from .corpora import CORPORA, Splits
from .languages import DEFAULT_PAIR
from .schemes import Scheme
from .sources import ParallelText, Sources, TextFile
from .textio import AtomicFiles, DataError, complete_lines, lines_of, out_of_space, read_lines, write_atomic
from .word_links import SYMMETRISATION, aligned_pieces


def create_out(out: Path) -> None:
    """OUT and the folders above it, created if need be; DataError (one line) naming why OUT cannot be."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        blocking = next(folder for folder in (out, *out.parents) if folder.exists())
        reason = error.strerror if blocking.is_dir() else f"{blocking} is a file"
        raise DataError(f"cannot create {out} ({reason}): give --out a folder that can be created and written to") from None


def raw_splits(corpus: str, out: Path, sources: Sources, langs: tuple[str, str], train_lines: int, **options: Any) -> dict[str, Any]:
    """OUT/raw: the corpus's splits as plain text, with what was dropped and why and where
    each file came from (URL or local path, SHA-256)."""
    raw = out / "raw"
    report_path = raw / "report.json"
    if report_path.exists():
        report = json.loads(report_path.read_text())
        prepared = tuple(report.get("langs", DEFAULT_PAIR))  # a manifest naming no pair: En->Fr
        if prepared != langs:
            raise DataError(
                f"{out} holds {corpus} prepared {prepared[0]}->{prepared[1]}, not {langs[0]}->{langs[1]}: "
                "prepare the other direction into another --out"
            )
        return report
    print(f"| reading {corpus}", flush=True)
    try:
        splits, dropped = CORPORA[corpus](sources, langs, **options)
        pairs = write_raw(corpus, raw, splits, langs, train_lines)
    except OSError as error:  # a full disk under the readers' temporary files
        raise out_of_space(out, error) from None
    report = {"langs": list(langs), "pairs": pairs, "dropped": dict(dropped), "sources": sources.origins}
    write_atomic(report_path, [json.dumps(report, indent=2)])
    return report


def write_raw(corpus: str, raw: Path, splits: Splits, langs: tuple[str, str], train_lines: int) -> dict[str, int]:
    """OUT/raw/{split}.{lang}, each split's pairs in the order of ``langs``, training's first
    ``train_lines`` (0: all; the rest is still read, for the counts of what was dropped); every
    file renamed into place only once all are written and no pair has an empty side (the
    Hansards and text readers drop and count empty training pairs themselves). The pairs written
    per split."""
    pairs, empty = dict.fromkeys(splits, 0), dict.fromkeys(splits, 0)
    with ExitStack() as files:
        for split, (sides, stream) in splits.items():
            order = [sides.index(lang) for lang in langs]
            out = files.enter_context(AtomicFiles([raw / f"{split}.{lang}" for lang in langs]))
            stream = iter(stream)
            for pair in islice(stream, train_lines or None) if split == "train" else stream:
                row = [pair[side] for side in order]
                out.write(row)
                pairs[split] += 1
                empty[split] += not all(side.strip() for side in row)
            deque(stream, maxlen=0)
        if any(empty.values()):  # raised within: no file of the stage is kept
            raise DataError(f"empty sentences in {corpus} ({empty}); remove those pairs from the raw files first")
    return pairs


def raw_text(out: Path, split: str, lang: str) -> TextFile:
    return TextFile(out / "raw" / f"{split}.{lang}")


def encode(scheme: Scheme, out: Path, splits: list[str], langs: tuple[str, str], max_len: int) -> None:
    """OUT/{scheme}/{split}.{lang}, each language encoded in turn (so that the scheme's workers are
    the only ones running), and both files renamed into place together; training pairs longer than
    ``max_len`` tokens are dropped (``length_filtered``)."""
    folder = out / scheme.name
    folder.mkdir(parents=True, exist_ok=True)
    train = {lang: raw_text(out, "train", lang) for lang in langs}
    print(f"| learning the {scheme.name} scheme on {complete_lines(train[langs[0]].path)} training pairs", flush=True)
    scheme.learn(train, folder)
    for split in splits:
        if all((folder / f"{split}.{lang}").exists() for lang in langs):
            continue
        print(f"| encoding {split} ({scheme.name})", flush=True)
        with AtomicFiles([folder / f"{split}.{lang}" for lang in langs]) as files:
            if split == "train" and max_len:
                for pair in length_filtered(scheme, out, langs, folder, max_len):
                    files.write(pair)
            else:  # an encoded line is never more than one: the files end line-aligned
                for column, lang in enumerate(langs):
                    files.write_column(column, scheme.encode(raw_text(out, split, lang), lang))


def length_filtered(scheme: Scheme, out: Path, langs: tuple[str, str], folder: Path, max_len: int) -> Iterator[tuple[str, str]]:
    """The training pairs encoded, each language into a temporary file, then paired: those of at
    most ``max_len`` tokens on each side."""
    with ExitStack() as stack:
        sides = [stack.enter_context(encoded_side(scheme, raw_text(out, "train", lang), lang, folder)) for lang in langs]
        names = (f"{folder}/train.{langs[0]} (encoded)", f"{folder}/train.{langs[1]} (encoded)")
        for pair in ParallelText(names, (lines_of(sides[0], names[0]), lines_of(sides[1], names[1]))):
            if max(len(side.split()) for side in pair) <= max_len:
                yield pair


@contextmanager
def encoded_side(scheme: Scheme, text: TextFile, lang: str, folder: Path) -> Iterator[IO[bytes]]:
    """``text`` encoded into a temporary file of ``folder`` (which the system removes whatever
    happens), open for reading from its start."""
    with tempfile.TemporaryFile(dir=folder) as encoded:
        for line in scheme.encode(text, lang):
            encoded.write(line.encode("utf-8") + b"\n")
        encoded.seek(0)
        yield encoded  # type: ignore[misc]


def preprocess_command(langs: tuple[str, str], workers: int) -> list[str]:
    """fairseq-preprocess for the pair (source, target), before its files and folders."""
    return [console_script("fairseq-preprocess"), "--source-lang", langs[0], "--target-lang", langs[1], "--workers", str(workers)]


def binarize(
    out: Path, scheme: str, splits: list[str], langs: tuple[str, str], shortlist: int, workers: int
) -> dict[str, dict[str, dict[str, int]]]:
    """OUT/bin (``binarise.py``), written into OUT/bin.part and renamed when complete, with
    ``binarised.json``: the tokens per split and language, and how many are <unk>; a shortlist keeps
    the N most frequent words per language. The languages are binarised in a process each where
    ``workers`` allows (forked, so that nothing is imported again)."""
    bin_dir, part = out / "bin", out / "bin.part"
    counts_path = bin_dir / "binarised.json"
    if counts_path.exists():
        return json.loads(counts_path.read_text())
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir()
    binarised = [name for name in splits if name in ("train", "valid") or name.startswith("test")]
    processes = min(workers, len(langs))
    print(f"| binarising {scheme}/{{{','.join(binarised)}}}.{{{','.join(langs)}}} in {processes} process(es)", flush=True)
    pair = f"{langs[0]}-{langs[1]}"
    language = partial(binarise_language, out / scheme, splits=binarised, out=part, pair=pair, shortlist=shortlist)
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for lang, written in zip(langs, each_language(language, langs, processes)):
        for split, figures in written.items():
            print(
                f"| binarised {split}.{lang}: {figures.sentences:,} sentences, {figures.tokens:,} tokens, {figures.unknown:,} <unk>",
                flush=True,
            )
            counts.setdefault(split, {})[lang] = {"tokens": figures.tokens, "unk": figures.unknown}
    write_atomic(part / counts_path.name, [json.dumps(counts, indent=2)])
    shutil.rmtree(bin_dir, ignore_errors=True)
    os.replace(part, bin_dir)
    return counts


def each_language(function: Callable[[str], Any], langs: tuple[str, str], processes: int) -> list[Any]:
    """``function`` of each language, in ``processes`` forked processes (more than one), else in turn here."""
    if processes < 2:
        return [function(lang) for lang in langs]
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(function, langs))


def preprocess_equivalent(out: Path, scheme: str, splits: list[str], langs: tuple[str, str], shortlist: int, workers: int) -> list[str]:
    """The fairseq-preprocess command that writes the same OUT/bin as ``binarize``, for the manifest."""
    folder = out / scheme
    command = [*preprocess_command(langs, workers), "--trainpref", str(folder / "train"), "--destdir", str(out / "bin")]
    prefixes = {"valid": "--validpref", "test": "--testpref"}
    for split, option in prefixes.items():
        names = [s for s in splits if s == split or (split == "test" and s.startswith("test"))]
        if names:
            command += [option, ",".join(str(folder / name) for name in sorted(names))]
    if shortlist:  # N words + fairseq's 4 special symbols, no padding entries
        command += ["--nwordssrc", str(shortlist + 4), "--nwordstgt", str(shortlist + 4), "--padding-factor", "1"]
    return command


def statistical_links(out: Path, scheme: str, langs: tuple[str, str]) -> list[str]:
    """eflomal's links of OUT/{scheme}/train.{src,tgt}, on their pieces; those of an earlier run
    (OUT/{scheme}/train.align, written once binarised) are kept, so that a rerun redoes nothing."""
    done = out / scheme / "train.align"
    if done.exists() and (out / "bin" / f"train.align.{langs[0]}-{langs[1]}.idx").exists():
        return read_lines(done)
    sides = [read_lines(out / scheme / f"train.{lang}") for lang in langs]
    print(f"| linking the {len(sides[0])} training pairs' words with eflomal, both directions ({SYMMETRISATION})", flush=True)
    return list(aligned_pieces(*sides, scheme))


def prepare(
    corpus: str,
    scheme: Scheme,
    out: Path,
    langs: tuple[str, str] = DEFAULT_PAIR,
    local_dir: Optional[Path] = None,
    train_lines: int = 0,
    shortlist: int = 0,
    max_len: int = 0,
    workers: int = os.cpu_count() or 1,
    mirror: Optional[str] = None,
    train_alignments: Optional[Path] = None,
    eflomal: bool = False,
    **corpus_options: Any,
) -> dict[str, Any]:
    """Run every step (see the module's docstring) for ``langs`` = (source, target); downloads go
    to OUT/download (through ``mirror`` when given); ``corpus_options`` go to the corpus reader.
    ``train_alignments``: a Pharaoh file aligning OUT/word/train.{src,tgt}, checked before
    anything is written; ``eflomal``: the training pairs' links by eflomal instead, on the scheme's
    pieces (``word_links.py``)."""
    if eflomal and train_alignments:
        raise DataError("--eflomal links the training pairs itself: give it or --train-alignments FILE, not both")
    create_out(out)
    alignments = checked_alignments(train_alignments, out, scheme.name, langs) if train_alignments else None
    report = raw_splits(corpus, out, Sources(local_dir, out / "download", mirror), langs, train_lines, **corpus_options)
    splits = list(report["pairs"])
    try:
        encode(scheme, out, splits, langs, max_len)
        unknown = binarize(out, scheme.name, splits, langs, shortlist, workers)
    except OSError as error:  # a full disk under the encoded sides' temporary files or OUT/bin.part
        raise out_of_space(out, error) from None
    source, target = langs
    print("| writing the manifest", flush=True)
    pairs = {split: complete_lines(out / scheme.name / f"{split}.{source}") for split in splits}
    manifest = {
        "corpus": corpus,
        "source_lang": source,
        "target_lang": target,
        "scheme": scheme.name,
        "sources": report["sources"],
        "pairs": pairs,
        "dropped_in_cleaning": report["dropped"],
        "max_len": max_len,
        "dropped_by_length": report["pairs"]["train"] - pairs["train"],
        "shortlist": shortlist,
        **scheme.manifest_entries(),
        "vocabulary": {lang: len(Dictionary.load(str(out / "bin" / f"dict.{lang}.txt"))) for lang in langs},
        "unknown": unknown,
        "fairseq_splits": {split: f"bin/{split}.{source}-{target}" for split in splits},
        "detokenise_options": scheme.generate_options(Path(scheme.name), source),  # files relative to OUT: a moved folder still loads
        "preprocess_command": " ".join(preprocess_equivalent(out, scheme.name, splits, langs, shortlist, workers)),
    }
    if eflomal:
        alignments = statistical_links(out, scheme.name, langs)
    aligned = (
        binarize_alignments(alignments, out, scheme.name, langs, preprocess_command(langs, workers))
        if alignments is not None
        else binarised_entry(out, scheme.name, langs)
    )
    if aligned is not None:
        manifest["train_alignments"] = aligned
    write_atomic(out / "manifest.json", [json.dumps(manifest, indent=2)])
    return manifest
