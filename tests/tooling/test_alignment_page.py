"""tooling/publish_results.py --page alignment (tooling/alignment_page.py): the page's
rows are the AER reports' own, the best row and the verdicts follow from them, the guided model's
BLEU cost is the unguided minus the guided, a stage not run is named, and README.md gains a link."""

import json
import sys
from pathlib import Path

from conftest import run

PUBLISHED = (
    "# Results\n\n## What holds\n\n- a line\n\n"
    "What each line means, with the evidence, and what a miss would take: [discussion.md](discussion.md).\n\n## Hansards\n"
)
LINK = "The model as an aligner, beside eflomal, and guided alignment: [alignment.md](alignment.md)."


def scores(rows: dict[str, tuple[float, float, float]]) -> dict:
    """rnnsearch-aer's aer.json of rows: name -> (precision, recall, AER)."""
    return {name: {"precision": p, "recall": r, "aer": a, "sentences": 37, "links": 100} for name, (p, r, a) in rows.items()}


def write(path: Path, content: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))


def align_reports(work: Path) -> Path:
    """The reports of the stage hansards-alignment: eflomal, RNNsearch both directions, the speed run."""
    align = work / "report" / "hansards.align"
    write(
        align / "eflomal" / "eflomal.json",
        {
            "training_pairs": 624293,
            "gold_pairs": 37,
            "source": "en",
            "target": "fr",
            "eflomal": "2.0.0",
            "threads": 1,
            "seconds": {"read and normalise": 30.0, "align forward": 180.0, "align reverse": 170.0, "symmetrise": 20.0},
        },
    )
    eflomal_aer = {"forward": 0.098, "reverse": 0.079, "intersect": 0.078, "union": 0.098, "grow-diag-final-and": 0.093}
    for name, value in eflomal_aer.items():
        write(align / f"eflomal.{name}" / "aer.json", scores({f"eflomal {name}": (0.9, 0.9, value)}))
    write(
        align / "rnnsearch.en-fr" / "aer.json",
        scores(
            {
                "argmax": (0.5, 0.4, 0.47),
                "threshold 0.3": (0.55, 0.45, 0.45),
                "diagonal": (0.45, 0.32, 0.59),
                "argmax grow-diag-final-and": (0.6, 0.5, 0.41),
            }
        ),
    )
    write(align / "rnnsearch.fr-en" / "aer.json", scores({"argmax": (0.53, 0.41, 0.51), "diagonal": (0.45, 0.32, 0.59)}))
    (align / "rnnsearch.en-fr" / "aer.md").write_text("# table\n")
    write(
        align / "align_load.test.json",
        {
            "environment": {"device": "AMD EPYC, 2 cores", "threads": "1", "torch": "2.13.0+cpu", "date": "2026-12-05 03:40 UTC"},
            "command": "python tooling/align_load.py ...",
            "directions": "both, symmetrised (grow-diag-final-and)",
            "rows": [{"pairs": 3000, "seconds": 61.5, "peak_mb": 800.0, "pairs_per_second": 48.8}],
        },
    )
    return align


def guided_report(work: Path, system: str, sacrebleu: float, **training_entries: float) -> None:
    """The guided models' evaluation (stage hansards-alignment): the unguided model (22.40 sacreBLEU) and
    SYSTEM, each 6,000 updates in 2.08 h."""
    training = {"updates": 6000, "dev_nll": 2.1, "wall_hours": 2.08}
    scores_of = {"sacrebleu": 22.4, "chrf": 50.0, "no_unk_sacrebleu": 30.0}
    write(
        work / "report" / "hansards.guided.test" / "report.json",
        {
            "split": "test",
            "beam": 5,
            "systems": {"rnnsearch_small": scores_of, system: {**scores_of, "sacrebleu": sacrebleu}},
            "training": {"rnnsearch_small": training, system: {**training, **training_entries}},
        },
    )


def published_page(work: Path, out: Path) -> str:
    """OUT/alignment.md as publish_results.py --page alignment writes it from WORK."""
    run(sys.executable, "tooling/publish_results.py", "--work", str(work), "--out", str(out), "--page", "alignment")
    return (out / "alignment.md").read_text()


