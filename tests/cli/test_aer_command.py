"""rnnsearch-aer on the Hansards gold standard (NAACL format) and on Pharaoh gold files, scoring a
checkpoint or an alignment file from any aligner."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import SHARED_DATA, http_mirror, run

from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_naacl
from rnnsearch_plugin.analysis.links import pharaoh_line
from rnnsearch_plugin.cli.aer import main as aer_main
from rnnsearch_plugin.data import alignment_gold
from rnnsearch_plugin.data.textio import read_lines


def test_aer_command_scores_the_model_and_the_diagonal_against_the_gold(multi30k, checkpoint, tmp_path):
    gold_dir = Path(SHARED_DATA) / "alignment-gold"
    run("rnnsearch-aer", "--path", str(checkpoint), "--data", str(multi30k / "bin"), "--gold", str(gold_dir), "--out", str(tmp_path))
    scores = json.loads((tmp_path / "aer.json").read_text())
    french = read_lines(gold_dir / "dev.f")
    assert scores["argmax"]["links"] == sum(len(line.split()) for line in french)  # one link per French word
    assert scores["threshold 0.3"]["links"] >= scores["argmax"]["links"]
    english = read_lines(gold_dir / "dev.e")
    diagonal = {n: diagonal_links(len(e.split()), len(f.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    assert scores["diagonal"] == pytest.approx(alignment_error_rate(diagonal, read_naacl(gold_dir / "dev.wa.nonullalign")))
    assert 0 <= scores["argmax"]["aer"] <= 1 and "| diagonal |" in (tmp_path / "aer.md").read_text()
    # the diagonal's links written as an alignment file (0-based) and scored without the model: the same row
    aligned = tmp_path / "diagonal.align"
    aligned.write_text("".join(pharaoh_line({(e - 1, f - 1) for e, f in diagonal[n]}) + "\n" for n in sorted(diagonal)))
    run("rnnsearch-aer", "--alignments", str(aligned), "--name", "diagonal", "--gold", str(gold_dir), "--out", str(tmp_path / "file"))
    assert json.loads((tmp_path / "file" / "aer.json").read_text()) == {"diagonal": scores["diagonal"]}


def pharaoh_gold(folder: Path, name: str, sources: list[str], targets: list[str], links: str) -> list[str]:
    """rnnsearch-aer's options for a Pharaoh gold file and its sentences, written to ``folder``."""
    paths = [folder / f"{name}.{kind}" for kind in ("talp", "src", "tgt")]
    for path, text in zip(paths, (links, "\n".join(sources) + "\n", "\n".join(targets) + "\n")):
        path.write_text(text, encoding="utf-8")
    return ["--gold", str(paths[0]), "--gold-source", str(paths[1]), "--gold-target", str(paths[2])]


ENGLISH, FRENCH = ["a dog runs .", "two men"], ["un chien court .", "deux hommes sont"]
# (English, French), 0-based: S = {(0,0), (1,1), (3,3)} + P {(2,2)}; S = {(0,0), (1,2)} + P {(0,1)}
EN_FR_LINKS = "0-0 1-1 2?2 3-3\n0-0 1-2 0?1\n"
FR_EN_LINKS = "0-0 1-1 2?2 3-3\n0-0 2-1 1?0\n"  # the same links, (French, English)


def aer_error(argv: list[str]) -> str:
    """rnnsearch-aer's one-line error, run in this process (the command's imports are already here)."""
    with pytest.raises(SystemExit) as exit_:
        aer_main(argv)
    assert "\n" not in str(exit_.value)
    return str(exit_.value)


