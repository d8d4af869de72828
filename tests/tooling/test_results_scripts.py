"""tooling/reproduce_results.sh and tooling/publish_results.py (the results page and the
directions page), on the session's tiny checkpoint: the page's figures are the reports' own, the
length gap is the Figure 2 buckets' BLEU, and bad requests end in one line."""

import csv
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from conftest import REPO, SHARED_DATA, run

sys.path.insert(0, str(REPO / "scripts"))
from recipe import QUICKSTART, recipe_options  # noqa: E402


def training_log(dev_losses: list[float], updates: int = 100) -> str:
    """A fairseq-train --log-file with one epoch summary and a validation per loss (bits)."""
    lines = [f"epoch 001 | valid on 'valid' subset | loss {loss} | num_updates {updates}" for loss in dev_losses]
    return "\n".join([*lines, f"epoch 001 | loss 5.0 | num_updates {updates} | train_wall 100 | wall 120"]) + "\n"


def trial(folder: Path, dropout: str, rate: str, dev_losses: list[float]) -> Path:
    folder.mkdir(parents=True)
    (folder / "dropout.txt").write_text(dropout + "\n")
    (folder / "rate.txt").write_text(rate + "\n")
    (folder / "train.log").write_text(training_log(dev_losses))
    return folder


def renamed_report(report: Path, target: Path, scores: dict[str, float]) -> None:
    """REPORT (one system, 'tiny') as the report of the systems named in SCORES, each with the tiny
    model's translations, training and options but the given sacreBLEU."""
    shutil.copytree(report, target)
    data = json.loads((report / "report.json").read_text())
    tiny, training = data["systems"].pop("tiny"), data["training"].pop("tiny")
    by_length = data["by_length"].pop("tiny")
    for name, score in scores.items():
        data["systems"][name] = tiny | {"sacrebleu": score}
        # the training figures as rnnsearch-evaluate reads them from each log: our models in bfloat16, the lstm in float32
        data["training"][name] = training | {"precision": "float32" if name.startswith("lstm") else "bfloat16 (--amp)"}
        data["by_length"][name] = by_length
        shutil.copyfile(report / "translations" / "tiny.txt", target / "translations" / f"{name}.txt")
    (target / "report.json").write_text(json.dumps(data))


def fake_work(multi30k: Path, report: Path, aer: Path, work: Path) -> None:
    """A WORK folder as reproduce_results.sh leaves it, every report being the tiny model's on
    Multi30k test_2017 (the 'hansards' corpus = Multi30k with test_2017 as its test split) under
    the systems' names, with chosen sacreBLEU scores."""
    (work / "multi30k").symlink_to(multi30k)
    (work / "hansards" / "raw").mkdir(parents=True)
    shutil.copyfile(multi30k / "manifest.json", work / "hansards" / "manifest.json")
    for lang in ("en", "fr"):
        shutil.copyfile(multi30k / "raw" / f"test1.{lang}", work / "hansards" / "raw" / f"test.{lang}")
    renamed_report(report, work / "report" / "hansards.test", {"rnnsearch_small": 20.5, "rnnencdec_small": 14.25})
    seeds = {
        "rnnsearch_small.seed1": 50.0,
        "rnnsearch_small.seed2": 52.0,
        "rnnsearch_small.seed3": 54.0,
        "lstm.seed1": 51.0,
        "lstm.seed2": 51.5,
        "lstm.seed3": 52.0,
        "rnnencdec_small": 30.0,
    }
    renamed_report(report, work / "report" / "multi30k.test", seeds)
    renamed_report(report, work / "report" / "multi30k.test1", {name: score - 10 for name, score in seeds.items()})
    shutil.copytree(aer, work / "report" / "hansards.aer")
    trials = work / "checkpoints" / "multi30k"
    trial(trials / "rnnsearch_small.t1", "--dropout 0.3", "--lr 0.002", [2.0, 1.6])
    trial(trials / "rnnsearch_small.t2", "--dropout 0.5", "--lr 0.002", [2.0, 1.5])
    trial(trials / "lstm.t1", "--dropout 0.3", "--lr 0.002", [1.7])
    (work / "machines.tsv").write_text("hansards\tAMD EPYC\tavx2\nhansards\tIntel(R) Xeon(R) Processor\tavx2 amx_bf16\n")
    (work / "wall_times.tsv").write_text(  # the second run of a command replaces the first
        f"fairseq-train\t{work}/checkpoints/multi30k/tiny/train.log\t2690\n"
        f"fairseq-train\t{work}/checkpoints/multi30k/tiny/train.log\t2712\n"
    )


