"""Either direction, the pair from the data and the checkpoint: Multi30k prepared
Fr->En and a tiny Fr->En model trained on it, end to end: fairseq-generate, rnnsearch-evaluate
(French sources, English references), rnnsearch-heatmaps (French along the source axis),
rnnsearch-aer (its alignments scored against the English-French gold standard transposed),
rnnsearch-serve (/health fr->en, a French sentence answered as fairseq-generate answers it); the
same model given the En->Fr data refused in one line naming both directions, by rnnsearch-evaluate
and by the Python API, before anything is written."""

import json
import math
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA, assert_one_line_error, fairseq_decode, lines_of, run, sacrebleu_cli

from rnnsearch_plugin import load
from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_naacl, transposed
from rnnsearch_plugin.data.textio import read_lines

sys.path.insert(0, str(REPO / "tooling"))
from serve_load import call, serving  # noqa: E402


def test_multi30k_reversed_is_binarized_fr_en(fr_en):
    data, _ = fr_en
    manifest = json.loads((data / "manifest.json").read_text())
    assert (manifest["source_lang"], manifest["target_lang"]) == ("fr", "en")
    assert manifest["fairseq_splits"]["test"] == "bin/test.fr-en"
    assert (data / "bin" / "train.fr-en.fr.bin").exists() and (data / "bin" / "train.fr-en.en.idx").exists()
    assert "--source-lang fr --target-lang en" in manifest["preprocess_command"]
    assert read_lines(data / "raw" / "test.fr") == read_lines(data.parent / "multi30k" / "test_2016_flickr.fr")
    again = run(
        sys.executable,
        "scripts/prepare_data.py",
        "multi30k",
        "--out",
        str(data),
        "--scheme",
        "spm",
        "--local-dir",
        str(data.parent / "multi30k"),
        check=False,
    )  # En->Fr into the Fr->En folder
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert f"{data} holds multi30k prepared fr->en, not en->fr: prepare the other direction into another --out" in again.stderr
    other = run(
        sys.executable,
        "scripts/prepare_data.py",
        "multi30k",
        "-s",
        "de",
        "--out",
        str(data.parent / "de"),
        "--local-dir",
        str(data.parent / "multi30k"),
        check=False,
    )
    assert "multi30k is en-fr: --source-lang/--target-lang take en and fr, in either order" in other.stderr


def test_a_fr_en_model_is_evaluated_fr_en(fr_en, tmp_path):
    data, checkpoint = fr_en
    result = run(
        "rnnsearch-evaluate",
        "--prepared",
        str(data),
        "--split",
        "test1",
        "--system",
        f"fr_en={checkpoint}",
        "--beam",
        "1",
        "--long",
        "1",
        "--out",
        str(tmp_path / "report"),
    )
    assert "translating 300 sentences of test1 (fr->en, beam 1)" in result.stdout
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    reference = data / "raw" / "test1.en"
    assert report["systems"]["fr_en"]["sacrebleu"] == pytest.approx(
        sacrebleu_cli(reference, tmp_path / "report" / "translations" / "fr_en.txt"), abs=6e-5
    )
    rows = [line for line in (tmp_path / "report" / "long_sentences.md").read_text().splitlines() if line.startswith("| 0 |")]
    french, english = read_lines(data / "raw" / "test1.fr")[0], read_lines(reference)[0]
    assert rows[0].startswith(f"| 0 | {french} | {english} |")  # Appendix C: the French source, the English reference


def test_a_fr_en_model_given_en_fr_data_is_refused_in_one_line(fr_en, tmp_path):
    data, checkpoint = fr_en
    en_fr = data.with_name("en_fr")
    for name in ("dict.en.txt", "dict.fr.txt"):  # the same dictionaries: only the direction differs
        assert (en_fr / "bin" / name).read_text() == (data / "bin" / name).read_text()
    expected = f"{checkpoint} translates fr->en, but {en_fr / 'bin'} holds en->fr data: give it data prepared fr->en"
    result = run(
        "rnnsearch-evaluate",
        "--prepared",
        str(en_fr),
        "--split",
        "test1",
        "--system",
        f"fr_en={checkpoint}",
        "--beam",
        "1",
        "--out",
        str(tmp_path / "report"),
        check=False,
    )
    assert_one_line_error(result, "rnnsearch-evaluate: error: " + expected)
    assert not (tmp_path / "report").exists()
    with pytest.raises(ValueError, match="translates fr->en, but .* holds en->fr data"):
        load(checkpoint, en_fr / "bin")


