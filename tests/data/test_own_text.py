"""Any language pair: your own corpus from plain files or a tab-separated file in
non-Latin scripts made here from Multi30k, and every bad input refused in one line with nothing
written that looks finished (the named corpora reversed: tests/test_language_pairs.py)."""

import gzip
import hashlib
import json
import runpy
import shutil
import sys
from pathlib import Path

import matplotlib.image
import pytest
from conftest import REPO, SHARED_DATA, fairseq_train, run, sacrebleu_cli, tiny_training

from rnnsearch_plugin.analysis import heatmap as heatmap_layout
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
    (folder / "pairs.tsv").write_text(
        "".join(f"{2 * i}\t{a}\t{2 * i + 1}\t{b}\n" for i, (a, b) in enumerate(zip(ru, zh))), encoding="utf-8"
    )
    return folder


def prepare(*options: str, check: bool = True):
    return run(sys.executable, PREPARE, *options, "--scheme", "spm", "--vocab-size", "600", check=check)


@pytest.fixture(scope="module")
def ru_zh(own_corpus, tmp_path_factory) -> Path:
    """The plain files prepared Cyrillic -> CJK, with two test sets."""
    out = tmp_path_factory.mktemp("ru_zh")
    prepare(
        "text",
        "-s",
        "ru",
        "-t",
        "zh",
        "--train",
        str(own_corpus / "train"),
        "--valid",
        str(own_corpus / "valid"),
        "--test",
        f"{own_corpus / 'test'},{own_corpus / 'valid'}",
        "--out",
        str(out),
    )
    return out


@pytest.fixture(scope="module")
def zh_ru(own_corpus, tmp_path_factory) -> Path:
    """The tab-separated file prepared CJK -> Cyrillic: Tatoeba's columns 4 and 2, without
    --valid/--test (100 pairs each held out)."""
    out = tmp_path_factory.mktemp("zh_ru")
    prepare(
        "text",
        "-s",
        "zh",
        "-t",
        "ru",
        "--tsv",
        str(own_corpus / "pairs.tsv"),
        "--tsv-columns",
        "4,2",
        "--held-out",
        "100",
        "--out",
        str(out),
    )
    return out


def test_own_corpus_from_plain_files_in_cyrillic_and_cjk(own_corpus, ru_zh):
    manifest = json.loads((ru_zh / "manifest.json").read_text())
    assert manifest["corpus"] == "text" and manifest["character_coverage"] == 0.9995  # CJK, as sentencepiece advises
    duplicates = 1500 - len(set(zip(read_lines(own_corpus / "train.ru"), read_lines(own_corpus / "train.zh.gz"))))
    assert manifest["dropped_in_cleaning"] == ({"duplicate": duplicates} if duplicates else {})
    assert manifest["pairs"] == {"train": 1500 - duplicates, "valid": 200, "test": 200, "test1": 200}
    assert read_lines(ru_zh / "raw" / "test.zh") == read_lines(own_corpus / "test.zh.gz")
    assert str(own_corpus / "train.zh.gz") in manifest["sources"]
    assert (ru_zh / "bin" / "test1.ru-zh.zh.bin").exists()


def test_own_corpus_from_a_tsv_holds_out_dev_and_test_by_hash(own_corpus, zh_ru):
    """The first 200 pairs by SHA-256 of "source<TAB>target" (worked out here, so the same on every
    machine) held out, 100 for dev and 100 for test; no training pair shares a side with them."""
    manifest = json.loads((zh_ru / "manifest.json").read_text())
    assert manifest["pairs"]["valid"] == manifest["pairs"]["test"] == 100
    assert manifest["sources"][str(own_corpus / "pairs.tsv")]["columns"] == {"source": 4, "target": 2, "ignored": [1, 3]}
    pairs = dict.fromkeys(zip(read_lines(own_corpus / "train.zh.gz"), read_lines(own_corpus / "train.ru")))
    by_hash = sorted(pairs, key=lambda pair: hashlib.sha256("\t".join(pair).encode()).digest())
    for split, chosen in (("valid", by_hash[:100]), ("test", by_hash[100:200])):
        assert list(zip(read_lines(zh_ru / "raw" / f"{split}.zh"), read_lines(zh_ru / "raw" / f"{split}.ru"))) == chosen
    held_out = {side for pair in by_hash[:200] for side in pair}
    assert not held_out & (set(read_lines(zh_ru / "raw" / "train.ru")) | set(read_lines(zh_ru / "raw" / "train.zh")))
    assert manifest["pairs"]["train"] + 200 + sum(manifest["dropped_in_cleaning"].values()) == 1500