def first_gold_sentences(count: int, folder: Path) -> Path:
    """The first COUNT sentences of the Hansards gold standard (37) and their links, in FOLDER."""
    gold = Path(SHARED_DATA) / "alignment-gold"
    folder.mkdir()
    for name in ("dev.e", "dev.f"):
        (folder / name).write_text("".join((gold / name).read_text().splitlines(keepends=True)[:count]))
    links = (gold / "dev.wa.nonullalign").read_text().splitlines(keepends=True)
    (folder / "dev.wa.nonullalign").write_text("".join(line for line in links if int(line.split()[0]) <= count))
    return folder


def test_results_page_reports_the_evaluations_figures(evaluation, multi30k, checkpoint, tmp_path):
    out, report = evaluation
    aer = tmp_path / "aer"
    run(
        "rnnsearch-aer",
        "--path",
        str(checkpoint),
        "--data",
        str(multi30k / "bin"),
        "--gold",
        str(first_gold_sentences(5, tmp_path / "gold")),
        "--out",
        str(aer),
    )
    work = tmp_path / "work"
    work.mkdir()
    fake_work(multi30k, out, aer, work)
    readme = tmp_path / "README.md"
    readme.write_text("# top\n<!-- results: tooling/publish_results.py -->\nstale figures\n<!-- /results -->\nrest\n")
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "directions.md").write_text("# Either direction\n")  # published before: README.md links it
    run(sys.executable, "tooling/publish_results.py", "--work", str(work), "--out", str(tmp_path / "page"), "--readme", str(readme))
    page = (tmp_path / "page" / "README.md").read_text()
    tiny, trained = report["systems"]["tiny"], report["training"]["tiny"]
    assert (
        f"| rnnsearch_small | 20.50 / {tiny['tokenised_bleu']:.2f} | {tiny['chrf']:.2f} | {tiny['no_unk_sentences']} | "
        f"{tiny['no_unk_sacrebleu']:.2f} / {tiny['no_unk_tokenised_bleu']:.2f} | {tiny['no_unk_chrf']:.2f} | "
        f"{trained['updates']} | {trained['epochs']} | "
        f"{trained['dev_nll']:.3f} | {trained['wall_hours']:.2f} | bfloat16 (--amp) | "
    ) in page
    rows = {line.split(" | ")[0][2:]: line for line in page.splitlines() if line.startswith("| ")}
    assert (
        f"| {trained['updates']} | {trained['epochs']} | {trained['dev_nll']:.3f} | nats per target token | float32 | "
        "`--arch rnnsearch_small "
    ) in rows["lstm.seed2"]
    assert "| nats per target token | bfloat16 (--amp) | " in rows["rnnsearch_small.seed2"]
    assert rows["rnnencdec_small"].startswith(
        f"| rnnencdec_small | 30.00 / {tiny['tokenised_bleu']:.2f} | "
        f"{tiny['chrf']:.2f} | 20.00 / {tiny['tokenised_bleu']:.2f} | {tiny['chrf']:.2f} | "
    )
    assert "[directions.md](directions.md)" in page
    assert "**Holds**: on the Hansards RNNsearch-50 leads RNNencdec-50 by +6.25 sacreBLEU" in page
    # the options column is the checkpoint's own (conftest trains it with --dropout 0.1 --lr 0.003 --seed 3)
    assert (
        "`--arch rnnsearch_small --encoder-dropout-in 0.1 --encoder-dropout-out 0.0 --decoder-dropout-in 0.1 "
        "--decoder-dropout-out 0.1 --readout-state previous --optimizer adam --lr 0.003 --lr-scheduler fixed "
        "--seed 3` |"
    ) in page
    with open(out / "bleu_by_length.csv") as rows:
        bucket = next(r for r in csv.DictReader(rows) if r["bucket"] == "10-20")
    assert f"| rnnencdec_small | {bucket['bleu']} ({bucket['sentences']}) |" in page
    gap_row = next(line for line in page.splitlines() if line.startswith(f"| rnnencdec_small | {bucket['bleu']} ("))
    point, interval = gap_row.strip("| ").split(" | ")[3:5]  # the bootstrap interval of the 30+ minus 10-20 difference holds it
    low, high = (float(bound) for bound in interval.split(" to "))
    assert low < float(point) < high and f"RNNencdec's by {point} ({interval}; target" in page
    diagonal = json.loads((aer / "aer.json").read_text())["diagonal"]["aer"]
    assert "| diagonal | " in page and f"{diagonal:.3f} |" in page
    assert "Alignment error rate on the Hansards gold standard (5 sentences):" in page  # the count aer.json records
    # seeds: 50, 52, 54 -> 52.00 ± 2.00; 51, 51.5, 52 -> 51.50 ± 0.50; test_2017 10 lower
    assert "| rnnsearch_small | 3 | 52.00 ± 2.00 | 42.00 ± 2.00 |" in page
    assert "| lstm | 3 | 51.50 ± 0.50 | 41.50 ± 0.50 |" in page
    assert (
        "leads the lstm by +0.50 (test_2016) and +0.50 (test_2017) sacreBLEU on average, at equal wall time "
        "(bfloat16 (--amp) against float32)"
    ) in page
    # trials: the lowest dev loss is chosen, the losses in nats (1.5 bits = 1.040 nats)
    assert "| rnnsearch_small | **2** (chosen) | `--dropout 0.5 --lr 0.002` | 1.040 | 100 |" in page
    assert "| rnnsearch_small | 1 | `--dropout 0.3 --lr 0.002` | 1.109 | 100 |" in page
    assert "| fairseq-train | WORK/checkpoints/multi30k/tiny/train.log | 45.2 |" in page and "| 44.8 |" not in page
    assert "| hansards | Intel(R) Xeon(R) Processor | avx2 amx_bf16 |" in page and "AMD" not in page  # the stage's latest run
    for copied in ("multi30k.test/bleu_by_length.png", "hansards.test/report.md", "hansards.aer/aer.md"):
        assert (tmp_path / "page" / copied).stat().st_size > 0
    assert not (tmp_path / "page" / "multi30k.test" / "translations").exists()
    top = readme.read_text()
    assert top.startswith("# top\n<!-- results: tooling/publish_results.py -->\n") and top.endswith("<!-- /results -->\nrest\n")
    assert "stale figures" not in top and "leads the lstm by +0.50" in top
    assert f"| RNNsearch-50 (`rnnsearch_small`) | 20.50 | {tiny['chrf']:.2f} | {tiny['no_unk_sacrebleu']:.2f} |" in top
    assert "| rnnsearch_small | 3 | 52.00 ± 2.00 | 42.00 ± 2.00 |" in top  # the seeds in brief


