"""The data pipelines on slices of the real corpora in ../shared/data (copied, never written)."""

import errno
import gzip
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest
import torch
from conftest import REPO, SHARED_DATA, TINY, assert_one_line_error, fairseq_train, http_mirror, run
from fairseq.data import data_utils
from fairseq.data.indexed_dataset import MMapIndexedDataset
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from rnnsearch_plugin.data import cleaning, textio
from rnnsearch_plugin.data.alignments import checked_alignments
from rnnsearch_plugin.data.hansards import clean_and_split
from rnnsearch_plugin.data.pipeline import raw_splits
from rnnsearch_plugin.data.schemes import BPEScheme, SentencePieceScheme, WordScheme
from rnnsearch_plugin.data.sources import Sources
from rnnsearch_plugin.data.textio import DataError, read_lines

PREPARE = str(REPO / "scripts" / "prepare_data.py")
SCHEME_OPTIONS = {"word": ["--shortlist", "1500", "--max-len", "30"], "bpe": ["--bpe-merges", "300"], "spm": ["--vocab-size", "500"]}


def slice_corpus(source: Path, target: Path, names: list[str], lines: int) -> Path:
    """The first ``lines`` lines of each named file, decompressed into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        with gzip.open(source / f"{name}.gz", "rt", encoding="utf-8") as handle:
            head = [next(handle) for _ in range(lines)]
        (target / name).write_text("".join(head), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def local_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("raw")
    data = Path(SHARED_DATA)
    wmt = slice_corpus(data / "wmt14", root / "wmt14", [f"newstest201{y}.{l}" for y in (2, 3, 4) for l in ("en", "fr")], 400)
    for lang in ("en", "fr"):  # a slice of newstest2012 stands in for the training data
        (wmt / f"train.{lang}").write_text((wmt / f"newstest2012.{lang}").read_text())
    return {
        "multi30k": slice_corpus(
            data / "multi30k",
            root / "multi30k",
            [f"{s}.{l}" for s in ("train", "val", "test_2016_flickr", "test_2017_flickr") for l in ("en", "fr")],
            600,
        ),
        "hansards": slice_corpus(
            data / "hansards", root / "hansards", [f"hansard.36.{p}.house.{l}" for p in (1, 2) for l in ("en", "fr")], 3000
        ),
        "wmt14": wmt,
    }


@pytest.mark.parametrize("scheme", ["word", "bpe", "spm"])
@pytest.mark.parametrize("corpus", ["multi30k", "hansards", "wmt14"])
def test_corpus_and_scheme_to_binarized_data(local_dirs, tmp_path, corpus, scheme):
    out = tmp_path / "out"
    command = [
        PREPARE,
        corpus,
        "--scheme",
        scheme,
        "--out",
        str(out),
        "--local-dir",
        str(local_dirs[corpus]),
        *SCHEME_OPTIONS[scheme],
        *(["--held-out", "300"] if corpus == "hansards" else []),
    ]
    run(sys.executable, *command)
    manifest = json.loads((out / "manifest.json").read_text())
    for split, sides in manifest["unknown"].items():  # the manifest counts what was binarized
        for lang, counts in sides.items():
            binarized = MMapIndexedDataset(str(out / "bin" / f"{split}.en-fr.{lang}"))
            assert len(binarized) == manifest["pairs"][split]
            assert binarized.sizes.sum() == counts["tokens"] + manifest["pairs"][split]  # + </s> per sentence
            words = {line.rsplit(" ", 1)[0] for line in read_lines(out / "bin" / f"dict.{lang}.txt")}
            text = read_lines(out / scheme / f"{split}.{lang}")
            assert counts["unk"] == sum(word not in words for line in text for word in line.split())
    if corpus == "hansards":
        assert manifest["pairs"]["valid"] == manifest["pairs"]["test"] == 300
        assert manifest["dropped_in_cleaning"]["not a sentence"] > 0
    if corpus == "multi30k" and scheme == "spm":
        binarized = (out / "bin" / "train.en-fr.en.bin").stat().st_mtime_ns
        run(sys.executable, *command)  # idempotent: finished steps are not redone
        assert (out / "bin" / "train.en-fr.en.bin").stat().st_mtime_ns == binarized
    trained = run(
        *fairseq_train(out / "bin"),
        "--arch",
        "rnnsearch_small",
        *TINY,
        "--optimizer",
        "adam",
        "--lr",
        "0.003",
        "--max-tokens",
        "1000",
        "--max-update",
        "1",
        "--save-dir",
        str(tmp_path / "ck"),
        "--num-workers",
        "0",
        "--no-save",
        "--max-valid-steps",
        "1",
        "--data-buffer-size",
        "0",
    )
    assert "valid on 'valid' subset" in trained.stdout + trained.stderr


def normalise(text: str) -> str:
    """The documented normalisation: equal once sacreBLEU's 13a tokeniser has run (so spacing
    around punctuation, e.g. French "Bowie :" vs "Bowie:", does not count) after NFKC."""
    return Tokenizer13a()(unicodedata.normalize("NFKC", text))


@pytest.mark.parametrize("scheme_class", [WordScheme, BPEScheme, SentencePieceScheme])
def test_round_trip_restores_the_raw_reference(tmp_path, scheme_class):
    raw = read_lines(Path(SHARED_DATA) / "wmt14" / "newstest2014.fr.gz")[:300]
    train = {
        "en": read_lines(Path(SHARED_DATA) / "wmt14" / "newstest2013.en.gz")[:2000],
        "fr": read_lines(Path(SHARED_DATA) / "wmt14" / "newstest2013.fr.gz")[:2000],
    }
    scheme = scheme_class(workers=1) if scheme_class is WordScheme else scheme_class(500, workers=1)
    scheme.learn(train, tmp_path)
    decoded = [scheme.decode(line, "fr") for line in scheme.encode(raw, "fr")]
    mismatches = [(r, d) for r, d in zip(raw, decoded) if normalise(r) != normalise(d)]
    assert len(mismatches) <= 0.02 * len(raw), mismatches[:3]


def test_word_shortlist_keeps_exactly_the_most_frequent_words(tmp_path, local_dirs):
    out = tmp_path / "out"
    run(
        sys.executable,
        PREPARE,
        "multi30k",
        "--scheme",
        "word",
        "--out",
        str(out),
        "--local-dir",
        str(local_dirs["multi30k"]),
        "--shortlist",
        "700",
    )
    counts = Counter(t for line in read_lines(out / "word" / "train.fr") for t in line.split())
    expected = [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:700]]
    kept = [line.rsplit(" ", 1)[0] for line in read_lines(out / "bin" / "dict.fr.txt")]
    assert kept == expected  # ties: code-point order of the word


def test_hansards_cleaning_is_deterministic_and_keeps_held_out_pairs_out_of_training(tmp_path):
    english = [
        "ELECTION OF SPEAKER",
        "Mr. Charlie Penson:",
        "",
        "It is a top down process.",
        "It is a top down process.",
        "We agree with the minister on this.",
        "Yes it is true that we do.",
    ] * 1
    french = [
        "ÉLECTION DU PRÉSIDENT",
        "M. Charlie Penson:",
        "Vide.",
        "On a une approche descendante.",
        "On a une approche descendante.",
        "Nous sommes d'accord avec le ministre.",
        "Oui c'est vrai.",
    ]

    def split_once() -> tuple[dict[str, list], Counter]:
        splits, dropped = clean_and_split(zip(english, french), tmp_path, dev_size=1, test_size=1)
        return {name: list(pairs) for name, pairs in splits.items()}, dropped  # the counts complete once training is read

    (split, dropped), (again, _) = split_once(), split_once()
    assert split == again
    assert dropped == {"not a sentence": 2, "empty": 1, "duplicate": 1, "overlaps dev/test": 0}
    assert {name: len(pairs) for name, pairs in split.items()} == {"train": 1, "valid": 1, "test": 1}
    held_out = {english for english, _ in split["valid"] + split["test"]}
    assert not held_out & {english for english, _ in split["train"]}


def raw_stage(corpus: str, local: Path, out: Path, **options) -> dict[str, bytes]:
    """Every file the raw stage writes into ``out``, by name, from ``local`` (in this process)."""
    out.mkdir(parents=True)
    raw_splits(corpus, out, Sources(local, out / "download"), ("en", "fr"), 0, **options)
    return {path.name: path.read_bytes() for path in sorted((out / "raw").iterdir())}


def test_the_raw_stage_writes_the_same_files_whatever_its_chunk_sizes(local_dirs, tmp_path, monkeypatch):
    """Cleaning streams in chunks, and duplicates are found by hashes merged every so many pairs:
    a chunk of 7 pairs and merges every 5 hashes give the files of the defaults."""
    whole = raw_stage("hansards", local_dirs["hansards"], tmp_path / "whole", held_out=300)
    monkeypatch.setattr(cleaning, "CHUNK", 7)
    monkeypatch.setattr(cleaning, "MERGE", 5)
    assert raw_stage("hansards", local_dirs["hansards"], tmp_path / "tiny", held_out=300) == whole
    assert json.loads(whole["report.json"])["dropped"]["duplicate"] > 0


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_compressed_file_names_itself_and_leaves_nothing_that_looks_complete(local_dirs, tmp_path, damage):
    """A gzip file cut short, or with bytes overwritten half-way: one line naming the file and the
    last line read; no split file and no report (a rerun starts the stage again)."""
    bad = tmp_path / "bad"
    bad.mkdir()
    for path in local_dirs["hansards"].iterdir():
        (bad / f"{path.name}.gz").write_bytes(gzip.compress(path.read_bytes()))
    damaged = bad / "hansard.36.2.house.fr.gz"
    data, half = damaged.read_bytes(), len(damaged.read_bytes()) // 2
    damaged.write_bytes(data[:half] if damage == "truncated" else data[:half] + bytes(64) + data[half + 64 :])
    out = tmp_path / "out"
    result = run(sys.executable, PREPARE, "hansards", "--out", str(out), "--local-dir", str(bad), check=False)
    assert_one_line_error(result, f"{damaged} is corrupt or truncated after line ", "download it again")
    assert not [path for path in out.rglob("*") if path.is_file()]


def test_a_full_disk_while_writing_is_one_line_and_leaves_no_file(local_dirs, tmp_path, monkeypatch):
    writes = []

    def full(self, row):
        writes.append(row)
        if len(writes) > 100:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(textio.AtomicFiles, "write", full)
    with pytest.raises(DataError, match="No space left on device.*free some space there, or give another --out"):
        raw_stage("multi30k", local_dirs["multi30k"], tmp_path / "out")
    assert not list((tmp_path / "out" / "raw").glob("*"))


def test_bad_input_is_refused_in_one_line(tmp_path, local_dirs):
    bad = tmp_path / "bad"
    bad.mkdir()
    for path in local_dirs["multi30k"].iterdir():
        (bad / path.name).write_bytes(path.read_bytes())
    (bad / "val.fr").write_text("\n".join((bad / "val.fr").read_text().splitlines()[:-1]) + "\n")
    result = run(sys.executable, PREPARE, "multi30k", "--out", str(tmp_path / "o1"), "--local-dir", str(bad), check=False)
    assert result.returncode != 0 and "600 lines but" in result.stderr and "Traceback" not in result.stderr
    (bad / "val.fr").write_bytes(b"\xff\xfe broken\n" * 600)
    result = run(sys.executable, PREPARE, "multi30k", "--out", str(tmp_path / "o2"), "--local-dir", str(bad), check=False)
    assert "not valid UTF-8" in result.stderr and "Traceback" not in result.stderr
    (bad / "val.fr").unlink()
    result = run(sys.executable, PREPARE, "multi30k", "--out", str(tmp_path / "o3"), "--local-dir", str(bad), check=False)
    assert "val.fr[.gz] is not in" in result.stderr and not (tmp_path / "o3" / "manifest.json").exists()


@pytest.mark.parametrize("where", ["under a file", "a file", "in /proc"])
def test_an_out_that_cannot_be_created_is_refused_in_one_line(tmp_path, local_dirs, where):
    """An --out that cannot be made a folder: one line naming it and why, before anything is read."""
    file = tmp_path / "file"
    file.write_text("kept\n")
    out, reason = {
        "under a file": (file / "sub", f"{file} is a file"),
        "a file": (file, f"{file} is a file"),
        "in /proc": (Path("/proc/rnnsearch-out"), "No such file or directory"),
    }[where]
    if where == "in /proc" and not Path("/proc/self").is_dir():
        pytest.skip("no /proc on this system (Linux's process file system)")
    result = run(sys.executable, PREPARE, "multi30k", "--out", str(out), "--local-dir", str(local_dirs["multi30k"]), check=False)
    assert_one_line_error(result, f"prepare_data: error: cannot create {out} ({reason}): give --out a folder")
    assert "| reading" not in result.stdout and file.read_text() == "kept\n"


def wmt_sgml(lines: list[str], setid: str) -> str:
    """A WMT pseudo-SGML file as distributed in test-full.tgz, with stray whitespace."""
    segments = "".join(f'<seg id="{i}"> {line}  </seg>\n' for i, line in enumerate(lines, 1))
    return (
        f'<srcset setid="{setid}" srclang="any">\n<doc sysid="ref" docid="1" genre="news" origlang="en">\n'
        f"<p>\n{segments}</p>\n</doc>\n</srcset>\n"
    )


def add_to_tar(tar: tarfile.TarFile, member: str, data: bytes) -> None:
    info = tarfile.TarInfo(member)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.fixture(scope="module")
def wmt14_archives(tmp_path_factory) -> tuple[Path, dict[str, tuple[list[str], list[str]]]]:
    """The official archives' layout (dev.tgz, test-full.tgz, bitexts.tgz), filled with slices
    of the real newstest sets (newstest2012 stands in for the selected bitext), and the raw
    splits the pipeline must read from them."""
    folder = tmp_path_factory.mktemp("wmt14-archives")
    text = {
        f"{y}.{l}": read_lines(Path(SHARED_DATA) / "wmt14" / f"newstest{y}.{l}.gz")[:200] for y in (2012, 2013, 2014) for l in ("en", "fr")
    }
    with tarfile.open(folder / "dev.tgz", "w:gz") as tar:
        for year in (2012, 2013):
            for lang in ("en", "fr"):
                add_to_tar(tar, f"dev/newstest{year}.{lang}", "".join(f"{l}\n" for l in text[f"{year}.{lang}"]).encode())
    with tarfile.open(folder / "test-full.tgz", "w:gz") as tar:
        for lang, role in (("en", "src"), ("fr", "ref")):
            add_to_tar(tar, f"test-full/newstest2014-fren-{role}.{lang}.sgm", wmt_sgml(text[f"2014.{lang}"], "newstest2014").encode())
    parts = ("ep7_pc45", "nc9", "dev08_11", "crawl", "ccb2_pc30", "un2000_pc34")
    with tarfile.open(folder / "bitexts.tgz", "w:gz") as tar:
        for index, part in enumerate(parts):
            for lang in ("en", "fr"):
                chunk = text[f"2012.{lang}"][index * 30 : (index + 1) * 30]
                add_to_tar(tar, f"bitexts.selected/{part}.{lang}.gz", gzip.compress("".join(f"{l}\n" for l in chunk).encode()))
    expected = {
        "train": tuple(text[f"2012.{l}"][:180] for l in ("en", "fr")),
        "valid": tuple(text[f"2012.{l}"] + text[f"2013.{l}"] for l in ("en", "fr")),
        "test": tuple([" ".join(line.split()) for line in text[f"2014.{l}"]] for l in ("en", "fr")),
    }
    return folder, expected


@pytest.fixture(scope="module")
def mirror(wmt14_archives) -> Iterator[str]:
    """An HTTP server on this machine serving the archives, as a mirror of the official hosts."""
    with http_mirror(wmt14_archives[0], "wmt") as url:
        yield url


def test_wmt14_downloads_the_official_archives_or_reads_them_from_a_local_folder(tmp_path, wmt14_archives, mirror):
    folder, expected = wmt14_archives
    downloaded, local = tmp_path / "downloaded", tmp_path / "local"
    run(sys.executable, PREPARE, "wmt14", "--scheme", "spm", "--vocab-size", "300", "--out", str(downloaded), "--mirror", mirror)
    run(sys.executable, PREPARE, "wmt14", "--scheme", "spm", "--vocab-size", "300", "--out", str(local), "--local-dir", str(folder))
    for out in (downloaded, local):
        for split, sides in expected.items():
            assert tuple(read_lines(out / "raw" / f"{split}.{lang}") for lang in ("en", "fr")) == sides, (out, split)
    sources = json.loads((downloaded / "manifest.json").read_text())["sources"]
    assert sources.keys() == {"dev.tgz", "test-full.tgz", "bitexts.tgz"}
    for name, origin in sources.items():
        assert origin["from"] == f"{mirror}/{name}"
        assert origin["sha256"] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
    assert not list((downloaded / "download").glob("*.part"))
    broken = run(sys.executable, PREPARE, "wmt14", "--out", str(tmp_path / "none"), "--mirror", mirror + "/missing", check=False)
    assert broken.returncode != 0 and "downloading" in broken.stderr and "--local-dir" in broken.stderr
    assert "Traceback" not in broken.stderr and not (tmp_path / "none" / "raw").exists()


def run_and_kill(command: list[str], marker: str) -> None:
    """Run ``command`` and SIGKILL its whole process group once it prints ``marker``."""
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    for line in process.stdout:
        if marker in line:
            os.killpg(process.pid, signal.SIGKILL)
            break
    process.wait()
    assert process.returncode == -signal.SIGKILL, f"{marker!r} never printed"


@pytest.mark.parametrize("marker", ["| encoding train", "| binarising"])
def test_a_killed_run_leaves_nothing_finished_looking_and_a_rerun_completes_it(tmp_path, local_dirs, marker):
    command = [
        sys.executable,
        PREPARE,
        "multi30k",
        "--scheme",
        "bpe",
        "--bpe-merges",
        "300",
        "--local-dir",
        str(local_dirs["multi30k"]),
        "--out",
    ]
    run(*command, str(tmp_path / "whole"))
    run_and_kill([*command, str(tmp_path / "killed")], marker)
    assert not (tmp_path / "killed" / "manifest.json").exists() and not (tmp_path / "killed" / "bin").exists()
    run(*command, str(tmp_path / "killed"))
    whole = sorted(p.name for p in (tmp_path / "whole" / "bin").iterdir() if p.suffix in (".bin", ".idx", ".txt"))
    assert len(whole) == 4 * 2 * 2 + 2  # {train,valid,test,test1} x {en,fr} x {bin,idx} + 2 dictionaries
    for name in whole:
        assert (tmp_path / "killed" / "bin" / name).read_bytes() == (tmp_path / "whole" / "bin" / name).read_bytes(), name


def diagonal_links(source: str, target: str) -> str:
    """Target word j linked to source word j * S // T (S, T words in the pair)."""
    sources, targets = len(source.split()), len(target.split())
    return " ".join(f"{j * sources // targets}-{j}" for j in range(targets))