def prepared_files(out: Path) -> dict[str, object]:
    """Every file ``prepare_data.py`` wrote to ``out``, the JSON ones without the input files they record."""
    files: dict[str, object] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        content = json.loads(path.read_text()) if path.suffix == ".json" else path.read_bytes()
        files[str(path.relative_to(out))] = {k: v for k, v in content.items() if k != "sources"} if isinstance(content, dict) else content
    return files


@pytest.mark.parametrize("given", ["--train", "--tsv"])
def test_a_byte_order_mark_is_no_part_of_the_text(tmp_path, given):
    """Files that begin with a UTF-8 byte-order mark, as Windows Notepad writes them (one side
    gzipped), give the same prepared data as without it: raw, tokenised, dictionaries, binarized."""
    english, french = multi30k_lines("train", "en", 300), multi30k_lines("train", "fr", 300)
    out, prepared = tmp_path / "out", {}
    for mark in ("", "\ufeff"):
        folder = tmp_path / ("marked" if mark else "plain")
        folder.mkdir()
        (folder / "train.en").write_text(mark + "".join(line + "\n" for line in english), encoding="utf-8")
        with gzip.open(folder / "train.fr.gz", "wt", encoding="utf-8") as handle:
            handle.write(mark + "".join(line + "\n" for line in french))
        (folder / "pairs.tsv").write_text(mark + "".join(f"{a}\t{b}\n" for a, b in zip(english, french)), encoding="utf-8")
        source = [given, str(folder / ("train" if given == "--train" else "pairs.tsv"))]
        run(sys.executable, PREPARE, "text", "-s", "en", "-t", "fr", *source, "--scheme", "word", "--held-out", "20", "--out", str(out))
        prepared[mark] = prepared_files(out)
        shutil.rmtree(out)
    assert prepared[""] == prepared["\ufeff"]
    assert "\ufeff".encode() not in prepared["\ufeff"]["bin/dict.en.txt"]  # type: ignore[operator]


@pytest.fixture(scope="module", params=["ru_zh", "zh_ru"])
def trained(request, tmp_path_factory) -> tuple[Path, Path, str, str]:
    """A tiny RNNsearch trained 3 updates on each prepared corpus: (data, checkpoint, source, target)."""
    data = request.getfixturevalue(request.param)
    source, target = request.param.split("_")
    save_dir = tmp_path_factory.mktemp(f"{request.param}_checkpoint")
    run(*fairseq_train(data / "bin", *tiny_training(save_dir, 3), "--lr", "0.005", pair=(source, target)))
    return data, save_dir / "checkpoint_last.pt", source, target


@pytest.fixture(scope="module")
def evaluated(trained, tmp_path_factory) -> tuple[Path, dict, str]:
    """rnnsearch-evaluate of the model on its test set (beam 1): the report's folder, report.json and stdout."""
    data, checkpoint, _, _ = trained
    out = tmp_path_factory.mktemp("report")
    result = run(
        "rnnsearch-evaluate",
        "--prepared",
        str(data),
        "--split",
        "test",
        "--system",
        f"tiny={checkpoint}",
        "--beam",
        "1",
        "--long",
        "1",
        "--out",
        str(out),
    )
    return out, json.loads((out / "report.json").read_text()), result.stdout


@pytest.fixture(scope="module")
def heatmap(trained, tmp_path_factory):
    """rnnsearch-heatmaps of test sentence 0 with its reference, in subword pieces, as PNG: the
    image and what the command printed."""
    data, checkpoint, source, target = trained
    out = tmp_path_factory.mktemp("heatmap")
    result = run(
        "rnnsearch-heatmaps",
        "--path",
        str(checkpoint),
        "--data",
        str(data / "bin"),
        "--input",
        str(data / "raw" / f"test.{source}"),
        "--reference",
        str(data / "raw" / f"test.{target}"),
        "--ids",
        "0",
        "--pieces",
        "--out",
        str(out),
    )
    return out / "alignment_0.png", result


def test_own_text_is_evaluated_in_its_direction(trained, evaluated):
    """The model's direction and the data's: sources in one script, references in the other
    (Appendix C's first row), and sacreBLEU as its command line computes it with the same tokeniser."""
    data, _, source, target = trained
    out, report, stdout = evaluated
    sources, references = read_lines(data / "raw" / f"test.{source}"), read_lines(data / "raw" / f"test.{target}")
    assert f"translating {len(sources)} sentences of test ({source}->{target}, beam 1)" in stdout
    system = report["systems"]["tiny"]
    tokenizer = dict(field.split(":", 1) for field in system["signature"].split("|"))["tok"]
    assert system["sacrebleu"] == pytest.approx(
        sacrebleu_cli(data / "raw" / f"test.{target}", out / "translations" / "tiny.txt", "-tok", tokenizer), abs=6e-5
    )
    rows = [line for line in (out / "long_sentences.md").read_text().splitlines() if line.startswith("| 0 |")]
    assert rows[0].startswith(f"| 0 | {sources[0]} | {references[0]} |")