def direction_report(report: Path, target: Path, pair: str, sacrebleu: float, chrf: float, system: str) -> None:
    """REPORT (one system, 'tiny') as SYSTEM's report of PAIR ('fr-en') with the given scores, SYSTEM
    named as reproduce_results.sh names it in that stage."""
    target.mkdir(parents=True)
    data = json.loads((report / "report.json").read_text())
    data["source_lang"], data["target_lang"] = pair.split("-")
    for key in ("systems", "training", "by_length"):
        data[key] = {system: data[key]["tiny"]}
    data["systems"][system] |= {"sacrebleu": sacrebleu, "chrf": chrf}
    (target / "report.json").write_text(json.dumps(data))
    shutil.copytree(report / "translations", target / "translations")
    shutil.copyfile(report / "report.md", target / "report.md")


PUBLISHED = """# Results on real data within a CPU budget

What each line means, with the evidence, and what a miss would take: [discussion.md](discussion.md).

## Machines and wall time

| stage | processor | flags |
| --- | --- | --- |
| hansards | Intel(R) Xeon(R) Processor | avx2 amx_bf16 |

| program | output | minutes |
| --- | --- | --- |
| fairseq-train | WORK/checkpoints/hansards/rnnsearch_small/train.log | 125.3 |
"""


def test_directions_page_from_the_new_stages_alone_keeps_the_published_page(evaluation, tmp_path):
    """A WORK with only the stages multi30k-directions and hansards-fr-en: directions.md has their
    figures beside the published En->Fr Hansards report (one written before chrF: "—"), its
    machine from the published page, and README.md stays as published but for the link to it."""
    report, trained = evaluation[0], evaluation[1]["training"]["tiny"]
    tiny = evaluation[1]["systems"]["tiny"]
    work, out = tmp_path / "work", tmp_path / "out"
    scores = {  # the folders reproduce_results.sh's multi30k-directions writes: directions.CORPUS.SPLIT
        ("multi30k.test", "en-fr"): (40.0, 60.5),
        ("multi30k.test1", "en-fr"): (35.0, 58.25),
        ("multi30k.fr-en.test", "fr-en"): (45.5, 62.0),
        ("multi30k.fr-en.test1", "fr-en"): (39.75, 59.0),
    }
    for (name, pair), (sacrebleu, chrf) in scores.items():
        direction_report(report, work / "report" / f"directions.{name}", pair, sacrebleu, chrf, "quickstart")
    direction_report(report, work / "report" / "hansards.fr-en.test", "fr-en", 24.5, 51.0, "rnnsearch_small")
    (work / "report" / "hansards.fr-en.alignments").mkdir()
    shutil.copyfile(report / "bleu_by_length.png", work / "report" / "hansards.fr-en.alignments" / "alignment_0.png")
    (work / "multi30k.fr-en").mkdir()
    (work / "multi30k.fr-en" / "manifest.json").write_text(
        json.dumps(
            {
                "scheme": "spm",
                "source_lang": "fr",
                "target_lang": "en",
                "vocabulary": {"en": 1000, "fr": 1200},
                "pairs": {"train": 29000, "valid": 1014, "test": 1000, "test1": 1000},
            }
        )
    )
    (work / "machines.tsv").write_text("multi30k-directions\tAMD EPYC 7B13\tavx2\nhansards-fr-en\tAMD EPYC 7B13\tavx2\n")
    (out / "hansards.test").mkdir(parents=True)
    shutil.copyfile(REPO / "docs" / "results" / "hansards.test" / "report.json", out / "hansards.test" / "report.json")
    (out / "README.md").write_text(PUBLISHED)
    publish = [sys.executable, "tooling/publish_results.py", "--work", str(work), "--out", str(out)]
    whole = run(*publish, check=False)  # the main page needs the main stages' reports
    assert whole.returncode == 1 and "(for the directions stages alone: --page directions)" in whole.stderr
    run(*publish, "--page", "directions")
    link = (
        "Either direction, Fr->En beside En->Fr (Multi30k with the quickstart's recipe, the Hansards with "
        "RNNsearch-50): [directions.md](directions.md)."
    )
    linked = PUBLISHED.replace("[discussion.md](discussion.md).\n\n", f"[discussion.md](discussion.md).\n\n{link}\n\n")
    assert (out / "README.md").read_text() == linked  # the link added, nothing else rewritten
    page = (out / "directions.md").read_text()
    hours = f"{trained['updates']} | {trained['dev_nll']:.3f} | {trained['wall_hours']:.2f}"
    assert f"| En->Fr | 40.00 | 60.50 | 35.00 | 58.25 | {hours} | AMD EPYC 7B13 (avx2) |" in page
    assert f"| Fr->En | 45.50 | 62.00 | 39.75 | 59.00 | {hours} | AMD EPYC 7B13 (avx2) |" in page
    assert "Both directions ran on AMD EPYC 7B13." in page
    assert (
        "- `multi30k.fr-en`: spm, 1,200 / 1,000 fr / en dictionary entries; 29,000 / 1,014 / 1,000 / 1,000 "
        "train / valid / test / test1 pairs"
    ) in page
    published = json.loads((out / "hansards.test" / "report.json").read_text())
    search, training = published["systems"]["rnnsearch_small"], published["training"]["rnnsearch_small"]
    assert (
        f"| En->Fr | {search['sacrebleu']:.2f} | — | {search['no_unk_sentences']} | {search['no_unk_sacrebleu']:.2f} | — | "
        f"{training['updates']} | {training['dev_nll']:.3f} | {training['wall_hours']:.2f} | "
        "Intel(R) Xeon(R) Processor (avx2 amx_bf16) |"
    ) in page
    assert (
        f"| Fr->En | 24.50 | 51.00 | {tiny['no_unk_sentences']} | {tiny['no_unk_sacrebleu']:.2f} | "
        f"{tiny['no_unk_chrf']:.2f} | {hours} | AMD EPYC 7B13 (avx2) |"
    ) in page
    assert "The processors differ (En->Fr: Intel(R) Xeon(R) Processor, avx2 amx_bf16; Fr->En: AMD EPYC 7B13, avx2)" in page
    assert f"chrF2 `{tiny['chrf_signature']}`" in page and "Not run yet" not in page
    assert "![alignment_0](hansards.fr-en.alignments/alignment_0.png)" in page
    for copied in ("hansards.fr-en.alignments/alignment_0.png", "directions.multi30k.fr-en.test1/report.md"):
        assert (out / copied).stat().st_size > 0
    assert not (out / "directions.multi30k.fr-en.test1" / "translations").exists()
    assert sorted(path.name for path in (out / "hansards.test").iterdir()) == ["report.json"]  # the published one, untouched
    (work / "machines.tsv").write_text("hansards-fr-en\tAMD EPYC 7B13\tavx2\n")  # a WORK without the Multi30k stage's machine
    run(*publish, "--page", "directions")
    assert (out / "directions.md").read_text() == page  # its processor read back from what was published