def test_pharaoh_gold_scores_the_model_in_either_direction_of_the_gold(multi30k, checkpoint, tmp_path, capsys):
    model = ["--path", str(checkpoint), "--data", str(multi30k / "bin")]
    aer_main([*model, *pharaoh_gold(tmp_path, "en_fr", ENGLISH, FRENCH, EN_FR_LINKS), "--out", str(tmp_path / "en_fr")])
    assert not capsys.readouterr().out.startswith("| the")
    aer_main(
        [*model, *pharaoh_gold(tmp_path, "fr_en", FRENCH, ENGLISH, FR_EN_LINKS), "--gold-langs", "fr-en", "--out", str(tmp_path / "fr_en")]
    )
    assert capsys.readouterr().out.startswith("| the fr-en gold standard transposed for this en->fr model\n")
    scores = json.loads((tmp_path / "en_fr" / "aer.json").read_text())
    assert json.loads((tmp_path / "fr_en" / "aer.json").read_text()) == scores
    assert scores["argmax"]["links"] == 7  # one link per French word
    # the diagonal, worked by hand: the identity on sentence 1, (1,1) (2,2) (2,3) on sentence 2 (1-based);
    # |A| = 7, |S| = 5, |A∩S| = 3 + 2, |A∩P| = 4 + 2: precision 6/7, recall 1, AER 1 - 11/12
    assert scores["diagonal"] == pytest.approx({"precision": 6 / 7, "recall": 1.0, "aer": 1 / 12, "sentences": 2, "links": 7})
    assert aer_error([*model, *pharaoh_gold(tmp_path, "de_en", ENGLISH, FRENCH, EN_FR_LINKS), "--gold-langs", "de-en"]) == (
        f"rnnsearch-aer: error: the gold standard aligns de with en, but {checkpoint} translates en->fr: give a gold "
        "standard of en and fr (Pharaoh: --gold FILE --gold-source FILE --gold-target FILE)"
    )
    short = aer_error([*model, *pharaoh_gold(tmp_path, "short", ENGLISH, FRENCH, "0-0\n"), "--out", str(tmp_path / "short")])
    assert short.startswith(f"rnnsearch-aer: error: {tmp_path / 'short.talp'} has 1 lines but the gold source has 2")
    assert not (tmp_path / "short").exists()
    assert aer_error([*model, "--gold", str(tmp_path / "short.talp")]).startswith(
        f"rnnsearch-aer: error: --gold {tmp_path / 'short.talp'} is a file: give its tokenised sentences with --gold-source"
    )


def test_the_first_word_gets_back_its_capital_only_where_the_model_knows_it():
    """The gold set writes 'the commissionners went on :' for a sentence that began 'The'."""
    from types import SimpleNamespace

    from fairseq.data import Dictionary

    from rnnsearch_plugin.cli.aer import initial_capital

    source, target = Dictionary(), Dictionary()
    for word in ("The", "the", "went"):
        source.add_symbol(word)
    target.add_symbol("le")  # a model trained on lowercased French
    model = SimpleNamespace(src_dict=source, tgt_dict=target, tokenize=lambda text: text, apply_bpe=lambda text: text)
    assert initial_capital(model, ["the", "went"], target=False) == ["The", "went"]
    assert initial_capital(model, ["le", "projet"], target=True) == ["le", "projet"]
    assert initial_capital(model, ["I", "never"], target=False) == ["I", "never"]
    assert initial_capital(model, ["$", "250,000"], target=False) == ["$", "250,000"]


# (English, French), 0-based, against EN_FR_LINKS: sentence 1 has (0,0) and (1,1) sure, (2,3) and (3,2) in neither;
# sentence 2 has (0,1) possible and (1,1) in neither.
EN_FR_ALIGNED = "0-0 1-1 2-3 3-2\n0-1 1-1\n"


def test_an_alignment_file_is_scored_without_a_model(tmp_path, capsys):
    gold = pharaoh_gold(tmp_path, "en_fr", ENGLISH, FRENCH, EN_FR_LINKS)
    aligned = tmp_path / "aligner.en-fr"
    aligned.write_text(EN_FR_ALIGNED)
    aer_main(["--alignments", str(aligned), *gold, "--out", str(tmp_path / "out")])
    # |A| = 4 + 2 = 6, |S| = 3 + 2 = 5, |A∩S| = 2 + 0 = 2, |A∩P| = 2 + 1 = 3:
    # precision 3/6, recall 2/5, AER = 1 - (2 + 3) / (6 + 5) = 6/11
    expected = {"precision": 1 / 2, "recall": 2 / 5, "aer": 6 / 11, "sentences": 2, "links": 6}
    assert json.loads((tmp_path / "out" / "aer.json").read_text()) == {"aligner.en-fr": pytest.approx(expected)}
    assert "| aligner.en-fr | 0.500 | 0.400 | 0.545 |" in capsys.readouterr().out
    heading = f"# Alignment error rate, 2 sentences of {tmp_path / 'en_fr.talp'}, {aligned}\n"
    assert (tmp_path / "out" / "aer.md").read_text().startswith(heading)
    # the same links counted from 1, and the same links written (French, English) against the gold named en-fr
    one_based = tmp_path / "one_based"
    one_based.write_text("1-1 2-2 3-4 4-3\n1-2 2-2\n")
    aer_main(["--alignments", str(one_based), "--alignments-one-based", "--name", "eflomal", *gold, "--out", str(tmp_path / "one")])
    assert json.loads((tmp_path / "one" / "aer.json").read_text()) == {"eflomal": pytest.approx(expected)}
    french_first = tmp_path / "aligner.fr-en"
    french_first.write_text("0-0 1-1 3-2 2-3\n1-0 1-1\n")
    capsys.readouterr()
    aer_main(
        ["--alignments", str(french_first), "--alignments-langs", "fr-en", *gold, "--gold-langs", "en-fr", "--out", str(tmp_path / "fr_en")]
    )
    assert capsys.readouterr().out.startswith("| the en-fr gold standard transposed for this fr->en alignment\n")
    assert json.loads((tmp_path / "fr_en" / "aer.json").read_text()) == {"aligner.fr-en": pytest.approx(expected)}


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "0-0\n",
            "{file} has 1 lines but there are 2 source and 2 target sentences: give one line of links per sentence pair, in their order",
        ),
        (
            "0-0\n2-0\n",
            "{file}:2: link 2-0 is out of range: the source has 2 words and the target 3 (positions are 0-based): "
            "link words of this sentence pair, the source word first",
        ),
        ("0-0\n0?0\n", "{file}:2: possible links (i?j, ipj) belong in a gold standard"),
    ],
)
def test_a_bad_alignment_file_stops_in_one_line_and_writes_nothing(tmp_path, text, message):
    aligned = tmp_path / "aligned"
    aligned.write_text(text)
    error = aer_error(
        ["--alignments", str(aligned), *pharaoh_gold(tmp_path, "gold", ENGLISH, FRENCH, EN_FR_LINKS), "--out", str(tmp_path / "out")]
    )
    assert error.startswith("rnnsearch-aer: error: " + message.format(file=aligned))
    assert not (tmp_path / "out").exists()