def test_alignment_page_reads_the_aligners_reports_and_says_what_holds(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    align_reports(work)
    out.mkdir()
    (out / "README.md").write_text(PUBLISHED)
    page = published_page(work, out)
    assert "| diagonal | diagonal | 0.450 | 0.320 | 0.590 | 100 |" in page
    assert "| eflomal | intersect | 0.900 | 0.900 | 0.078 | 100 |" in page
    assert "| RNNsearch En->Fr | argmax grow-diag-final-and | 0.600 | 0.500 | 0.410 | 100 |" in page
    assert "| RNNsearch Fr->En | argmax | 0.530 | 0.410 | 0.510 | 100 |" in page
    assert page.count("| diagonal |") == 1  # the baseline once, not once per model
    assert (
        "**Does not hold** (short by 0.060): RNNsearch's best links on the gold (RNNsearch En->Fr, argmax grow-diag-final-and; "
        "chosen on these sentences) have AER 0.410 (target 0.35 or lower)."
    ) in page
    assert "Measured: eflomal's best links (intersect) have AER 0.078 on the same gold." in page
    assert "**Holds**: rnnsearch-align aligns the 3,000 Hansards test pairs, both directions symmetrised, in 62 s" in page
    assert "the 624,293 prepared training pairs with the gold's 37" in page and "6.7 min of wall time" in page
    assert "Not run yet: guided alignment (stage hansards-alignment)." in page and "(training figures not evaluated yet)" in page
    assert (out / "hansards.align" / "rnnsearch.en-fr" / "aer.json").exists() and (out / "hansards.align" / "align_load.test.json").exists()
    assert (out / "README.md").read_text() == PUBLISHED.replace(
        "[discussion.md](discussion.md).\n\n", f"[discussion.md](discussion.md).\n\n{LINK}\n\n"
    )


def test_guided_verdict_weighs_aer_against_eflomal_and_bleu_against_the_unguided_model(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    align = align_reports(work)
    write(align / "rnnsearch.guided.en-fr" / "aer.json", scores({"argmax": (0.8, 0.8, 0.2), "threshold 0.3": (0.88, 0.85, 0.12)}))
    guided_report(work, "rnnsearch_small_guided", 22.1, alignment_lambda=2.0)
    page = published_page(work, out)
    assert "| rnnsearch_small_guided | 22.10 | 50.00 | 30.00 | 6000 | 2.100 | 2.08 |" in page
    assert "the guided one with `--alignment-lambda 2` (docs/training.md)" in page
    assert (
        "**Holds**: trained with guided alignment, RNNsearch's best links (threshold 0.3) have AER 0.120, +0.042 from eflomal's best "
        "(intersect, 0.078; target within 0.05), at +0.30 sacreBLEU lost on the Hansards test (target at most 0.5)."
    ) in page
    assert "| RNNsearch En->Fr guided | threshold 0.3 | 0.880 | 0.850 | 0.120 | 100 |" in page
    assert "(En->Fr 6,000 updates in 2.08 h; En->Fr guided 6,000 updates in 2.08 h)" in page


def test_alignment_page_without_the_stage_ends_in_one_line(tmp_path):
    done = run(
        sys.executable,
        "tooling/publish_results.py",
        "--work",
        str(tmp_path),
        "--out",
        str(tmp_path / "out"),
        "--page",
        "alignment",
        check=False,
    )
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "no report of the stages hansards-alignment" in done.stderr and not (tmp_path / "out").exists()


def test_head_section_weighs_the_heads_aer_against_eflomal_and_its_bleu_against_the_model_without(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    align_reports(work)
    head = work / "report" / "hansards.head"
    write(head / "rnnsearch_small" / "aer.json", scores({"argmax": (0.5, 0.4, 0.47), "diagonal": (0.45, 0.32, 0.59)}))
    write(head / "rnnsearch_small.head_links" / "aer.json", scores({"argmax": (0.9, 0.85, 0.11), "threshold 0.3": (0.88, 0.9, 0.1)}))
    write(head / "rnnsearch_small.head_own" / "aer.json", scores({"argmax": (0.7, 0.7, 0.3)}))
    # both directions' heads: rnnsearch-aer with --reverse-path writes the En->Fr head's own rows too (0.05 here), not this report's
    both = {"argmax": (0.95, 0.95, 0.05), "threshold 0.4 intersect": (0.93, 0.89, 0.09), "diagonal": (0.45, 0.32, 0.59)}
    write(head / "rnnsearch_small.head_links_full.both" / "aer.json", scores(both))
    environment = {"device": "x", "threads": "1", "torch": "2.13.0+cpu", "date": "today"}
    for name, rate in (("rnnsearch_small.head_links", 50.0), ("rnnsearch_small", 100.0)):
        rows = [{"pairs": 3000, "seconds": 3000 / rate, "peak_mb": 800.0, "pairs_per_second": rate}]
        write(head / f"align_load.{name}.json", {"environment": environment, "command": "c", "directions": "one", "rows": rows})
    system = {"sacrebleu": 20.5, "chrf": 50.0, "no_unk_sacrebleu": 30.0}
    write(
        work / "report" / "hansards.head.test" / "report.json",
        {"split": "test", "beam": 5, "systems": {"rnnsearch_small": system, "rnnsearch_small.head_links": system}, "training": {}},
    )
    for name, updates, wall in (
        ("rnnsearch_small", 6000, 7200),
        ("rnnsearch_small.head_own", 900, 1200),
        ("../hansards.fr-en/rnnsearch_small.head_links_full", 700, 1260),
    ):
        log = work / "checkpoints" / "hansards" / name / "train.log"
        log.parent.mkdir(parents=True)
        log.write_text(
            f"epoch 001 | loss 3.2 | nll_loss 3.2 | train_wall 1190 | num_updates {updates} | wall {wall}\ndone training in 1.0 seconds\n"
        )
    training = work / "checkpoints" / "hansards" / "rnnsearch_small.head_links_long" / "train.log"  # still training
    training.parent.mkdir(parents=True)
    training.write_text("epoch 001:    100 / 3854 loss=1.46, alignment_loss=1.46, num_updates=100\n")
    page = published_page(work, out)
    assert "| head: eflomal's links | threshold 0.3 | 0.880 | 0.900 | 0.100 | 100 |" in page
    assert "| attention, the model without a head | argmax | 0.500 | 0.400 | 0.470 | 100 |" in page
    symmetrised = "head: eflomal's links, full context, both directions symmetrised"
    assert f"| {symmetrised} | threshold 0.4 intersect | 0.930 | 0.890 | 0.090 | 100 |" in page
    assert f"| {symmetrised} | argmax |" not in page and f"| {symmetrised} | diagonal |" not in page
    assert (
        f"**Does not hold** (short by 0.012): the alignment head's best links ({symmetrised}, threshold 0.4 intersect) have "
        "AER 0.090, +0.012 from eflomal's best (intersect, 0.078; target: at or below it); the model's attention: 0.470."
    ) in page
    assert "| head: eflomal's links, full context, Fr->En | 700 updates in 21 min |" in page
    assert f"| {symmetrised} |" not in page.split("| model | training |")[1].split("| aligner |")[0]  # no training of its own
    assert "**Holds**: with the head the model scores 20.50 sacreBLEU on the Hansards test, without it 20.50 (target within 0.3)." in page
    assert "| head: its own objective, no links | 900 updates in 20 min |" in page
    assert "| head: eflomal's links, three times as long | — |" in page
    assert (
        "What was tried, each head's best AER: eflomal's links, 0.100; its own objective, no links, 0.300; "
        f"{symmetrised.removeprefix('head: ')}, 0.090. The links a head is "
        "trained toward are eflomal's grow-diag-final-and links of the training pairs (`scripts/prepare_data.py --eflomal`), "
        "whose AER on the gold (aligned with the same training pairs) is 0.093, +0.015 from eflomal's best (intersect, 0.078)"
    ) in page
    assert "| RNNsearch-50 En->Fr, without a head | 6,000 updates in 120 min |" in page
    # 100,000 pairs at 50 and 100 pairs/s; eflomal's 400 s for 624,293 pairs, scaled
    assert (
        "| rnnsearch-align, the head (one direction) | 33.3 |" in page
        and "| rnnsearch-align, the attention (one direction) | 16.7 |" in page
    )
    assert "| eflomal, both directions (its measured time, scaled to the pairs) | 1.1 |" in page
    assert (out / "hansards.head" / "rnnsearch_small.head_links" / "aer.json").exists()


def test_joint_head_is_weighed_against_the_model_without_a_head_and_beside_the_head_trained_alone(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    align_reports(work)
    head = work / "report" / "hansards.head"
    write(head / "rnnsearch_small.head_links_full" / "aer.json", scores({"threshold 0.4": (0.85, 0.86, 0.15)}))
    write(head / "rnnsearch_small.head_joint" / "aer.json", scores({"argmax": (0.8, 0.8, 0.2), "threshold 0.4": (0.86, 0.83, 0.16)}))
    guided_report(work, "rnnsearch_small.head_joint", 21.9)
    for name, updates, wall in (("rnnsearch_small.head_links_full", 600, 900), ("rnnsearch_small.head_joint", 5400, 7500)):
        log = work / "checkpoints" / "hansards" / name / "train.log"
        log.parent.mkdir(parents=True)
        log.write_text(
            f"epoch 001 | loss 3.2 | nll_loss 3.2 | train_wall {wall} | num_updates {updates} | wall {wall}\ndone training in 1.0 seconds\n"
        )
    page = published_page(work, out)
    assert "| head: eflomal's links, full context, trained jointly | argmax | 0.800 | 0.800 | 0.200 | 100 |" in page
    assert "| head: eflomal's links, full context, trained jointly (the whole model) | 5,400 updates in 125 min |" in page
    assert (
        "**Does not hold** (short by 0.20): trained jointly with a full-context head, the model scores 21.90 sacreBLEU on the "
        "Hansards test, the model without a head 22.40 (target within 0.3)."
    ) in page
    assert (
        "Measured: the full-context head trained alone on a finished model has AER 0.150 and leaves its BLEU as it was, for 600 "
        "updates in 15 min of the head's training; trained jointly from the start, AER 0.160 at -0.50 sacreBLEU, for 5,400 "
        "updates in 125 min of the whole model's."
    ) in page


README_RESULTS = (
    "# Tool\n\n## Results\n\n<!-- results: tooling/publish_results.py -->\n\n| table |\n\n- **Holds**: a claim.\n"
    "<!-- alignment: tooling/publish_results.py --page alignment -->\n- an old line\n<!-- /alignment -->\n\n<!-- /results -->\n\n## Speed\n"
)


def test_page_alignment_with_readme_rewrites_the_alignment_line_alone(tmp_path):
    work, out, readme = tmp_path / "work", tmp_path / "out", tmp_path / "README.md"
    align_reports(work)
    readme.write_text(README_RESULTS)
    head = work / "report" / "hansards.head"
    write(head / "rnnsearch_small" / "aer.json", scores({"argmax": (0.5, 0.4, 0.47)}))
    write(head / "rnnsearch_small.head_links" / "aer.json", scores({"threshold 0.3": (0.88, 0.9, 0.1)}))
    command = [sys.executable, "tooling/publish_results.py", "--work", str(work), "--out", str(out), "--page", "alignment"]
    run(*command, "--readme", str(readme))
    line = (
        "- **Does not hold** (short by 0.022): the alignment head's best links (head: eflomal's links, threshold 0.3) have AER "
        "0.100, +0.022 from eflomal's best (intersect, 0.078; target: at or below it); the model's attention: 0.470. "
        "docs/results/alignment.md has every aligner's links, BLEU with and without a head, and the time to align."
    )
    assert readme.read_text() == README_RESULTS.replace("- an old line", line)
    assert line.removeprefix("- ").split(" docs/results/")[0] in (out / "alignment.md").read_text()  # the page's verdict
    other = tmp_path / "OTHER.md"
    other.write_text("# no results block\n")
    done = run(*command, "--readme", str(other), "--out", str(tmp_path / "out2"), check=False)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1 and "<!-- alignment:" in done.stderr
    assert other.read_text() == "# no results block\n" and not (tmp_path / "out2").exists()


def test_fast_align_sits_beside_eflomal_in_the_rows_the_best_links_and_the_time_to_align(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    align = align_reports(work)
    write(
        align / "fast_align" / "fast_align.json",
        {
            "training_pairs": 624293,
            "gold_pairs": 37,
            "source": "en",
            "target": "fr",
            "aligner": "fast_align",
            "threads": 1,
            "seconds": {"read and normalise": 30.0, "align forward": 210.0, "align reverse": 215.0, "symmetrise": 20.0},
        },
    )
    for name, value in {"forward": 0.205, "reverse": 0.169, "intersect": 0.146, "union": 0.214, "grow-diag-final-and": 0.172}.items():
        write(align / f"fast_align.{name}" / "aer.json", scores({f"fast_align {name}": (0.8, 0.8, value)}))
    head = work / "report" / "hansards.head"
    write(head / "rnnsearch_small" / "aer.json", scores({"argmax": (0.5, 0.4, 0.47)}))
    write(head / "rnnsearch_small.head_links" / "aer.json", scores({"argmax": (0.9, 0.85, 0.11)}))
    page = published_page(work, out)
    assert "| fast_align | intersect | 0.800 | 0.800 | 0.146 | 100 |" in page
    assert page.index("| eflomal | grow-diag-final-and |") < page.index("| fast_align | forward |") < page.index("| RNNsearch En->Fr |")
    assert "fast_align's model (tooling/fast_align.py, -d -o -v) aligned the 624,293 prepared training pairs" in page
    assert "on 1 thread: 7.9 min of wall time" in page
    best_links = page.split("Each aligner's best links on the gold", 1)[1].split("\n\n", 2)[1]
    assert best_links.splitlines()[2:] == [
        "| attention, the model without a head | argmax | 0.470 |",
        "| head: eflomal's links | argmax | 0.110 |",
        "| eflomal | intersect | 0.078 |",
        "| fast_align's model | intersect | 0.146 |",
    ]
    # 475 s for 624,293 pairs, scaled to 100,000: 76 s
    assert "| fast_align's model, both directions (its measured time, scaled to the pairs) | 1.3 |" in page