@pytest.fixture(scope="module")
def aligned(local_dirs, tmp_path_factory) -> tuple[list[str], Path]:
    """Multi30k's first 600 pairs at word level, those over 20 words left out, then prepared again
    with the kept training pairs' alignments (diagonal, every fifth pair without links)."""
    out = tmp_path_factory.mktemp("aligned") / "out"
    command = [
        sys.executable,
        PREPARE,
        "multi30k",
        "--scheme",
        "word",
        "--shortlist",
        "1000",
        "--max-len",
        "20",
        "--out",
        str(out),
        "--local-dir",
        str(local_dirs["multi30k"]),
    ]
    run(*command)
    pairs = zip(read_lines(out / "word" / "train.en"), read_lines(out / "word" / "train.fr"))
    lines = ["" if number % 5 == 0 else diagonal_links(*pair) for number, pair in enumerate(pairs)]
    alignments = out.parent / "train.align"
    alignments.write_text("".join(line + "\n" for line in lines))
    run(*command, "--train-alignments", str(alignments))
    return command, out


def test_training_alignments_are_binarised_where_fairseq_reads_them(aligned):
    command, out = aligned
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dropped_by_length"] > 0  # the alignments count the pairs the pipeline kept
    expected = [[int(k) for link in line.split() for k in link.split("-")] for line in read_lines(out / "word" / "train.align")]
    assert manifest["train_alignments"]["links"] == sum(len(links) // 2 for links in expected)
    binarised = data_utils.load_indexed_dataset(str(out / "bin" / "train.align.en-fr"), None)
    assert [binarised[i].tolist() for i in range(len(binarised))] == expected
    written = (out / "bin" / "train.align.en-fr.bin").stat().st_mtime_ns
    run(*command, "--train-alignments", str(out.parent / "train.align"))  # the same file again: nothing to redo
    assert (out / "bin" / "train.align.en-fr.bin").stat().st_mtime_ns == written


def test_bad_alignments_are_refused_and_nothing_written(aligned, tmp_path):
    command, out = aligned
    lines = read_lines(out / "word" / "train.align")
    source_words = len(read_lines(out / "word" / "train.en")[2].split())
    cases = {
        "has 3 lines and": lines[:3],
        f"line 3: link {source_words}-0 is outside the pair": lines[:2] + [f"{source_words}-0"] + lines[3:],
        "line 2: '0:1' is not a link i-j": lines[:1] + ["0:1"] + lines[2:],
        "line 1: a link is given twice": ["0-0 0-0"] + lines[1:],
        ".align is empty and": [],
    }
    for number, (message, bad) in enumerate(cases.items()):
        (tmp_path / f"{number}.align").write_text("".join(line + "\n" for line in bad))
        with pytest.raises(DataError, match=re.escape(message)):
            checked_alignments(tmp_path / f"{number}.align", out, "word", ("en", "fr"))
    with pytest.raises(DataError, match="needs --scheme word"):
        checked_alignments(out / "word" / "train.align", out, "bpe", ("en", "fr"))
    with pytest.raises(DataError, match="is not prepared yet: run this command without --train-alignments first"):
        checked_alignments(out / "word" / "train.align", tmp_path / "fresh", "word", ("en", "fr"))
    before = files_of(out)
    assert_one_line_error(run(*command, "--train-alignments", str(tmp_path / "1.align"), check=False), "is outside the pair")
    assert files_of(out) == before


def files_of(out: Path) -> dict[str, bytes]:
    """The contents of the prepared folder's files that an alignment file could change."""
    return {
        str(path.relative_to(out)): path.read_bytes()
        for folder in (out, out / "word", out / "bin")
        for path in folder.iterdir()
        if path.is_file()
    }


def guided_training(out: Path, save_dir: Path, *options: str, weight: str = "0.5") -> subprocess.CompletedProcess:
    return run(
        "fairseq-train",
        str(out / "bin"),
        "--user-dir",
        "rnnsearch_plugin",
        "--task",
        "translation",
        "-s",
        "en",
        "-t",
        "fr",
        "--arch",
        "rnnsearch_small",
        *TINY,
        "--optimizer",
        "adam",
        "--lr",
        "0.003",
        "--max-tokens",
        "500",
        "--max-update",
        "3",
        "--max-valid-steps",
        "1",
        "--save-dir",
        str(save_dir),
        "--no-epoch-checkpoints",
        "--num-workers",
        "0",
        "--data-buffer-size",
        "0",
        "--log-format",
        "json",
        "--log-interval",
        "1",
        "--criterion",
        "chunked_cross_entropy",
        "--alignment-lambda",
        weight,
        *options,
        check=False,
    )


def logged(result: subprocess.CompletedProcess, kind: str) -> list[dict]:
    """The json records fairseq-train logged as ``kind`` (train_inner, valid), their values as floats."""
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-3000:]
    return [
        {key: float(value) for key, value in json.loads(line.split(f" | {kind} | ", 1)[1]).items()}
        for line in log.splitlines()
        if f" | {kind} | " in line
    ]