def test_a_fr_en_model_is_scored_against_the_en_fr_gold_transposed(fr_en, tmp_path):
    data, checkpoint = fr_en
    gold = Path(SHARED_DATA) / "alignment-gold"
    result = run(
        "rnnsearch-aer", "--path", str(checkpoint), "--data", str(data / "bin"), "--gold", str(gold), "--out", str(tmp_path / "aer")
    )
    assert result.stdout.startswith("| the en-fr gold standard transposed for this fr->en model\n")
    assert "(the en-fr gold standard transposed for this fr->en model)" in (tmp_path / "aer" / "aer.md").read_text()
    scores = json.loads((tmp_path / "aer" / "aer.json").read_text())
    english, french = read_lines(gold / "dev.e"), read_lines(gold / "dev.f")
    assert scores["argmax"]["links"] == sum(len(line.split()) for line in english)  # one link per English (target) word
    diagonal = {n: diagonal_links(len(f.split()), len(e.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    assert scores["diagonal"] == pytest.approx(alignment_error_rate(diagonal, transposed(read_naacl(gold / "dev.wa.nonullalign"))))


@pytest.fixture(scope="module")
def fr_en_generated(fr_en) -> str:
    """fairseq-generate's output of the Fr->En model on the Fr->En test set (beam 1, detokenised)."""
    data, checkpoint = fr_en
    return run(
        *fairseq_decode("fairseq-generate", data / "bin", checkpoint, pair=("fr", "en")),
        "--beam",
        "1",
        "--batch-size",
        "64",
        "--remove-bpe",
        "sentencepiece",
    ).stdout


def test_fairseq_generate_translates_french_sources_against_english_references(fr_en, fr_en_generated):
    data, _ = fr_en
    sources, targets = lines_of(fr_en_generated, "S"), lines_of(fr_en_generated, "T")
    french, english = read_lines(data / "raw" / "test.fr"), read_lines(data / "raw" / "test.en")
    assert len(lines_of(fr_en_generated, "D")) == len(french) == 300
    known = [i for i in map(int, sources) if "<unk>" not in sources[str(i)] + targets[str(i)]]
    assert len(known) > 100
    assert all(
        (sources[str(i)], targets[str(i)]) == (" ".join(french[i].split()), " ".join(english[i].split())) for i in known
    )  # sentencepiece collapses runs of spaces


def test_heatmaps_put_the_french_source_along_the_top(fr_en, tmp_path):
    """The SVG names each label in a comment, the source (x-axis) labels first."""
    data, checkpoint = fr_en
    run(
        "rnnsearch-heatmaps",
        "--path",
        str(checkpoint),
        "--data",
        str(data / "bin"),
        "--input",
        str(data / "raw" / "test.fr"),
        "--reference",
        str(data / "raw" / "test.en"),
        "--ids",
        "1",
        "--format",
        "svg",
        "--out",
        str(tmp_path),
    )
    labels = re.findall(r"<!-- (.*?) -->", (tmp_path / "alignment_1.svg").read_text())
    french, english = read_lines(data / "raw" / "test.fr")[1].split(), read_lines(data / "raw" / "test.en")[1].split()
    assert labels == [*french, "&lt;/s&gt;", *english, "&lt;/s&gt;", "sentence 1"]


def test_serve_answers_a_french_sentence_as_fairseq_generate_does(fr_en, fr_en_generated, tmp_path):
    data, checkpoint = fr_en
    with serving(checkpoint, data / "bin", log=tmp_path / "serve.log", cwd=tmp_path) as (address, _):
        _, health = call(address, "health")
        status, answer = call(address, "translate", {"sentences": read_lines(data / "raw" / "test.fr")[:2], "beam": 1, "alignment": False})
    assert [(health[side]["language"], health[side]["dictionary"]) for side in ("source", "target")] == [
        ("fr", "dict.fr.txt"),
        ("en", "dict.en.txt"),
    ]
    assert status == 200
    expected, scores = lines_of(fr_en_generated, "D"), lines_of(fr_en_generated, "H")
    for number, translation in enumerate(answer["translations"]):
        best = translation["hypotheses"][0]
        assert best["translation"] == expected[str(number)].split("\t")[1]
        assert abs(best["score"] / math.log(2) - float(scores[str(number)].split("\t")[0])) < 1e-4  # H- is in base 2


def test_the_benchmark_and_load_scripts_take_the_pair_from_the_data(fr_en):
    """benchmark.py trains and translates the data's pair; a folder that is not binarized is refused
    in one line (serve_load.py and interactive_load.py read the pair the same way)."""
    import benchmark
    from benchmarking.fairseq_options import pair_options, trainer_options

    data, _ = fr_en
    opts = benchmark.parse_args(["--data", str(data / "bin"), "--sections", "train,decode"])
    assert pair_options(opts) == ["-s", "fr", "-t", "en"]
    assert " -s fr -t en " in " ".join(trainer_options(opts)) + " "
    with pytest.raises(SystemExit, match=f"^benchmark: error: {data} is not a binarized folder of one language pair"):
        benchmark.parse_args(["--data", str(data), "--sections", "train"])
