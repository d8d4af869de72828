"""Either direction, the pair from the data and the checkpoint (issue 39): Multi30k prepared
Fr->En; a Fr->En model trained on it evaluated Fr->En (French sources, English references); the
same model given the En->Fr data refused in one line naming both directions, by
rnnsearch-evaluate and by the Python API, before anything is written; its alignments scored
against the English-French gold standard transposed."""
import json
import sys
from pathlib import Path

import pytest

from conftest import SHARED_DATA, TINY, assert_one_line_error, run, sacrebleu_cli
from rnnsearch_plugin import load
from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_naacl, transposed
from rnnsearch_plugin.data.textio import read_lines


@pytest.fixture(scope="module")
def fr_en(tmp_path_factory):
    """Multi30k Fr->En (its first 300 lines of each file), the same En->Fr, and a tiny model trained
    Fr->En for 2 updates; both directions share the subword model and dictionaries."""
    folder = tmp_path_factory.mktemp("fr_en")
    local = folder / "multi30k"
    local.mkdir()
    for name in ("train", "val", "test_2016_flickr", "test_2017_flickr"):
        for lang in ("en", "fr"):
            lines = read_lines(Path(SHARED_DATA) / "multi30k" / f"{name}.{lang}.gz")[:300]
            (local / f"{name}.{lang}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    for source, target in (("fr", "en"), ("en", "fr")):
        run(sys.executable, "scripts/prepare_data.py", "multi30k", "-s", source, "-t", target, "--scheme", "spm",
            "--out", str(folder / f"{source}_{target}"), "--vocab-size", "500", "--local-dir", str(local))
    run("fairseq-train", str(folder / "fr_en" / "bin"), "--user-dir", "rnnsearch_plugin", "--task", "translation",
        "-s", "fr", "-t", "en", "--arch", "rnnsearch_small", *TINY, "--optimizer", "adam", "--max-tokens", "1000",
        "--max-update", "2", "--disable-validation", "--no-save-optimizer-state", "--save-dir", str(folder / "ck"),
        "--num-workers", "0")
    return folder / "fr_en", folder / "ck" / "checkpoint_last.pt"


def test_multi30k_reversed_is_binarized_fr_en(fr_en):
    data, _ = fr_en
    manifest = json.loads((data / "manifest.json").read_text())
    assert (manifest["source_lang"], manifest["target_lang"]) == ("fr", "en")
    assert manifest["fairseq_splits"]["test"] == "bin/test.fr-en"
    assert (data / "bin" / "train.fr-en.fr.bin").exists() and (data / "bin" / "train.fr-en.en.idx").exists()
    assert "--source-lang fr --target-lang en" in manifest["preprocess_command"]
    assert read_lines(data / "raw" / "test.fr") == read_lines(data.parent / "multi30k" / "test_2016_flickr.fr")
    again = run(sys.executable, "scripts/prepare_data.py", "multi30k", "--out", str(data), "--scheme", "spm",
                "--local-dir", str(data.parent / "multi30k"), check=False)  # En->Fr into the Fr->En folder
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert f"{data} holds multi30k prepared fr->en, not en->fr: prepare the other direction into another --out" in again.stderr
    other = run(sys.executable, "scripts/prepare_data.py", "multi30k", "-s", "de", "--out", str(data.parent / "de"),
                "--local-dir", str(data.parent / "multi30k"), check=False)
    assert "multi30k is en-fr: --source-lang/--target-lang take en and fr, in either order" in other.stderr


def test_a_fr_en_model_is_evaluated_fr_en(fr_en, tmp_path):
    data, checkpoint = fr_en
    result = run("rnnsearch-evaluate", "--prepared", str(data), "--split", "test1", "--system", f"fr_en={checkpoint}",
                 "--beam", "1", "--long", "1", "--out", str(tmp_path / "report"))
    assert "translating 300 sentences of test1 (fr->en, beam 1)" in result.stdout
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    reference = data / "raw" / "test1.en"
    assert report["systems"]["fr_en"]["sacrebleu"] == pytest.approx(
        sacrebleu_cli(reference, tmp_path / "report" / "translations" / "fr_en.txt"), abs=6e-5)
    rows = [line for line in (tmp_path / "report" / "long_sentences.md").read_text().splitlines() if line.startswith("| 0 |")]
    french, english = read_lines(data / "raw" / "test1.fr")[0], read_lines(reference)[0]
    assert rows[0].startswith(f"| 0 | {french} | {english} |")  # Appendix C: the French source, the English reference


def test_a_fr_en_model_given_en_fr_data_is_refused_in_one_line(fr_en, tmp_path):
    data, checkpoint = fr_en
    en_fr = data.with_name("en_fr")
    for name in ("dict.en.txt", "dict.fr.txt"):  # the same dictionaries: only the direction differs
        assert (en_fr / "bin" / name).read_text() == (data / "bin" / name).read_text()
    expected = f"{checkpoint} translates fr->en, but {en_fr / 'bin'} holds en->fr data: give it data prepared fr->en"
    result = run("rnnsearch-evaluate", "--prepared", str(en_fr), "--split", "test1", "--system", f"fr_en={checkpoint}",
                 "--beam", "1", "--out", str(tmp_path / "report"), check=False)
    assert_one_line_error(result, "rnnsearch-evaluate: error: " + expected)
    assert not (tmp_path / "report").exists()
    with pytest.raises(ValueError, match="translates fr->en, but .* holds en->fr data"):
        load(checkpoint, en_fr / "bin")


def test_a_fr_en_model_is_scored_against_the_en_fr_gold_transposed(fr_en, tmp_path):
    data, checkpoint = fr_en
    gold = Path(SHARED_DATA) / "alignment-gold"
    result = run("rnnsearch-aer", "--path", str(checkpoint), "--data", str(data / "bin"), "--gold", str(gold),
                 "--out", str(tmp_path / "aer"))
    assert result.stdout.startswith("| the en-fr gold standard transposed for this fr->en model\n")
    assert "(the en-fr gold standard transposed for this fr->en model)" in (tmp_path / "aer" / "aer.md").read_text()
    scores = json.loads((tmp_path / "aer" / "aer.json").read_text())
    english, french = read_lines(gold / "dev.e"), read_lines(gold / "dev.f")
    assert scores["argmax"]["links"] == sum(len(line.split()) for line in english)  # one link per English (target) word
    diagonal = {n: diagonal_links(len(f.split()), len(e.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    assert scores["diagonal"] == pytest.approx(alignment_error_rate(diagonal, transposed(read_naacl(gold / "dev.wa.nonullalign"))))