def test_guided_alignment_trains_and_validates_with_load_alignments(aligned, tmp_path):
    """Three updates with --alignment-lambda 0.5 and 0 from the same start: the first batch's
    translation loss is the same, the total is it plus 0.5 times the alignment loss (the logged
    fields, in bits per target token, rounded to 3 decimals), and the alignment model trained
    differently (the translation loss barely moves in three updates: its 3 decimals stay equal)."""
    guided, plain = (guided_training(aligned[1], tmp_path / weight, "--load-alignments", weight=weight) for weight in ("0.5", "0"))
    guided_records, plain_records = logged(guided, "train_inner"), logged(plain, "train_inner")
    assert len(guided_records) == len(plain_records) == 3
    assert all(record["alignment_loss"] > 1 for record in guided_records)
    for record in guided_records:
        assert record["loss"] == pytest.approx(record["nll_loss"] + 0.5 * record["alignment_loss"], abs=2e-3)
    assert all("alignment_loss" not in record and "nll_loss" not in record for record in plain_records)
    assert guided_records[0]["nll_loss"] == plain_records[0]["loss"]
    guided_model, plain_model = (
        torch.load(tmp_path / weight / "checkpoint_last.pt", weights_only=True)["model"] for weight in ("0.5", "0")
    )
    attention = [name for name in guided_model if name.startswith("decoder.attention.")]
    assert len(attention) == 4 and not any(torch.equal(guided_model[name], plain_model[name]) for name in attention)
    valid = logged(guided, "valid")
    assert valid and "valid_alignment_loss" not in valid[0] and "valid_nll_loss" in valid[0]  # dev pairs have no alignments


@pytest.mark.parametrize("missing", ["option", "data"])
def test_guided_alignment_without_alignments_is_refused_in_one_line(aligned, tmp_path, missing):
    data = aligned[1]
    if missing == "data":
        data = tmp_path / "plain"
        (data / "bin").mkdir(parents=True)
        for path in (aligned[1] / "bin").iterdir():
            if not path.name.startswith("train.align"):
                (data / "bin" / path.name).symlink_to(path)
    result = guided_training(data, tmp_path / "ck", *(["--load-alignments"] if missing == "data" else []))
    assert_one_line_error(result, "add --load-alignments" if missing == "option" else "the training data has no alignments")
