"""rnnsearch-evaluate's report (Table 1, Figure 2, Table 2, Appendix C) of the session's tiny checkpoint on
Multi30k, against sacreBLEU's command line and the training log."""

import math

import pytest
from conftest import evaluate_tiny, sacrebleu_cli
from sacremoses import MosesTokenizer

from rnnsearch_plugin.analysis import bleu
from rnnsearch_plugin.analysis.training_log import read_training_log
from rnnsearch_plugin.data.textio import read_lines, write_atomic
from rnnsearch_plugin.speed.tricks import Tricks


def test_bleu_figures_equal_sacrebleus_own_on_the_same_files(evaluation, multi30k, tmp_path):
    out, report = evaluation
    system = report["systems"]["tiny"]
    reference = multi30k / "raw" / "test1.fr"
    assert system["sacrebleu"] == pytest.approx(sacrebleu_cli(reference, out / "translations" / "tiny.txt"), abs=6e-5)
    tokenizer = MosesTokenizer("fr")
    for name, lines in {"hyp": read_lines(out / "translations" / "tiny.txt"), "ref": read_lines(reference)}.items():
        write_atomic(tmp_path / name, [tokenizer.tokenize(line, escape=False, return_str=True) for line in lines])
    multi_bleu = sacrebleu_cli(tmp_path / "ref", tmp_path / "hyp", "--tokenize", "none", "--smooth-method", "none")
    assert system["tokenised_bleu"] == pytest.approx(multi_bleu, abs=6e-5)
    subset = [read_lines(reference)[i] for i in system["no_unk_ids"]]
    write_atomic(tmp_path / "subset", subset)
    no_unk = sacrebleu_cli(tmp_path / "subset", out / "translations" / "tiny.no_unk.txt")
    assert system["no_unk_sacrebleu"] == pytest.approx(no_unk, abs=6e-5)
    assert 0 < system["no_unk_sentences"] < 1000  # the 1,000-word spm vocabulary leaves some <unk>


def test_chrf_stands_beside_bleu_with_both_signatures(evaluation, multi30k, tmp_path):
    out, report = evaluation
    system = report["systems"]["tiny"]
    reference = multi30k / "raw" / "test1.fr"
    assert system["chrf"] == pytest.approx(sacrebleu_cli(reference, out / "translations" / "tiny.txt", "-m", "chrf"), abs=6e-5)
    write_atomic(tmp_path / "subset", [read_lines(reference)[i] for i in system["no_unk_ids"]])
    assert system["no_unk_chrf"] == pytest.approx(
        sacrebleu_cli(tmp_path / "subset", out / "translations" / "tiny.no_unk.txt", "-m", "chrf"), abs=6e-5
    )
    assert system["chrf_signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|")
    assert "|tok:13a|" in system["signature"]  # French: sacreBLEU's default
    assert (report["source_lang"], report["target_lang"], report["tokenizer_note"]) == ("en", "fr", None)
    markdown = (out / "report.md").read_text()
    assert (
        f"| tiny | {system['sacrebleu']:.2f} | {system['chrf']:.2f} | {system['tokenised_bleu']:.2f} | "
        f"{system['no_unk_sentences']} | {system['no_unk_sacrebleu']:.2f} | {system['no_unk_chrf']:.2f} | "
    ) in markdown
    assert f"sacreBLEU signature: `{system['signature']}`; chrF2 signature: `{system['chrf_signature']}`." in markdown


def test_lengths_are_stated_in_the_source_languages_unit(evaluation):
    out, report = evaluation
    assert report["length_unit"] == "words (Moses tokens)"
    assert "## BLEU by source length in words (Moses tokens) (Figure 2, sacreBLEU only)" in (out / "report.md").read_text()
    assert "<!-- source sentence length in words (Moses tokens) -->" in (out / "bleu_by_length.svg").read_text()