def test_results_scripts_refuse_unknown_stages_and_missing_reports(tmp_path):
    stage = run("bash", "tooling/reproduce_results.sh", "hansards", "evaluate", check=False)
    assert stage.returncode == 2
    assert stage.stderr.strip() == (
        "reproduce_results.sh: error: unknown stage 'evaluate' (stages: prepare hansards "
        "hansards-evaluate multi30k-dropout multi30k-rate multi30k-seeds multi30k-pair "
        "multi30k-evaluate multi30k-directions hansards-fr-en hansards-alignment publish)"
    )
    publish = run(sys.executable, "tooling/publish_results.py", "--work", str(tmp_path), "--out", str(tmp_path / "page"), check=False)
    assert publish.returncode == 1 and len(publish.stderr.strip().splitlines()) == 1
    assert "no report for hansards.test or multi30k.test/test1" in publish.stderr
    assert not (tmp_path / "page").exists()


def test_best_trial_is_the_lowest_dev_loss_and_refuses_what_it_cannot_compare(tmp_path):
    first = trial(tmp_path / "m.t1", "--dropout 0.3", "--lr 0.002", [2.0, 1.60])
    second = trial(tmp_path / "m.t2", "--dropout 0.5", "--lr 0.002", [1.55, 1.70])
    third = trial(tmp_path / "m.t3", "--dropout 0.4", "--lr 0.002", [1.55])
    chosen = run(sys.executable, "tooling/best_trial.py", str(first), str(second), str(third))
    assert chosen.stdout == f"{second}\n"  # 1.55 is lowest; the tie goes to the trial named first
    (tmp_path / "m.t4").mkdir()
    missing = run(sys.executable, "tooling/best_trial.py", str(first), str(tmp_path / "m.t4"), check=False)
    assert missing.returncode == 1
    assert missing.stderr == f"best_trial.py: error: {tmp_path / 'm.t4' / 'train.log'} does not exist: run the trial's stage first\n"
    (third / "train.log").write_text("'sentence_avg': True\n" + training_log([1.0]))
    units = run(sys.executable, "tooling/best_trial.py", str(first), str(third), check=False)
    assert units.returncode == 1 and "different units" in units.stderr


