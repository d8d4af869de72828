"""A model trained the plain fairseq way, without -s/-t: fairseq infers the pair from the data
folder's file names, and the checkpoint names none. Every command that loads a model (the API,
rnnsearch-serve, -evaluate, -heatmaps, -aer, -align) takes the data folder's pair for it, as
fairseq does."""

import json
import sys
from pathlib import Path

import pytest
from conftest import BIN, REPO, run, tiny_training
from fairseq.data import Dictionary

from rnnsearch_plugin import load
from rnnsearch_plugin.cli.aer import main as aer_main
from rnnsearch_plugin.cli.align import main as align_main
from rnnsearch_plugin.cli.evaluate import main as evaluate_main
from rnnsearch_plugin.cli.heatmaps import main as heatmaps_main
from rnnsearch_plugin.data.textio import read_lines

sys.path.insert(0, str(REPO / "tooling"))
from serve_load import call, serving  # noqa: E402

SENTENCES = 3  # of the test split: each command on a handful


@pytest.fixture(scope="module")
def pairless(multi30k, tmp_path_factory) -> Path:
    """Two updates of fairseq-train on the session's Multi30k (En->Fr) with neither -s nor -t."""
    save_dir = tmp_path_factory.mktemp("pairless")
    run(
        str(BIN / "fairseq-train"),
        str(multi30k / "bin"),
        "--user-dir",
        "rnnsearch_plugin",
        "--task",
        "translation",
        *tiny_training(save_dir, 2),
    )
    return save_dir / "checkpoint_last.pt"


@pytest.fixture(scope="module")
def few(multi30k, tmp_path_factory) -> Path:
    """A prepared folder of the session's data whose test split is its first SENTENCES pairs."""
    folder = tmp_path_factory.mktemp("few")
    (folder / "bin").symlink_to(multi30k / "bin")
    (folder / "raw").mkdir()
    for lang in ("en", "fr"):
        (folder / "raw" / f"test.{lang}").write_text(
            "".join(line + "\n" for line in read_lines(multi30k / "raw" / f"test.{lang}")[:SENTENCES])
        )
    return folder


def test_the_api_and_the_server_take_the_data_folders_pair(pairless, multi30k, tmp_path):
    model = load(pairless, multi30k / "bin")
    assert model.pair == ("en", "fr")
    assert [model.src_dict.symbols, model.tgt_dict.symbols] == [
        Dictionary.load(str(multi30k / "bin" / f"dict.{lang}.txt")).symbols for lang in model.pair
    ]
    assert len(model.translate(["A dog runs.", "Two men"], beam=2, max_len_b=5)) == 2
    with serving(pairless, multi30k / "bin", log=tmp_path / "serve.log", cwd=tmp_path) as (address, _):
        status, health = call(address, "health")
    assert status == 200 and (health["source"]["language"], health["target"]["language"]) == ("en", "fr")


def test_every_command_takes_the_data_folders_pair(pairless, few, tmp_path, capsys):
    model = ["--path", str(pairless), "--data", str(few / "bin")]
    evaluate_main(["--prepared", str(few), "--system", f"plain={pairless}", "--beam", "2", "--out", str(tmp_path / "evaluate")])
    report = json.loads((tmp_path / "evaluate" / "report.json").read_text())
    assert (report["source_lang"], report["target_lang"]) == ("en", "fr")
    assert len(read_lines(tmp_path / "evaluate" / "translations" / "plain.txt")) == SENTENCES
    heatmaps_main([*model, "--input", str(few / "raw" / "test.en"), "--ids", "0", "--beam", "2", "--out", str(tmp_path / "heatmaps")])
    assert (tmp_path / "heatmaps" / "alignment_0.png").exists()
    words = [line.split() for line in read_lines(few / "raw" / "test.en")], [line.split() for line in read_lines(few / "raw" / "test.fr")]
    for side, lines in zip(("en", "fr"), words):
        (tmp_path / f"gold.{side}").write_text("".join(" ".join(line) + "\n" for line in lines))
    (tmp_path / "gold.talp").write_text("0-0\n" * SENTENCES)  # a Pharaoh gold standard, En-Fr
    gold = ["--gold", str(tmp_path / "gold.talp"), "--gold-source", str(tmp_path / "gold.en"), "--gold-target", str(tmp_path / "gold.fr")]
    aer_main([*model, *gold, "--out", str(tmp_path / "aer")])
    assert "argmax" in json.loads((tmp_path / "aer" / "aer.json").read_text())
    assert not capsys.readouterr().out.startswith("| the")  # the gold standard's pair is the model's: not transposed
    align_main([*model, "--source", str(tmp_path / "gold.en"), "--target", str(tmp_path / "gold.fr"), "--out", str(tmp_path / "links")])
    assert len(read_lines(tmp_path / "links")) == SENTENCES


def test_a_folder_of_several_pairs_is_refused_in_one_line(pairless, multi30k, tmp_path):
    """fairseq would take whichever pair it lists first."""
    data = tmp_path / "bin"
    data.mkdir()
    for path in (multi30k / "bin").glob("*"):
        (data / path.name).symlink_to(path)
        if path.name.startswith("test."):
            (data / path.name.replace("en-fr", "fr-en")).symlink_to(path)
    with pytest.raises(ValueError) as refused:
        load(pairless, data)
    assert "names no language pair" in str(refused.value) and "several pairs" in str(refused.value)
    assert "\n" not in str(refused.value)