def test_report_files_cover_every_sentence_once(evaluation, multi30k):
    out, report = evaluation
    rows = report["by_length"]["tiny"]
    assert [r["bucket"] for r in rows] == ["0-10", "10-20", "20-30", "30-40", "40-50", "50-60", "60+"]
    assert sum(r["sentences"] for r in rows) == 1000
    assert len((out / "bleu_by_length.csv").read_text().splitlines()) == 1 + len(rows)
    assert (out / "bleu_by_length.png").stat().st_size > 0 and "<svg" in (out / "bleu_by_length.svg").read_text()
    long_rows = [line for line in (out / "long_sentences.md").read_text().splitlines() if line[:3].strip("| ").isdigit()]
    lengths = bleu.source_lengths(read_lines(multi30k / "raw" / "test1.en"), "en")
    expected = [i for i, n in enumerate(lengths) if n >= 15]
    assert [int(line.split(" | ")[0][2:]) for line in long_rows] == expected and len(expected) > 20


def test_training_statistics_come_from_the_log(evaluation, checkpoint):
    statistics = read_training_log(checkpoint.parent / "train.log")
    assert statistics["updates"] == 300  # the fixture's --max-update
    assert statistics["device"] == "cpu" and statistics["unit"] == "nats per target token"
    valid = [line for line in (checkpoint.parent / "train.log").read_text().splitlines() if "valid on 'valid'" in line]
    best_bits = min(float(line.split("| loss ")[1].split(" ")[0]) for line in valid)
    assert statistics["dev_nll"] == pytest.approx(best_bits * math.log(2))
    assert evaluation[1]["training"]["tiny"]["updates"] == 300
    assert statistics["precision"] == "float32"


def test_train_nll_leaves_out_what_a_guided_runs_loss_adds(checkpoint, tmp_path):
    """A run with --alignment-lambda logs its weight with its configuration, and its total loss with
    nll_loss beside it: train_nll is the latter (here the fixture's own loss, moved to nll_loss
    under a larger total)."""
    log = (checkpoint.parent / "train.log").read_text().splitlines()
    guided = [line.replace("| loss ", "| loss 9.999 | nll_loss ", 1) if "| train_wall " in line else line for line in log]
    (tmp_path / "train.log").write_text("\n".join(["{'_name': 'chunked_cross_entropy', 'alignment_lambda': 2.0}", *guided]) + "\n")
    plain, statistics = read_training_log(checkpoint.parent / "train.log"), read_training_log(tmp_path / "train.log")
    assert statistics["train_nll"] == pytest.approx(plain["train_nll"])
    assert plain["train_nll"] != pytest.approx(9.999 * math.log(2))
    assert (plain["alignment_lambda"], statistics["alignment_lambda"]) == (0.0, 2.0)


def test_training_precision_is_the_one_the_engines_record_names(checkpoint, tmp_path):
    """fairseq-train logs the model summary with the engine's record (``CpuDecoder.extra_repr``):
    float32 in the fixture's run, bfloat16 where the record says so (tests/speed/test_precision.py
    reads it from a real --amp run where the processor has bfloat16 arithmetic)."""
    log = (checkpoint.parent / "train.log").read_text()
    assert read_training_log(checkpoint.parent / "train.log")["precision"] == "float32"
    assert log.count(Tricks().summary()) == 1
    (tmp_path / "train.log").write_text(log.replace(Tricks().summary(), Tricks(bfloat16=True).summary()))
    assert read_training_log(tmp_path / "train.log")["precision"] == "bfloat16 (--amp)"


def test_outputs_are_capped_as_fairseq_generate_caps_them(multi30k, checkpoint, tmp_path):
    """--max-len-a/--max-len-b: every translation, the No UNK ones too, of at most a x source + b pieces."""
    evaluate_tiny(multi30k, checkpoint, tmp_path, "--max-len-b", "2")
    for name in ("tiny.txt", "tiny.no_unk.txt"):
        outputs = read_lines(tmp_path / "translations" / name)
        assert len(outputs) > 900 and max(len(line.split()) for line in outputs) <= 2