def test_options_name_the_learning_rate_schedule():
    """A run on fairseq's reduce_lr_on_plateau (RNNsearch on Multi30k) is only reproducible with its
    shrink factor and patience; a fixed rate has nothing more to say."""
    from types import SimpleNamespace

    from omegaconf import OmegaConf

    from rnnsearch_plugin.cli.evaluate import model_options

    def options(lr_scheduler: dict) -> dict:
        cfg = OmegaConf.create(
            {
                "model": {"_name": "rnnsearch_small", "dropout": 0.5},
                "optimization": {"lr": [0.003], "sentence_avg": False},
                "optimizer": {"_name": "adam"},
                "lr_scheduler": lr_scheduler,
                "dataset": {"batch_size": None},
                "common": {"seed": 2, "amp": True},
            }
        )
        return model_options(SimpleNamespace(cfg=cfg))

    plateau = {"_name": "reduce_lr_on_plateau", "lr_shrink": 0.5, "lr_patience": 0, "lr_threshold": 1e-4}
    assert options(plateau) == {
        "arch": "rnnsearch_small",
        "optimizer": "adam",
        "lr": "0.003",
        "lr_scheduler": "reduce_lr_on_plateau",
        "lr_shrink": 0.5,
        "lr_patience": 0,
        "seed": 2,
    }
    # not --amp: a loaded checkpoint's common.amp is the decoding precision (the training log names the training's)
    assert options({"_name": "fixed", "lr_shrink": 0.1, "force_anneal": None}) == {
        "arch": "rnnsearch_small",
        "optimizer": "adam",
        "lr": "0.003",
        "lr_scheduler": "fixed",
        "seed": 2,
    }


FAKE_TRAIN = '''#!/usr/bin/env python3
"""fairseq-train as the results script sees it: records its options, logs the dev loss DEV_LOSSES gives its folder."""
import json, os, sys
args = sys.argv[1:]
folder = args[args.index("--save-dir") + 1]
with open(os.environ["CALLS"], "a") as calls:
    calls.write(json.dumps(args) + "\\n")
loss = json.loads(os.environ["DEV_LOSSES"])[os.path.basename(folder)]
with open(os.path.join(folder, "train.log"), "w") as log:
    log.write(f"epoch 001 | valid on 'valid' subset | loss {loss} | num_updates 100\\n"
              "epoch 001 | loss 5.0 | num_updates 100 | train_wall 100 | wall 120\\n"
              "done training in 120.0 seconds\\n")
open(os.path.join(folder, "checkpoint_last.pt"), "w").close()
'''


