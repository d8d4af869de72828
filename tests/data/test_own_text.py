"""Any language pair (issue 39): your own corpus from plain files or a tab-separated file in
non-Latin scripts made here from Multi30k, and every bad input refused in one line with nothing
written that looks finished (the named corpora reversed: tests/test_language_pairs.py)."""
import gzip
import hashlib
import json
import runpy
import sys
from pathlib import Path

import pytest

from conftest import REPO, SHARED_DATA, run
from rnnsearch_plugin.data.textio import read_lines

PREPARE = str(REPO / "scripts" / "prepare_data.py")
CYRILLIC = str.maketrans("abcdefghijklmnopqrstuvwxyz", "абцдефгхийклмнопярстужвьыз")


def multi30k_lines(stem: str, lang: str, count: int) -> list[str]:
    with gzip.open(Path(SHARED_DATA) / "multi30k" / f"{stem}.{lang}.gz", "rt", encoding="utf-8") as handle:
        return [next(handle).rstrip("\n") for _ in range(count)]


def cjk(line: str) -> str:
    """Each word as one of 250 CJK ideographs, written without spaces as Chinese is."""
    return "".join(chr(0x4E00 + int(hashlib.sha256(word.encode()).hexdigest(), 16) % 250) for word in line.lower().split())


@pytest.fixture(scope="module")
def own_corpus(tmp_path_factory) -> Path:
    """corpus/{train,valid,test}.{ru,zh}: Multi30k's English in Cyrillic letters and its French as
    unspaced CJK ideographs, line-aligned; and pairs.tsv, Tatoeba's four columns (id, sentence,
    id, sentence)."""
    folder = tmp_path_factory.mktemp("own")
    for stem, split, count in (("train", "train", 1500), ("val", "valid", 200), ("test_2016_flickr", "test", 200)):
        english, french = multi30k_lines(stem, "en", count), multi30k_lines(stem, "fr", count)
        (folder / f"{split}.ru").write_text("".join(line.translate(CYRILLIC) + "\n" for line in english), encoding="utf-8")
        with gzip.open(folder / f"{split}.zh.gz", "wt", encoding="utf-8") as handle:  # gzipped sides are read too
            handle.writelines(cjk(line) + "\n" for line in french)
    ru, zh = read_lines(folder / "train.ru"), read_lines(folder / "train.zh.gz")
    (folder / "pairs.tsv").write_text("".join(f"{2 * i}\t{a}\t{2 * i + 1}\t{b}\n" for i, (a, b) in enumerate(zip(ru, zh))),
                                      encoding="utf-8")
    return folder


def prepare(*options: str, check: bool = True):
    return run(sys.executable, PREPARE, *options, "--scheme", "spm", "--vocab-size", "600", check=check)


