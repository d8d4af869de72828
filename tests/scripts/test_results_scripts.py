"""scripts/reproduce_results.sh and scripts/publish_results.py (issue 7's results page), on the
session's tiny checkpoint: the page's figures are the reports' own, the length gap is the
Figure 2 buckets' BLEU, and bad requests end in one line."""
import csv
import json
import shutil
import sys
from pathlib import Path

from conftest import SHARED_DATA, run


def fake_work(multi30k: Path, report: Path, aer: Path, work: Path) -> None:
    """A WORK folder as reproduce_results.sh leaves it, every report being the tiny model's on
    Multi30k test_2017 (the 'hansards' corpus = Multi30k with test_2017 as its test split)."""
    (work / "multi30k").symlink_to(multi30k)
    (work / "hansards" / "raw").mkdir(parents=True)
    shutil.copyfile(multi30k / "manifest.json", work / "hansards" / "manifest.json")
    for lang in ("en", "fr"):
        shutil.copyfile(multi30k / "raw" / f"test1.{lang}", work / "hansards" / "raw" / f"test.{lang}")
    for name in ("multi30k.test", "multi30k.test1", "hansards.test"):
        shutil.copytree(report, work / "report" / name)
    for corpus in ("multi30k", "hansards"):
        shutil.copytree(aer, work / "report" / f"{corpus}.aer")
    (work / "wall_times.tsv").write_text(  # a run that chose an option, then the reported one run twice
        f"fairseq-train\t{work}/checkpoints/multi30k/tiny.dropout0.3/train.log\t2700\n"
        f"fairseq-train\t{work}/checkpoints/multi30k/tiny/train.log\t2690\n"
        f"fairseq-train\t{work}/checkpoints/multi30k/tiny/train.log\t2712\n")


def test_results_page_reports_the_evaluations_figures(evaluation, multi30k, checkpoint, tmp_path):
    out, report = evaluation
    aer = tmp_path / "aer"
    run("rnnsearch-aer", "--path", str(checkpoint), "--data", str(multi30k / "bin"),
        "--gold", str(Path(SHARED_DATA) / "alignment-gold"), "--out", str(aer))
    work = tmp_path / "work"
    work.mkdir()
    fake_work(multi30k, out, aer, work)
    run(sys.executable, "scripts/publish_results.py", "--work", str(work), "--out", str(tmp_path / "page"))
    page = (tmp_path / "page" / "README.md").read_text()
    tiny = report["systems"]["tiny"]
    assert f"| tiny | {tiny['sacrebleu']:.2f} / {tiny['tokenised_bleu']:.2f} | {tiny['sacrebleu']:.2f} / " in page
    # the options column is the checkpoint's own (conftest trains it with --dropout 0.1 --lr 0.003 --seed 3)
    assert ("| `--arch rnnsearch_small --encoder-dropout-in 0.1 --encoder-dropout-out 0.0 --decoder-dropout-in 0.1 "
            "--decoder-dropout-out 0.1 --readout-state previous --lr 0.003 --lr-scheduler fixed --seed 3` |") in page
    with open(out / "bleu_by_length.csv") as rows:
        bucket = next(r for r in csv.DictReader(rows) if r["bucket"] == "10-20")
    assert f"| tiny | {bucket['bleu']} ({bucket['sentences']}) |" in page
    diagonal = json.loads((aer / "aer.json").read_text())["diagonal"]["aer"]
    assert "| diagonal | diagonal | " in page and f"{diagonal:.3f} |" in page
    assert "| fairseq-train | WORK/checkpoints/multi30k/tiny/train.log | 45.2 |" in page
    assert "tiny.dropout0.3" not in page and "| 44.8 |" not in page
    for copied in ("multi30k.test/bleu_by_length.png", "hansards.test/report.md", "hansards.aer/aer.md"):
        assert (tmp_path / "page" / copied).stat().st_size > 0
    assert not (tmp_path / "page" / "multi30k.test" / "translations").exists()


def test_results_scripts_refuse_unknown_stages_and_missing_reports(tmp_path):
    stage = run("bash", "scripts/reproduce_results.sh", "multi30k", "evaluation", check=False)
    assert stage.returncode == 2
    assert stage.stderr.strip() == ("reproduce_results.sh: error: unknown stage 'evaluation' (stages: prepare "
                                    "multi30k hansards multi30k-rnnencdec evaluate publish)")
    publish = run(sys.executable, "scripts/publish_results.py", "--work", str(tmp_path), "--out", str(tmp_path / "page"),
                  check=False)
    assert publish.returncode == 1 and len(publish.stderr.strip().splitlines()) == 1
    assert "no report for multi30k.test, multi30k.test1, hansards.test" in publish.stderr
    assert not (tmp_path / "page").exists()


def test_options_name_the_learning_rate_schedule():
    """A run on fairseq's reduce_lr_on_plateau (RNNsearch on Multi30k) is only reproducible with its
    shrink factor and patience; a fixed rate has nothing more to say."""
    from types import SimpleNamespace

    from omegaconf import OmegaConf

    from rnnsearch_plugin.cli.evaluate import model_options

    def options(lr_scheduler: dict) -> dict:
        cfg = OmegaConf.create({"model": {"_name": "rnnsearch_small", "dropout": 0.5}, "optimization": {"lr": [0.003]},
                                "lr_scheduler": lr_scheduler, "common": {"seed": 2}})
        return model_options(SimpleNamespace(cfg=cfg))

    plateau = {"_name": "reduce_lr_on_plateau", "lr_shrink": 0.5, "lr_patience": 0, "lr_threshold": 1e-4}
    assert options(plateau) == {"arch": "rnnsearch_small", "lr": "0.003", "lr_scheduler": "reduce_lr_on_plateau",
                                "lr_shrink": 0.5, "lr_patience": 0, "seed": 2}
    assert options({"_name": "fixed", "lr_shrink": 0.1, "force_anneal": None}) == {
        "arch": "rnnsearch_small", "lr": "0.003", "lr_scheduler": "fixed", "seed": 2}