def test_a_checkpoint_or_an_alignment_file_not_both(tmp_path):
    gold = pharaoh_gold(tmp_path, "gold", ENGLISH, FRENCH, EN_FR_LINKS)
    aligned = tmp_path / "aligned"
    aligned.write_text(EN_FR_ALIGNED)
    assert aer_error(["--alignments", str(aligned), "--path", "ck.pt", "--data", "bin", *gold]) == (
        "rnnsearch-aer: error: --alignments scores a file, --path and --data a checkpoint: give one of them"
    )
    assert aer_error(["--path", "ck.pt", *gold]) == (
        "rnnsearch-aer: error: give a checkpoint to score (--path CKPT --data BIN, the folder it was trained on) or an "
        "alignment file (--alignments FILE)"
    )
    assert aer_error(["--path", "ck.pt", "--data", "bin", *gold, "--name", "x", "--alignments-one-based"]) == (
        "rnnsearch-aer: error: --name, --alignments-one-based: only with an alignment file to score (--alignments FILE)"
    )
    assert aer_error(["--alignments", str(aligned), *gold, "--alignments-langs", "fr"]) == (
        "rnnsearch-aer: error: --alignments-langs fr: name the source and target languages as SRC-TGT, e.g. de-en"
    )
    assert aer_error(["--alignments", str(aligned), *gold, "--gold-langs", "en-fr", "--alignments-langs", "de-en"]) == (
        f"rnnsearch-aer: error: the gold standard aligns en with fr, but {aligned} aligns de->en: give a gold standard "
        "of de and en (Pharaoh: --gold FILE --gold-source FILE --gold-target FILE)"
    )


def test_symmetrised_rows_score_what_rnnsearch_align_writes(multi30k, checkpoint, fr_en, tmp_path):
    """With a model of the other direction rnnsearch-aer adds a row per extraction (argmax, each
    --threshold) and symmetrisation; each must score exactly as rnnsearch-align's output for the
    same gold sentences, scored as an alignment file (two routes: in-process word weights, and the
    command's streamed corpus alignment through a Pharaoh file)."""
    from rnnsearch_plugin.cli.align import main as align_main

    sources, targets = (read_lines(multi30k / "raw" / f"test.{lang}")[:5] for lang in ("en", "fr"))
    files = {name: tmp_path / name for name in ("gold.en", "gold.fr", "gold.align")}
    files["gold.en"].write_text("".join(line + "\n" for line in sources), encoding="utf-8")
    files["gold.fr"].write_text("".join(line + "\n" for line in targets), encoding="utf-8")
    files["gold.align"].write_text("".join(f"0-0 {len(s.split()) - 1}?{len(t.split()) - 1}\n" for s, t in zip(sources, targets)))
    gold = ["--gold", str(files["gold.align"]), "--gold-source", str(files["gold.en"]), "--gold-target", str(files["gold.fr"])]
    model = [
        "--path",
        str(checkpoint),
        "--data",
        str(multi30k / "bin"),
        "--reverse-path",
        str(fr_en[1]),
        "--reverse-data",
        str(fr_en[0] / "bin"),
    ]
    aer_main([*model, *gold, "--threshold", "0.3", "0.1", "--out", str(tmp_path / "both")])
    rows = json.loads((tmp_path / "both" / "aer.json").read_text())
    assert {"argmax", "threshold 0.3", "threshold 0.1", "diagonal", "argmax grow-diag-final-and", "threshold 0.1 union"} <= rows.keys()
    assert rows["threshold 0.1"]["links"] >= rows["threshold 0.3"]["links"] >= rows["argmax"]["links"]
    for extraction, threshold, symmetrisation in (
        ("argmax", "0.3", "grow-diag-final-and"),
        ("argmax", "0.3", "intersect"),
        ("threshold", "0.3", "union"),
        ("threshold", "0.1", "intersect"),
    ):
        out = tmp_path / f"{extraction}.{threshold}.{symmetrisation}"
        io = ["--source", str(files["gold.en"]), "--target", str(files["gold.fr"]), "--out", str(out)]
        align_main([*model, *io, "--links", extraction, "--threshold", threshold, "--symmetrise", symmetrisation])
        aer_main(["--alignments", str(out), "--name", "file", *gold, "--out", str(tmp_path / f"scored.{out.name}")])
        scored = json.loads((tmp_path / f"scored.{out.name}" / "aer.json").read_text())["file"]
        row = f"{extraction if extraction == 'argmax' else f'threshold {threshold}'} {symmetrisation}"
        assert rows[row] == pytest.approx(scored), row