def test_own_corpus_from_plain_files_in_cyrillic_and_cjk(own_corpus, tmp_path):
    out = tmp_path / "out"
    prepare("text", "-s", "ru", "-t", "zh", "--train", str(own_corpus / "train"), "--valid", str(own_corpus / "valid"),
            "--test", f"{own_corpus / 'test'},{own_corpus / 'valid'}", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["corpus"] == "text" and manifest["character_coverage"] == 0.9995  # CJK, as sentencepiece advises
    duplicates = 1500 - len(set(zip(read_lines(own_corpus / "train.ru"), read_lines(own_corpus / "train.zh.gz"))))
    assert manifest["dropped_in_cleaning"] == ({"duplicate": duplicates} if duplicates else {})
    assert manifest["pairs"] == {"train": 1500 - duplicates, "valid": 200, "test": 200, "test1": 200}
    assert read_lines(out / "raw" / "test.zh") == read_lines(own_corpus / "test.zh.gz")
    assert str(own_corpus / "train.zh.gz") in manifest["sources"]
    assert (out / "bin" / "test1.ru-zh.zh.bin").exists()


def test_own_corpus_from_a_tsv_holds_out_dev_and_test_by_hash(own_corpus, tmp_path):
    """Tatoeba's columns 2 and 4; no --valid/--test: 100 pairs each held out, the first 200 pairs
    by SHA-256 of "source<TAB>target" (worked out here, so the same on every machine), and no
    training pair shares a side with them."""
    out = tmp_path / "out"
    prepare("text", "-s", "ru", "-t", "zh", "--tsv", str(own_corpus / "pairs.tsv"), "--tsv-columns", "2,4",
            "--held-out", "100", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["pairs"]["valid"] == manifest["pairs"]["test"] == 100
    assert manifest["sources"][str(own_corpus / "pairs.tsv")]["columns"] == {"source": 2, "target": 4, "ignored": [1, 3]}
    pairs = dict.fromkeys(zip(read_lines(own_corpus / "train.ru"), read_lines(own_corpus / "train.zh.gz")))
    by_hash = sorted(pairs, key=lambda pair: hashlib.sha256("\t".join(pair).encode()).digest())
    for split, chosen in (("valid", by_hash[:100]), ("test", by_hash[100:200])):
        assert list(zip(read_lines(out / "raw" / f"{split}.ru"), read_lines(out / "raw" / f"{split}.zh"))) == chosen
    held_out = {side for pair in by_hash[:200] for side in pair}
    assert not held_out & (set(read_lines(out / "raw" / "train.ru")) | set(read_lines(out / "raw" / "train.zh")))
    assert manifest["pairs"]["train"] + 200 + sum(manifest["dropped_in_cleaning"].values()) == 1500


def bad_case(own: Path, tmp: Path, case: str) -> tuple[list[str], str]:
    """The options of one bad input (files made in ``tmp``) and the words its one-line error must hold."""
    train = ["--train", str(tmp / "train")]
    if case == "line counts":
        (tmp / "train.ru").write_text("один\nдва\n", encoding="utf-8")
        (tmp / "train.zh").write_text("一\n", encoding="utf-8")
        return train, f"{tmp / 'train.ru'} has 2 lines but {tmp / 'train.zh'} has 1: the two sides must be line-aligned"
    if case == "missing side":
        (tmp / "train.ru").write_text("один\n", encoding="utf-8")
        return train, f"{tmp / 'train'}.zh[.gz] does not exist: {tmp / 'train'} needs both sides"
    if case == "moses language":
        return ["--train", str(own / "train"), "--scheme", "word"], \
            "the word scheme tokenises with Moses (sacremoses), which does not know zh: use --scheme spm"
    if case == "tsv without a tab":
        (tmp / "pairs.tsv").write_text("один\t一\nдва 二\n", encoding="utf-8")
        return ["--tsv", str(tmp / "pairs.tsv")], f"{tmp / 'pairs.tsv'} line 2 has no tab"
    if case == "invalid utf-8":
        (tmp / "train.ru").write_bytes("один\nдва\n".encode() + b"\xff\xfe\n")
        (tmp / "train.zh").write_text("一\n二\n三\n", encoding="utf-8")
        return train, f"{tmp / 'train.ru'} is not valid UTF-8 on line 3"
    assert case == "empty after cleaning"
    (tmp / "train.ru").write_text("один\n \nодин\n", encoding="utf-8")
    (tmp / "train.zh").write_text("一\n二\n一\n", encoding="utf-8")
    return train, "the training split is empty after cleaning (kept 1 of 3 pairs; dropped: {'empty': 1, 'duplicate': 1, "


@pytest.mark.parametrize("case", ["line counts", "missing side", "moses language", "tsv without a tab", "invalid utf-8",
                                  "empty after cleaning"])
def test_bad_input_is_refused_in_one_line_and_nothing_looks_finished(own_corpus, tmp_path, monkeypatch, case):
    """prepare_data.py's main in this process (its exit message is the one line the command prints)."""
    options, expected = bad_case(own_corpus, tmp_path, case)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", [PREPARE, "text", "-s", "ru", "-t", "zh", *options, "--held-out", "1", "--out", str(out)])
    with pytest.raises(SystemExit) as exit:
        runpy.run_path(PREPARE, run_name="__main__")
    message = str(exit.value.code)
    assert message.startswith("prepare_data: error: ") and "\n" not in message and expected in message, message
    assert not (out / "manifest.json").exists() and not (out / "bin").exists()