def test_the_bleu_tokeniser_follows_the_target_language(trained, evaluated):
    """sacreBLEU's own advice: its zh tokeniser for Chinese, 13a for Cyrillic."""
    assert f"|tok:{'zh' if trained[3] == 'zh' else '13a'}|" in evaluated[1]["systems"]["tiny"]["signature"]


def test_the_heatmap_of_cyrillic_and_cjk_is_a_png_of_its_pieces(trained, heatmap):
    """A cell for each source piece across and each target piece down (with </s>), at the sizes of
    heatmap.py's docstring: the sentence's pieces as prepare_data.py encoded them."""
    data, _, source, target = trained
    columns, rows = (len(read_lines(data / "spm" / f"test.{lang}")[0].split()) + 1 for lang in (source, target))
    width = heatmap_layout.LABELS + heatmap_layout.CELL * columns + heatmap_layout.EDGE
    height = heatmap_layout.TITLE + heatmap_layout.LABELS + heatmap_layout.CELL * rows + heatmap_layout.EDGE
    image = matplotlib.image.imread(heatmap[0])
    assert image.shape[:2] == (round(height * heatmap_layout.DPI), round(width * heatmap_layout.DPI))


def test_the_heatmap_has_a_glyph_for_every_label(heatmap):
    assert "missing from font" not in heatmap[1].stderr, heatmap[1].stderr[-1000:]


def bad_case(own: Path, tmp: Path, case: str) -> tuple[list[str], str]:
    """The options of one bad input (files made in ``tmp``) and the words its one-line error must hold."""
    train = ["--train", str(tmp / "train")]
    if case == "line counts":
        (tmp / "train.ru").write_text("один\nдва\n", encoding="utf-8")
        (tmp / "train.zh").write_text("一\n", encoding="utf-8")
        return train, f"{tmp / 'train.ru'} has 2 lines but {tmp / 'train.zh'} has 1 line: the two sides must be line-aligned"
    if case == "empty side":
        (tmp / "train.ru").write_bytes(b"")
        (tmp / "train.zh").write_text("一\n", encoding="utf-8")
        return train, f"{tmp / 'train.ru'} is empty but {tmp / 'train.zh'} has 1 line: the two sides must be line-aligned"
    if case == "empty valid":
        for lang in ("ru", "zh"):
            (tmp / f"valid.{lang}").write_bytes(b"")
        return [
            "--train",
            str(own / "train"),
            "--valid",
            str(tmp / "valid"),
        ], f"the valid split is empty: {tmp / 'valid'} holds no pairs; give a --valid"
    if case == "missing side":
        (tmp / "train.ru").write_text("один\n", encoding="utf-8")
        return train, f"{tmp / 'train'}.zh[.gz] does not exist: {tmp / 'train'} needs both sides"
    if case == "side a folder":
        (tmp / "train.ru").mkdir()
        (tmp / "train.zh").write_text("一\n", encoding="utf-8")
        return train, f"{tmp / 'train.ru'} is a folder, not a file: give a file in its place"
    if case == "tsv a folder":
        return ["--tsv", str(tmp)], f"{tmp} is a folder, not a file: give a file in its place"
    if case.startswith("moses language"):  # the word and bpe schemes both tokenise with Moses
        scheme = case.split()[-1]
        return [
            "--train",
            str(own / "train"),
            "--scheme",
            scheme,
        ], f"the {scheme} scheme tokenises with Moses (sacremoses), which does not know zh: use --scheme spm"
    if case == "same language":
        return ["--train", str(own / "train"), "-t", "ru"], "--source-lang and --target-lang are both ru: a pair needs two"
    if case == "train and tsv":
        return [
            "--train",
            str(own / "train"),
            "--tsv",
            str(own / "pairs.tsv"),
        ], "--train PREFIX (PREFIX.SRC and PREFIX.TGT) or as --tsv FILE, one of them"
    if case == "tsv short of columns":
        return [
            "--tsv",
            str(own / "pairs.tsv"),
            "--tsv-columns",
            "2,5",
        ], f"{own / 'pairs.tsv'} line 1 has 4 columns, but --tsv-columns asks for column 5"
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


@pytest.mark.parametrize(
    "case",
    [
        "line counts",
        "empty side",
        "empty valid",
        "missing side",
        "side a folder",
        "tsv a folder",
        "moses language word",
        "moses language bpe",
        "same language",
        "train and tsv",
        "tsv without a tab",
        "tsv short of columns",
        "invalid utf-8",
        "empty after cleaning",
    ],
)
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