def given(command_line: str) -> dict[str, str]:
    """{option: its value, '' for a flag} of a fairseq command line's options, each given once."""
    options: dict[str, str] = {}
    for group in re.split(r" (?=--?[a-z])", " " + command_line)[1:]:
        option, _, value = group.partition(" ")
        assert option not in options, f"{option} given twice in {command_line}"
        options[option] = value
    return options


def test_multi30k_stages_give_both_models_the_same_trials_and_run_each_ones_best(tmp_path):
    """The tuning stages with fairseq-train replaced by a stub whose dev losses we set: trials 4-6 take
    each model's better dropout of trials 1-3, seeds 2 and 3 (and seed 1, a link) its best trial of six,
    RNNencdec and B.2's run RNNsearch's choice."""
    import os
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fairseq-train").write_text(FAKE_TRAIN)
    (bin_dir / "fairseq-train").chmod(0o755)
    losses = {
        "rnnsearch_small.t1": 2.0,
        "rnnsearch_small.t2": 1.9,
        "rnnsearch_small.t3": 1.8,  # 3 is the better dropout
        "rnnsearch_small.t4": 1.9,
        "rnnsearch_small.t5": 1.7,
        "rnnsearch_small.t6": 1.75,  # 5 is the best
        "lstm.t1": 1.7,
        "lstm.t2": 1.8,
        "lstm.t3": 1.9,
        "lstm.t4": 1.8,
        "lstm.t5": 1.8,
        "lstm.t6": 1.6,
        **{f"{m}.seed{n}": 1.0 for m in ("rnnsearch_small", "lstm") for n in (2, 3)},
        "rnnencdec_small": 2.5,
        "rnnsearch_small.b2": 30.0,
    }
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "WORK": str(tmp_path / "work"),
        "SETUP": "0",
        "CALLS": str(tmp_path / "calls.jsonl"),
        "DEV_LOSSES": json.dumps(losses),
    }
    stages = ["multi30k-dropout", "multi30k-rate", "multi30k-seeds", "multi30k-pair"]
    result = subprocess.run(["bash", "tooling/reproduce_results.sh", *stages], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    calls = {}
    for line in (tmp_path / "calls.jsonl").read_text().splitlines():
        options = given(" ".join(json.loads(line)[1:]))
        calls[Path(options["--save-dir"]).name] = options
    assert sorted(calls) == sorted(set(losses))

    def options(name: str) -> dict[str, str]:  # what the stages choose: the dropouts, the rate and its schedule, the seed
        return {
            option: value
            for option, value in calls[name].items()
            if option.startswith(("--dropout", "--lr", "--seed")) or "dropout" in option
        }

    plateau = "--lr-scheduler reduce_lr_on_plateau --lr-shrink 0.5 --lr-patience 0"
    for model, dropout in (
        ("rnnsearch_small", "--dropout 0.5 --encoder-dropout-out 0.3 --decoder-dropout-out 0.3"),
        ("lstm", "--dropout 0.3 --encoder-dropout-out 0.3"),
    ):
        assert options(f"{model}.t4") == given(f"{dropout} --lr 0.003 {plateau} --seed 1")
        assert options(f"{model}.t6") == given(f"{dropout} --lr 0.003 --lr-scheduler fixed --seed 1")
    for number in (1, 2, 3):  # the same option strings for both models
        assert options(f"rnnsearch_small.t{number}") == options(f"lstm.t{number}")
    for number in (4, 5, 6):
        rates = [{k: v for k, v in options(f"{m}.t{number}").items() if k.startswith("--lr")} for m in ("rnnsearch_small", "lstm")]
        assert rates[0] == rates[1]
    chosen = {
        "rnnsearch_small": f"--dropout 0.5 --encoder-dropout-out 0.3 --decoder-dropout-out 0.3 --lr 0.002 {plateau}",
        "lstm": "--dropout 0.3 --encoder-dropout-out 0.3 --lr 0.003 --lr-scheduler fixed",
    }
    for model, settings in chosen.items():
        best = {"rnnsearch_small": 5, "lstm": 6}[model]
        assert os.readlink(tmp_path / "work" / "checkpoints" / "multi30k" / f"{model}.seed1") == f"{model}.t{best}"
        for seed in (2, 3):
            assert options(f"{model}.seed{seed}") == given(f"{settings} --seed {seed}")
    assert options("rnnencdec_small") == given(f"--dropout 0.5 --decoder-dropout-out 0.3 --lr 0.002 {plateau} --seed 1")
    assert given("--arch rnnencdec_small --criterion chunked_cross_entropy --amp").items() <= calls["rnnencdec_small"].items()
    b2 = "--optimizer rnnsearch_adadelta --adadelta-rho 0.95 --adadelta-eps 1e-6 --lr 1.0 --lr-scheduler fixed --clip-norm 1.0"
    assert calls["rnnsearch_small.b2"] == {
        **calls["rnnsearch_small.t1"],  # the quickstart's recipe as the trials train it (MINUTES, every 100 updates logged)
        **given(f"--arch rnnsearch_small {b2} --batch-size 80 --sentence-avg --dropout 0.5 --encoder-dropout-out 0.3"),
        **given("--decoder-dropout-out 0.3 --seed 1"),
        **{option: calls["rnnsearch_small.b2"][option] for option in ("--save-dir", "--log-file")},
    }
    assert given("--criterion cross_entropy --arch lstm").items() <= calls["lstm.seed2"].items() and "--amp" not in calls["lstm.seed2"]
    # every call: the quickstart's recipe for MINUTES (no update bound), logged every 100 updates, then what its stage chooses
    recipe = given(
        " ".join(recipe_options(QUICKSTART, ["optimization.max_update=null", "common.log_format=null", "common.log_interval=100"]))
    )
    own = ("--user-dir", "-s", "-t", "--stop-time-hours", "--save-dir", "--log-file")
    trial = calls["rnnsearch_small.t1"]
    assert trial == {**recipe, **options("rnnsearch_small.t1"), **{option: trial[option] for option in own}}
    # the stages again, one run interrupted before (no "done training" in its log): only that one trains
    (tmp_path / "calls.jsonl").unlink()
    interrupted = tmp_path / "work" / "checkpoints" / "multi30k" / "lstm.t2" / "train.log"
    interrupted.write_text(interrupted.read_text().replace("done training in 120.0 seconds\n", ""))
    again = subprocess.run(["bash", "tooling/reproduce_results.sh", *stages], env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert [
        Path(json.loads(line)[json.loads(line).index("--save-dir") + 1]).name
        for line in (tmp_path / "calls.jsonl").read_text().splitlines()
    ] == ["lstm.t2"]
    assert again.stdout.count("not run again") == len(losses) - 1


# The commands the stage hansards-alignment runs besides fairseq-train, as it sees them: each records
# its arguments, with the time, and writes what the stage reads afterwards (a prepared folder's
# manifest, the training links, an output folder); FAIL names a script that fails instead.
FAKE_COMMAND = """#!/usr/bin/env bash
case "$(basename "$0") $1" in
  "python scripts/prepare_data.py" | "python tooling/statistical_alignments.py" | "python tooling/align_load.py") ;;
  python\\ *) exec "$REAL_PYTHON" "$@" ;;
esac
printf '%s\\n' "$(basename "$0") $*" >> "$CALLS"
[[ "$*" == *"$FAIL"* && -n "$FAIL" ]] && exit 1
value() { local seen=""; for word in "$@"; do [[ -n $seen ]] && { echo "$word"; return; }; [[ $word == "$OPTION" ]] && seen=1; done; }
OPTION=--out; out=$(value "$@")
OPTION=--training-alignments; links=$(value "$@")
OPTION=-s; source=$(value "$@")
OPTION=-t; target=$(value "$@")
[[ -n $links ]] && echo "0-0" > "$links"
[[ -n $out ]] && mkdir -p "$out/bin"
pair='{"source_lang": "%s", "target_lang": "%s"}'
[[ "$1" == scripts/prepare_data.py ]] && printf "$pair" "${source:-en}" "${target:-fr}" > "$out/manifest.json"
exit 0
"""
STUBBED = ("python", "rnnsearch-aer", "rnnsearch-evaluate", "rnnsearch-heatmaps")
HEADS = [f"rnnsearch_small.head_{name}" for name in ("joint", "links", "own", "links_full", "links_long")]  # En->Fr


def alignment_stage(tmp_path: Path, fail: str = "") -> tuple[Any, list[str]]:
    """The stage hansards-alignment with every command it runs replaced by a stub: its result, and
    the commands in the order they ran (fairseq-train as 'fairseq-train CORPUS/NAME')."""
    import os
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("fairseq-train", FAKE_TRAIN), *((name, FAKE_COMMAND) for name in STUBBED)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    calls = tmp_path / "calls"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "REAL_PYTHON": sys.executable,
        "WORK": str(tmp_path / "work"),
        "SETUP": "0",
        "CALLS": str(calls),
        "FAIL": fail,
        "DEV_LOSSES": json.dumps(dict.fromkeys(["rnnsearch_small", "rnnsearch_small_guided", *HEADS], 2.0)),
        "HANSARDS_MINUTES": "1",
        "HEAD_MINUTES": "1",
    }
    stage = ["bash", "tooling/reproduce_results.sh", "hansards-alignment"]
    result = subprocess.run(stage, env=env, capture_output=True, text=True, timeout=300)
    lines = []
    for line in calls.read_text().splitlines() if calls.exists() else []:
        if line.startswith("["):  # fake fairseq-train's record: its options, as JSON
            options = json.loads(line)
            save = Path(options[options.index("--save-dir") + 1])
            line = f"fairseq-train {save.parent.name}/{save.name}"
        lines.append(line)
    return result, lines


def prepared_hansards(work: Path) -> None:
    """WORK/hansards as the stage prepare leaves it, as far as the stage hansards-alignment reads it."""
    (work / "hansards" / "bin").mkdir(parents=True)
    (work / "hansards" / "manifest.json").write_text('{"source_lang": "en", "target_lang": "fr"}')


def test_the_alignment_stage_trains_and_scores_each_model_once_after_what_it_needs(tmp_path):
    """Both lanes of hansards-alignment, every command a stub: each training and report once, and each
    after what it reads from the other lane (the training links, a finished model or head)."""
    work = tmp_path / "work"
    prepared_hansards(work)
    result, calls = alignment_stage(tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    trainings = [call.split()[1] for call in calls if call.startswith("fairseq-train")]
    models = ["hansards/rnnsearch_small", "hansards/rnnsearch_small_guided", "hansards.fr-en/rnnsearch_small"]
    fr_en_head = "hansards.fr-en/rnnsearch_small.head_links_full"
    assert sorted(trainings) == sorted([*models, *(f"hansards/{head}" for head in HEADS), fr_en_head])

    def at(text: str) -> int:  # the place of the one command that is TEXT, else of the one that contains it
        (place,) = [i for i, call in enumerate(calls) if call == text] or [i for i, call in enumerate(calls) if text in call]
        return place

    links = {corpus: at(f"--training-alignments {work}/{corpus}/train.links") for corpus in ("hansards", "hansards.fr-en")}
    for name in ("rnnsearch_small_guided", *HEADS):
        assert links["hansards"] < at(f"fairseq-train hansards/{name}")
    assert at("fairseq-train hansards.fr-en/rnnsearch_small") < links["hansards.fr-en"] < at(f"fairseq-train {fr_en_head}")
    assert at("fairseq-train hansards/rnnsearch_small.head_links") < at("--name align_load.rnnsearch_small.head_links")
    assert at("fairseq-train hansards/rnnsearch_small_guided") < at("report/hansards.guided.test")
    scored = [call.split("--out ")[1].split()[0] for call in calls if call.startswith("rnnsearch-aer")]
    statistical = [
        f"hansards.align/{aligner}.{name}"
        for aligner in ("eflomal", "fast_align")
        for name in ("forward", "reverse", "intersect", "union", "grow-diag-final-and")
    ]
    attention = [f"hansards.align/rnnsearch.{name}" for name in ("en-fr", "fr-en", "guided.en-fr")] + ["hansards.head/rnnsearch_small"]
    heads = [f"hansards.head/{name}" for name in (*HEADS, "rnnsearch_small.head_links_full.fr-en", "rnnsearch_small.head_links_full.both")]
    assert sorted(Path(out).relative_to(work / "report").as_posix() for out in scored) == sorted([*statistical, *attention, *heads])
    evaluated = sorted(call.split("--out ")[1].split()[0].rsplit("/", 1)[1] for call in calls if call.startswith("rnnsearch-evaluate"))
    assert evaluated == ["hansards.fr-en.test", "hansards.guided.test", "hansards.head.test"]


def test_the_alignment_stage_fails_once_a_lane_fails_without_waiting_for_it(tmp_path):
    prepared_hansards(tmp_path / "work")
    result, calls = alignment_stage(tmp_path, fail="--training-alignments")
    assert result.returncode != 0
    assert "reproduce_results.sh: error: lane 1 ended without" in result.stderr and "lane.links.hansards" in result.stderr
    assert [call for call in calls if call.startswith("fairseq-train")] == ["fairseq-train hansards/rnnsearch_small"]