def test_a_reverse_model_goes_with_its_data_and_a_checkpoint(multi30k, checkpoint, tmp_path, capsys):
    gold = ["--gold", str(Path(SHARED_DATA) / "alignment-gold")]
    with pytest.raises(SystemExit) as stopped:
        aer_main(["--path", str(checkpoint), "--data", str(multi30k / "bin"), "--reverse-path", str(checkpoint), *gold])
    assert "--reverse-path and --reverse-data go together" in str(stopped.value)
    assert not any(tmp_path.iterdir())


def diagonal_alignments(folder: Path) -> Path:
    """The diagonal's links of the Hansards gold sentences, as an alignment file (0-based)."""
    english, french = read_lines(folder / "dev.e"), read_lines(folder / "dev.f")
    path = folder.parent / "diagonal.align"
    lines = [pharaoh_line({(e - 1, f - 1) for e, f in diagonal_links(len(en.split()), len(fr.split()))}) for en, fr in zip(english, french)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_the_gold_standard_is_downloaded_into_an_empty_folder_and_read_from_a_full_one(tmp_path, capsys):
    """--download-gold from a mirror on this machine: the official files, byte for byte, and the
    same AER as from the folder that held them; a folder that holds them downloads nothing."""
    shared = Path(SHARED_DATA) / "alignment-gold"
    diagonal = ["--alignments", str(diagonal_alignments(shared)), "--name", "diagonal"]
    aer_main([*diagonal, "--gold", str(shared), "--out", str(tmp_path / "local")])
    with http_mirror(shared, "gold") as url:
        aer_main([*diagonal, "--gold", str(tmp_path / "gold"), "--download-gold", "--gold-mirror", url, "--out", str(tmp_path / "fetched")])
    assert all((tmp_path / "gold" / name).read_bytes() == (shared / name).read_bytes() for name in alignment_gold.FILES)
    assert sorted(path.name for path in (tmp_path / "gold").iterdir()) == sorted(alignment_gold.FILES)
    assert (tmp_path / "fetched" / "aer.json").read_text() == (tmp_path / "local" / "aer.json").read_text()
    assert capsys.readouterr().out.count("| downloading") == len(alignment_gold.FILES)
    aer_main([*diagonal, "--gold", str(tmp_path / "gold"), "--download-gold", "--gold-mirror", "http://127.0.0.1:9/none"])
    assert "| downloading" not in capsys.readouterr().out


def test_a_download_that_fails_or_differs_leaves_no_gold_file_and_says_so_in_one_line(tmp_path):
    shared = Path(SHARED_DATA) / "alignment-gold"
    tampered = tmp_path / "tampered"
    shutil.copytree(shared, tampered)
    (tampered / "dev.wa.nonullalign").write_text("1 1 1 S\n")
    diagonal = ["--alignments", str(diagonal_alignments(shared)), "--gold", str(tmp_path / "gold"), "--download-gold"]
    with http_mirror(tampered, "gold") as url:
        differs = aer_error([*diagonal, "--gold-mirror", url])
        missing = aer_error([*diagonal[:2], "--gold", str(tmp_path / "other"), "--download-gold", "--gold-mirror", url + "/none"])
    assert "dev.wa.nonullalign" in differs and "SHA-256 differs" in differs
    assert sorted(path.name for path in (tmp_path / "gold").iterdir()) == ["dev.e", "dev.f"]  # a rerun fetches the rest
    assert "downloading" in missing and "dev.e" in missing and "--gold a folder that holds" in missing
    assert not (tmp_path / "other").exists() or not list((tmp_path / "other").iterdir())
