"""Publish what tooling/reproduce_results.sh wrote into WORK: OUT/README.md (every table, with a
"what holds" line per claim against the targets it states), OUT/directions.md (the same recipes
Fr->En beside En->Fr), the reports' small files (reports, BLEU-by-length plots, Appendix C,
heatmaps, AER), and the results block of the top README:

    python tooling/publish_results.py --work work/results --out docs/results [--readme README.md]
    python tooling/publish_results.py --work work/results --out docs/results --page directions
    python tooling/publish_results.py --work work/results --out docs/results --page alignment [--readme README.md]

--page alignment writes OUT/alignment.md (tooling/alignment_page.py: the stage hansards-alignment)
the same way, and with --readme only the alignment line of the README's results block (between its
ALIGNMENT_BEGIN and ALIGNMENT_END markers), which the full publish writes too. A corpus whose stages
have not run yet is left out of the page and named as pending. --page directions writes only
directions.md and its report folders and adds its link to README.md, leaving the rest as published:
for a WORK that holds only the stages multi30k-directions and hansards-fr-en, whose En->Fr Hansards
report and machine are then the published ones (OUT/hansards.test, README.md's machine table). The
options of each system are read from its checkpoint, its training figures and precision from its
training log (both in report.json, written by rnnsearch-evaluate); the pair of each corpus from its
prepared folder; the processor of each stage from WORK/machines.tsv, else from what OUT published
(its README.md's machine table, and OUT/machines.tsv, which every run writes); the wall time of
every command from WORK/wall_times.tsv. chrF2 shows as "—" for reports written before rnnsearch-evaluate had it.
"""

import argparse
import json
import statistics
import sys
from itertools import takewhile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from alignment_page import publish_alignment, readme_line  # noqa: E402  (tooling/alignment_page.py, beside this script)
from best_trial import best_trial  # noqa: E402  (tooling/best_trial.py, beside this script)
from results_cells import MISSING, chrf_cell, copy_files, load_report, score_cell, training_cells, verdict  # noqa: E402

from rnnsearch_plugin.analysis import bleu  # noqa: E402
from rnnsearch_plugin.analysis.markdown import markdown_table  # noqa: E402
from rnnsearch_plugin.analysis.training_log import read_training_log  # noqa: E402
from rnnsearch_plugin.data.languages import DEFAULT_PAIR  # noqa: E402
from rnnsearch_plugin.data.manifest import data_pair  # noqa: E402
from rnnsearch_plugin.data.textio import read_lines, write_atomic  # noqa: E402

REPORT_FILES = ("report.md", "report.json", "bleu_by_length.csv", "bleu_by_length.png", "long_sentences.md")
COMMAND = "MULTI30K_DIR=../shared/data/multi30k HANSARDS_DIR=../shared/data/hansards bash tooling/reproduce_results.sh"
SEARCH, ENCDEC, LSTM = "rnnsearch_small", "rnnencdec_small", "lstm"
PAPER_NAMES = {SEARCH: "RNNsearch-50", ENCDEC: "RNNencdec-50"}  # as the Hansards' word-level runs train them
SEEDS = (1, 2, 3)
README_BEGIN, README_END = "<!-- results: tooling/publish_results.py -->", "<!-- /results -->"
ALIGNMENT_BEGIN, ALIGNMENT_END = "<!-- alignment: tooling/publish_results.py --page alignment -->", "<!-- /alignment -->"
DISCUSSION_LINE = "What each line means, with the evidence, and what a miss would take: [discussion.md](discussion.md)."
DIRECTIONS_LINK = (
    "Either direction, Fr->En beside En->Fr (Multi30k with the quickstart's recipe, the Hansards with "
    "RNNsearch-50): [directions.md](directions.md)."
)
ALIGNMENT_LINK = "The model as an aligner, beside eflomal, and guided alignment: [alignment.md](alignment.md)."
PAGE_LINKS = {"directions.md": DIRECTIONS_LINK, "alignment.md": ALIGNMENT_LINK}  # pages beside README.md, each linked once published
MULTI30K_TESTS = {"test": "test_2016_flickr", "test1": "test_2017_flickr"}
DIRECTION_CORPORA = {"en-fr": "multi30k", "fr-en": "multi30k.fr-en"}  # multi30k-directions' WORK/CORPUS, by pair
MACHINES = "machines.tsv"  # WORK's: a line per stage run; OUT's: the processor of each published stage
QUICKSTART = "quickstart"  # multi30k-directions' system: scripts/quickstart.sh's recipe
DIRECTION_FOLDERS = (
    *(f"directions.{corpus}.{split}" for corpus in DIRECTION_CORPORA.values() for split in MULTI30K_TESTS),
    "hansards.fr-en.test",
    "hansards.fr-en.alignments",
)


def copy_reports(work: Path, out: Path, names: tuple[str, ...] | None = None) -> None:
    """The report folders (those in NAMES, else all), their published files only (no translations, no SVGs)."""
    for source in sorted((work / "report").iterdir()):
        if names is None or source.name in names:
            (out / source.name).mkdir(parents=True, exist_ok=True)
            copy_files(source, out / source.name, published_file)


def published_file(path: Path) -> bool:
    """A report file the published tree keeps: reports, plots, heatmap PNGs, AER tables."""
    return path.name in REPORT_FILES or path.suffix == ".png" or path.name.startswith("aer.")


def options_cell(options: dict[str, Any]) -> str:
    """{'arch': 'lstm', 'encoder_dropout_in': 0.3, 'amp': True, ...} -> '`--arch lstm --encoder-dropout-in 0.3 --amp ...`'."""
    words = [f"--{name.replace('_', '-')}" + ("" if value is True else f" {value}") for name, value in options.items()]
    return "`" + " ".join(words) + "`"


def sacrebleu_cell(system: dict, prefix: str = "") -> str:
    """'sacreBLEU / tokenised BLEU' of a report's system (PREFIX 'no_unk_': of its No UNK subset)."""
    return f"{score_cell(system[prefix + 'sacrebleu'])} / {score_cell(system[prefix + 'tokenised_bleu'])}"


def corpus_pair(folder: Path) -> tuple[str, str]:
    """A prepared folder's (source, target): its manifest's or its fairseq files', else En->Fr (a
    folder whose manifest names none)."""
    return data_pair(folder / "bin") or DEFAULT_PAIR


def corpus_line(work: Path, corpus: str) -> str:
    """'word, 30,004 / 30,004 en / fr dictionary entries; 624,293 / 3,000 / 3,000 train / valid / test pairs'."""
    manifest = json.loads((work / corpus / "manifest.json").read_text())
    pairs, vocabulary = manifest["pairs"], manifest["vocabulary"]
    source, target = corpus_pair(work / corpus)
    return (
        f"{manifest['scheme']}, {vocabulary[source]:,} / {vocabulary[target]:,} {source} / {target} dictionary entries; "
        + " / ".join(f"{n:,}" for n in pairs.values())
        + " "
        + " / ".join(pairs)
        + " pairs"
    )


def length_gaps(work: Path, systems: list[str]) -> dict[str, tuple[dict, dict, tuple[float, float]]]:
    """Per Hansards system: BLEU of the test sources of 10-20 words and of 30 or more (Figure 2's
    claim), and the 95% bootstrap interval of their difference."""
    raw, report = work / "hansards" / "raw", work / "report" / "hansards.test"
    source, target = corpus_pair(work / "hansards")
    sources, references = read_lines(raw / f"test.{source}"), read_lines(raw / f"test.{target}")
    lengths = bleu.source_lengths(sources, source)
    edges = [10, 20, 30]
    indices = {b.label: b.indices for b in bleu.buckets(lengths, edges)}
    gaps = {}
    for system in systems:
        hypotheses = read_lines(report / "translations" / f"{system}.txt")
        by_bucket = {r["bucket"]: r for r in bleu.by_length(hypotheses, references, lengths, edges, target)}
        interval = bleu.gap_interval(hypotheses, references, indices["10-20"], indices["30+"], target)
        gaps[system] = by_bucket["10-20"], by_bucket["30+"], interval
    return gaps


def gap(short: dict, long: dict) -> float:
    return long["bleu"] - short["bleu"]


def interval_cell(interval: tuple[float, float]) -> str:
    return f"{interval[0]:+.2f} to {interval[1]:+.2f}"


def gold_sentences(aer: dict[str, dict[str, Any]], path: Path) -> int:
    """How many gold sentences rnnsearch-aer scored, as its aer.json records with each method's
    scores (the diagonal's among them)."""
    if "sentences" not in aer.get("diagonal", {}):
        sys.exit(
            f"publish_results.py: error: {path} does not record how many gold sentences it scored: write it again with rnnsearch-aer --out"
        )
    return aer["diagonal"]["sentences"]


def hansards_section(work: Path, report: dict) -> tuple[list[str], list[str]]:
    """The Hansards section of the page, and its verdict lines."""
    systems, training = report["systems"], report["training"]
    table1 = [
        [
            name,
            sacrebleu_cell(s),
            chrf_cell(s),
            s["no_unk_sentences"],
            sacrebleu_cell(s, "no_unk_"),
            chrf_cell(s, "no_unk_"),
            training[name]["updates"],
            training[name]["epochs"],
            f"{training[name]['dev_nll']:.3f}",
            f"{training[name]['wall_hours']:.2f}",
            training[name]["precision"],
            options_cell(s["options"]),
        ]
        for name, s in systems.items()
    ]
    buckets = [[row[0]["bucket"], *(bleu.bucket_cell(r) for r in row)] for row in zip(*report["by_length"].values())]
    gaps = length_gaps(work, list(systems))
    aer_file = work / "report" / "hansards.aer" / "aer.json"
    aer = json.loads(aer_file.read_text())
    lines = [
        f"## Canadian Hansards {arrow(corpus_pair(work / 'hansards'))} at the paper's word level ({corpus_line(work, 'hansards')})",
        "",
        "RNNsearch-50 and RNNencdec-50: training pairs of up to 50 words, 30,000-word shortlists. Both models "
        "share every option but the architecture, one setting fixed beforehand (no dropout, Adam's fixed 0.002).",
        "",
        "Table 1 (test, 3,000 sentences, beam "
        f"{report['beam']}; No UNK: sentences without `<unk>` in source or reference, `<unk>` forbidden in the search):",
        "",
        *markdown_table(
            [
                "system",
                "All: sacreBLEU / tokenised BLEU",
                "All: chrF2",
                "No UNK: sentences",
                "No UNK: sacreBLEU / tokenised BLEU",
                "No UNK: chrF2",
                "updates",
                "epochs",
                "best dev NLL (nats/token)",
                "training hours",
                "precision",
                "options",
            ],
            table1,
        ),
        "",
        "Figure 2, BLEU by source length (sacreBLEU only): ![BLEU by length](hansards.test/bleu_by_length.png)",
        "",
        *markdown_table(["source words (sentences)", *systems], buckets),
        "",
        *markdown_table(
            ["system", "BLEU, 10-20 words (sentences)", "BLEU, 30+ words (sentences)", "30+ minus 10-20", "95% interval (bootstrap)"],
            [
                [name, bleu.bucket_cell(short), bleu.bucket_cell(long), f"{gap(short, long):+.2f}", interval_cell(interval)]
                for name, (short, long, interval) in gaps.items()
            ],
        ),
        "",
        "The interval: 1,000 resamples of each bucket's sentences with replacement (Koehn 2004), sacreBLEU of each.",
        "",
        "Appendix C, every test source of 30 words or more beside its reference and both translations: "
        "[long_sentences.md](hansards.test/long_sentences.md); the full report: [report.md](hansards.test/report.md).",
        "",
        f"Figure 3, the first three test sentences ({SEARCH}):",
        "",
        *(f"![alignment {i}](hansards.alignments/alignment_{i}.png)" for i in range(3)),
        "",
        f"Alignment error rate on the Hansards gold standard ({gold_sentences(aer, aer_file)} sentences):",
        "",
        *markdown_table(
            ["links", "precision", "recall", "AER"],
            [[links, f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['aer']:.3f}"] for links, s in aer.items()],
        ),
    ]
    lead = systems[SEARCH]["sacrebleu"] - systems[ENCDEC]["sacrebleu"]
    search_gap, encdec_gap = gap(*gaps[SEARCH][:2]), gap(*gaps[ENCDEC][:2])
    best_aer = min(s["aer"] for links, s in aer.items() if links != "diagonal")
    verdicts = [
        verdict(
            lead >= 5,
            f"on the Hansards RNNsearch-50 leads RNNencdec-50 by {lead:+.2f} sacreBLEU, same options (target at least +5).",
            f"{5 - lead:.2f}",
        ),
        verdict(
            search_gap >= -1 and encdec_gap <= -3,
            f"from sources of 10-20 words to 30 or more, RNNsearch's BLEU changes by {search_gap:+.2f} (95% interval "
            f"{interval_cell(gaps[SEARCH][2])}; target at least -1.00) and RNNencdec's by {encdec_gap:+.2f} "
            f"({interval_cell(gaps[ENCDEC][2])}; target -3.00 or worse).",
            f"{max(-1 - search_gap, encdec_gap + 3):.2f}",
        ),
        verdict(
            best_aer <= 0.45,
            f"the Hansards RNNsearch-50's attention, one direction's links (argmax, or thresholded), has AER "
            f"{best_aer:.3f} at best against the diagonal's {aer['diagonal']['aer']:.3f} (target 0.45 or lower); "
            "docs/results/alignment.md scores other links: two directions' models, symmetrised.",
            f"{best_aer - 0.45:.2f}",
        ),
    ]
    return lines, verdicts


def trial_rows(work: Path, model: str) -> list[list[Any]]:
    """MODEL's tuning trials that have a log, the one best_trial.py chooses marked as chosen."""
    folders = sorted((work / "checkpoints" / "multi30k").glob(f"{model}.t[0-9]*"), key=lambda f: int(f.name.rsplit(".t", 1)[1]))
    folders = [folder for folder in folders if (folder / "train.log").exists()]
    chosen = best_trial(folders) if folders else None
    rows = []
    for folder in folders:
        options = " ".join((folder / name).read_text().strip() for name in ("dropout.txt", "rate.txt"))
        training = read_training_log(folder / "train.log")
        number = folder.name.rsplit(".t", 1)[1]
        rows.append(
            [
                model,
                f"**{number}** (chosen)" if folder == chosen else number,
                f"`{options}`",
                f"{training['dev_nll']:.3f}",
                training["updates"],
            ]
        )
    return rows


def seed_scores(reports: dict[str, dict]) -> dict[str, list[tuple[int, float, float]]]:
    """Per model (RNNsearch, the lstm): (seed, sacreBLEU on each test set) of every seed run in all REPORTS."""
    return {
        model: [
            (seed, *(r["systems"][f"{model}.seed{seed}"]["sacrebleu"] for r in reports.values()))
            for seed in SEEDS
            if all(f"{model}.seed{seed}" in r["systems"] for r in reports.values())
        ]
        for model in (SEARCH, LSTM)
    }


def mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def seed_rows(scores: dict[str, list[tuple[int, float, float]]]) -> list[list[Any]]:
    """Per model with seed runs (seed_scores): how many, and the sacreBLEU mean ± standard deviation on each test set."""
    return [[model, len(rows), *(mean_std([row[i] for row in rows]) for i in (1, 2))] for model, rows in scores.items() if rows]


def multi30k_section(work: Path, reports: dict[str, dict]) -> tuple[list[str], list[str]]:
    """The Multi30k section (tuning trials, seeds, the paper pair, B.2), and its verdict lines."""
    test, test1 = reports.values()
    training = test["training"]
    systems = [
        [
            name,
            sacrebleu_cell(s),
            chrf_cell(s),
            sacrebleu_cell(test1["systems"][name]),
            chrf_cell(test1["systems"][name]),
            training[name]["updates"],
            training[name]["epochs"],
            f"{training[name]['dev_nll']:.3f}",
            training[name]["unit"],
            training[name]["precision"],
            options_cell(s["options"]),
        ]
        for name, s in test["systems"].items()
    ]
    scores = seed_scores(reports)
    lines = [
        f"## Multi30k {arrow(corpus_pair(work / 'multi30k'))} ({corpus_line(work, 'multi30k')})",
        "",
        "Tuning trials on dev (seed 1, best validation NLL in nats per token), the same option strings for "
        "RNNsearch and fairseq's lstm: three dropout settings at Adam's fixed 0.002, then three rates and "
        "schedules with the better dropout; each model's lowest dev loss is chosen.",
        "",
        *markdown_table(["model", "trial", "options", "best dev NLL", "updates"], trial_rows(work, SEARCH) + trial_rows(work, LSTM)),
        "",
        "Three seeds at the chosen settings (seed 1 is the chosen trial; sacreBLEU mean ± sample standard deviation):",
        "",
        *markdown_table(["model", "seeds", "test_2016_flickr", "test_2017_flickr"], seed_rows(scores)),
        "",
        f"Every system (sacreBLEU / tokenised lowercased BLEU, and chrF2, beam {test['beam']}). {ENCDEC} has {SEARCH}'s chosen "
        f"options (it has no annotations to drop out); {SEARCH}.b2 has them too, trained with B.2's recipe "
        "(Adadelta, 80 sentences a batch, loss per sentence) for the same wall time:",
        "",
        *markdown_table(
            [
                "system",
                "test_2016_flickr",
                "chrF2",
                "test_2017_flickr",
                "chrF2",
                "updates",
                "epochs",
                "best dev NLL",
                "unit",
                "precision",
                "options",
            ],
            systems,
        ),
        "",
        "Reports: [test_2016_flickr](multi30k.test/report.md), [test_2017_flickr](multi30k.test1/report.md).",
    ]
    verdicts = []
    if all(len(scores[model]) == len(SEEDS) for model in scores):
        leads = [statistics.mean(s[i] for s in scores[SEARCH]) - statistics.mean(s[i] for s in scores[LSTM]) for i in (1, 2)]
        verdicts.append(
            verdict(
                min(leads) > 0,
                f"over three seeds RNNsearch leads the lstm by {leads[0]:+.2f} (test_2016) "
                f"and {leads[1]:+.2f} (test_2017) sacreBLEU on average, at equal wall time "
                f"({training[SEARCH + '.seed1']['precision']} against {training[LSTM + '.seed1']['precision']}); "
                "the standard deviations are above.",
                f"{-min(leads):.2f}",
            )
        )
    if f"{SEARCH}.seed1" in test["systems"] and ENCDEC in test["systems"]:
        leads = [r["systems"][f"{SEARCH}.seed1"]["sacrebleu"] - r["systems"][ENCDEC]["sacrebleu"] for r in reports.values()]
        verdicts.append(
            verdict(
                min(leads) > 0,
                f"with the same options RNNsearch leads RNNencdec on Multi30k by {leads[0]:+.2f} and {leads[1]:+.2f} sacreBLEU.",
                f"{-min(leads):.2f}",
            )
        )
    return lines, verdicts


def wall_rows(work: Path) -> list[list[Any]]:
    """The latest run of every command (program, its last argument, seconds) in WORK/wall_times.tsv."""
    latest = {}
    for line in read_lines(work / "wall_times.tsv"):
        program, output, seconds = line.split("\t")
        latest[program, output] = seconds
    return [[program, output.replace(str(work), "WORK"), f"{int(seconds) / 60:.1f}"] for (program, output), seconds in latest.items()]


def read_machines(path: Path) -> dict[str, list[str]]:
    """A machines.tsv's stages, the latest row of each: stage -> [stage, processor, flags]."""
    return {row[0]: row for row in (line.split("\t") for line in (read_lines(path) if path.exists() else []))}


def latest_machines(work: Path) -> dict[str, list[str]]:
    """Each stage's latest run in WORK/machines.tsv (reproduce_results.sh's, a line per stage run)."""
    return read_machines(work / MACHINES)


def published_machines(out: Path) -> dict[str, list[str]]:
    """The processors of what OUT publishes: its README.md's machine table (``page``'s), then
    OUT/machines.tsv (``record_machines``'s) over it."""
    path, header = out / "README.md", markdown_table(["stage", "processor", "flags"], [])
    lines = path.read_text().splitlines() if path.exists() else []
    starts = [i + len(header) for i in range(len(lines)) if lines[i : i + len(header)] == header]
    rows = [] if not starts else takewhile(lambda line: line.startswith("| "), lines[starts[0] :])
    return {cells[0]: cells for cells in (row[2:-2].split(" | ") for row in rows)} | read_machines(out / MACHINES)


def record_machines(work: Path, out: Path) -> None:
    """OUT/machines.tsv: the published processors, WORK's latest over them, so that a page
    regenerated from a WORK that lacks a stage's run keeps the processor it published."""
    write_atomic(out / MACHINES, ["\t".join(row) for row in (published_machines(out) | latest_machines(work)).values()])


def page(
    work: Path,
    hansards: tuple[list[str], list[str]] | None,
    multi30k: tuple[list[str], list[str]] | None,
    verdicts: list[str],
    links: list[str],
) -> list[str]:
    return [
        "# Results on real data within a CPU budget",
        "",
        f"Regenerate: `{COMMAND}` (its stages one by one: `bash tooling/reproduce_results.sh STAGE`), then this page "
        "with `python tooling/publish_results.py --work work/results --out docs/results`. Each model trains on one "
        "thread pinned to one of the two cores, two jobs at a time, and is evaluated at its best validation loss. "
        "Options and seed are read from each checkpoint; updates, epochs, dev loss and precision from its training "
        "log. How the settings came about, and the first edition's runs: [choosing_options.md](choosing_options.md).",
        "",
        "## What holds and what does not",
        "",
        *(f"- {line}" for line in verdicts),
        "",
        DISCUSSION_LINE,
        "",
        *(line for link in links for line in (link, "")),
        *(hansards[0] + [""] if hansards else []),
        *(multi30k[0] + [""] if multi30k else []),
        "## Machines and wall time",
        "",
        *markdown_table(["stage", "processor", "flags"], list(latest_machines(work).values())),
        "",
        *markdown_table(["program", "output", "minutes"], wall_rows(work)),
    ]


def arrow(pair: tuple[str, str]) -> str:
    """A (source, target) pair as the pages write it: En->Fr."""
    return f"{pair[0].capitalize()}->{pair[1].capitalize()}"


def direction(report: dict) -> str:
    """'En->Fr': the report's pair (one that names none: En->Fr)."""
    return arrow((report["source_lang"], report["target_lang"]) if "source_lang" in report else DEFAULT_PAIR)


def machine_cell(machines: dict[str, list[str]], stage: str) -> str:
    return f"{machines[stage][1]} ({machines[stage][2]})" if stage in machines else MISSING


def processors_line(machines: dict[str, list[str]], stages: dict[str, str]) -> str:
    """Whether the runs of STAGES ({direction: stage}) had one processor, and which."""
    known = {label: machines[stage][1:] for label, stage in stages.items() if stage in machines}
    if len({tuple(row) for row in known.values()}) > 1:
        return (
            "The processors differ ("
            + "; ".join(f"{label}: {row[0]}, {row[1]}" for label, row in known.items())
            + "): updates, hours and wall time do not compare across them."
        )
    return f"Both directions ran on {next(iter(known.values()))[0]}." if known else "The processors were not recorded."


def signatures_line(reports: list[dict]) -> str:
    """The distinct sacreBLEU and chrF2 signatures of REPORTS' systems."""
    systems = [system for report in reports for system in report["systems"].values()]
    found = {name: sorted({s[key] for s in systems if key in s}) for name, key in (("sacreBLEU", "signature"), ("chrF2", "chrf_signature"))}
    return (
        "Signatures: "
        + "; ".join(f"{name} " + ", ".join(f"`{s}`" for s in signatures) for name, signatures in found.items() if signatures)
        + "."
    )


def data_lines(work: Path, corpora: list[str]) -> list[str]:
    """'- CORPUS: corpus_line' for the prepared folders of CORPORA present in WORK, and a blank line."""
    lines = [f"- `{corpus}`: {corpus_line(work, corpus)}" for corpus in corpora if (work / corpus / "manifest.json").exists()]
    return [*lines, ""] if lines else []


def multi30k_directions(work: Path, machines: dict[str, list[str]]) -> list[str] | None:
    """Multi30k with the quickstart's recipe, En->Fr and Fr->En, on both test sets (stage multi30k-directions)."""
    reports = {
        pair: {split: load_report(work / "report", f"directions.{corpus}.{split}") for split in MULTI30K_TESTS}
        for pair, corpus in DIRECTION_CORPORA.items()
    }
    if any(None in by_split.values() for by_split in reports.values()):
        return None
    rows = [
        [
            direction(by_split["test"]),
            *(
                cell
                for report in by_split.values()
                for cell in (score_cell(report["systems"][QUICKSTART]["sacrebleu"]), chrf_cell(report["systems"][QUICKSTART]))
            ),
            *training_cells(by_split["test"], QUICKSTART),
            machine_cell(machines, "multi30k-directions"),
        ]
        for by_split in reports.values()
    ]
    every = [report for by_split in reports.values() for report in by_split.values()]
    return [
        "## Multi30k, the quickstart's recipe in either direction",
        "",
        f"`{SEARCH}` trained as `scripts/quickstart.sh` trains it, once En->Fr and once Fr->En, one core each, evaluated "
        f"at its best dev loss (beam {every[0]['beam']}):",
        "",
        *data_lines(work, list(DIRECTION_CORPORA.values())),
        *markdown_table(
            [
                "direction",
                *(f"{name} {metric}" for name in MULTI30K_TESTS.values() for metric in ("sacreBLEU", "chrF2")),
                "updates",
                "best dev NLL (nats/token)",
                "training hours",
                "processor",
            ],
            rows,
        ),
        "",
        f"{signatures_line(every)} {processors_line(machines, {'both': 'multi30k-directions'})}",
        "",
        "Reports: "
        + ", ".join(
            f"[{direction(by_split[split])} {name}](directions.{DIRECTION_CORPORA[pair]}.{split}/report.md)"
            for pair, by_split in reports.items()
            for split, name in MULTI30K_TESTS.items()
        )
        + ".",
    ]


def hansards_directions(work: Path, out: Path, machines: dict[str, list[str]]) -> list[str] | None:
    """The Hansards' RNNsearch-50 Fr->En (stage hansards-fr-en) beside En->Fr (WORK's, else the published one)."""
    fr_en = load_report(work / "report", "hansards.fr-en.test")
    if fr_en is None:
        return None
    en_fr = load_report(work / "report", "hansards.test") or load_report(out, "hansards.test")
    runs = {stage: report for stage, report in (("hansards", en_fr), ("hansards-fr-en", fr_en)) if report}
    rows = []
    for stage, report in runs.items():
        system = report["systems"][SEARCH]
        rows.append(
            [
                direction(report),
                score_cell(system["sacrebleu"]),
                chrf_cell(system),
                system["no_unk_sentences"],
                score_cell(system["no_unk_sacrebleu"]),
                chrf_cell(system, "no_unk_"),
                *training_cells(report, SEARCH),
                machine_cell(machines, stage),
            ]
        )
    options = {direction(report): options_cell(report["systems"][SEARCH]["options"]) for report in runs.values()}
    sentences = sum(bucket["sentences"] for bucket in fr_en["by_length"][SEARCH])
    alignments = next(
        (folder for folder in (work / "report" / "hansards.fr-en.alignments", out / "hansards.fr-en.alignments") if folder.is_dir()), None
    )
    return [
        "## Canadian Hansards at word level, RNNsearch-50 in either direction",
        "",
        f"`{SEARCH}` at the paper's word level (training pairs of up to 50 words, 30,000-word shortlists), trained "
        f"Fr->En beside the En->Fr model of [the results](README.md); test ({sentences:,} sentences), beam "
        f"{fr_en['beam']}; No UNK: sentences without `<unk>` in source or reference, `<unk>` forbidden in the search.",
        "",
        *data_lines(work, ["hansards", "hansards.fr-en"]),
        *markdown_table(
            [
                "direction",
                "sacreBLEU",
                "chrF2",
                "No UNK: sentences",
                "No UNK: sacreBLEU",
                "No UNK: chrF2",
                "updates",
                "best dev NLL (nats/token)",
                "training hours",
                "processor",
            ],
            rows,
        ),
        "",
        f"{signatures_line(list(runs.values()))} "
        f"{processors_line(machines, {direction(report): stage for stage, report in runs.items()})} "
        + (
            "The same options: " + next(iter(options.values()))
            if len(set(options.values())) == 1
            else "Options: " + "; ".join(f"{label} {cell}" for label, cell in options.items())
        )
        + ".",
        "",
        "Reports: [En->Fr](hansards.test/report.md), [Fr->En](hansards.fr-en.test/report.md).",
        *(
            [
                "",
                "Figure 3 Fr->En, the first test sentences:",
                "",
                *(f"![{png.stem}](hansards.fr-en.alignments/{png.name})" for png in sorted(alignments.glob("*.png"))),
            ]
            if alignments
            else []
        ),
    ]


def directions_page(work: Path, out: Path) -> list[str] | None:
    """OUT/directions.md, None when WORK holds neither of its stages' reports."""
    machines = published_machines(out) | latest_machines(work)
    sections = {"multi30k-directions": multi30k_directions(work, machines), "hansards-fr-en": hansards_directions(work, out, machines)}
    if not any(sections.values()):
        return None
    return [
        "# Either direction: Fr->En beside En->Fr",
        "",
        "Regenerate: `bash tooling/reproduce_results.sh multi30k-directions hansards-fr-en`, then this page with "
        "`python tooling/publish_results.py --work work/results --out docs/results --page directions`. Each model trains "
        "on one thread pinned to one core. BLEU and chrF2 compare each output with references in its own target "
        "language (sacreBLEU's tokeniser chosen by it, in the signature), so the two directions' figures measure two "
        "tasks, not one model against another.",
        "",
        *(line for section in sections.values() if section for line in [*section, ""]),
        *(f"Not run yet: stage {stage}." for stage, section in sections.items() if section is None),
    ]


def publish_directions(work: Path, out: Path) -> bool:
    """Write OUT/directions.md and copy its report folders; False when WORK has none of them."""
    lines = directions_page(work, out)
    if lines is None:
        return False
    copy_reports(work, out, DIRECTION_FOLDERS)
    write_atomic(out / "directions.md", lines)
    print(f"| wrote {out}/directions.md")
    return True


def page_links(out: Path) -> list[str]:
    """The PAGE_LINKS lines of the pages published in OUT."""
    return [link for name, link in PAGE_LINKS.items() if (out / name).exists()]


def with_links(lines: list[str], links: list[str]) -> list[str]:
    """A published README.md's LINES with each of LINKS where ``page`` puts them (after the line on
    discussion.md and the links before them, else at the end), and nothing else changed."""
    for link in links:
        if link in lines:
            continue
        before = [line for line in (DISCUSSION_LINE, *links[: links.index(link)]) if line in lines]
        if not before:
            lines = [*lines, "", link]
            continue
        at = lines.index(before[-1]) + 2
        lines = [*lines[:at], link, "", *lines[at:]]
    return lines


def readme_block(hansards_report: dict | None, multi30k_reports: dict[str, dict] | None, verdicts: list[str], alignment: str) -> list[str]:
    """The top README's results block: the Hansards Table 1 and the Multi30k seeds in brief, the verdict lines,
    and the ALIGNMENT line (alignment_block)."""
    lines = [
        README_BEGIN,
        "",
        "Generated by `tooling/publish_results.py` from [docs/results/README.md](docs/results/README.md)'s runs:",
        "",
    ]
    if hansards_report:
        systems = hansards_report["systems"]
        lines += [
            *markdown_table(
                ["Hansards, word level, test (3,000)", "sacreBLEU (All)", "chrF2 (All)", "No UNK", "updates"],
                [
                    [
                        f"{PAPER_NAMES[name]} (`{name}`)" if name in PAPER_NAMES else name,
                        f"{s['sacrebleu']:.2f}",
                        chrf_cell(s),
                        f"{s['no_unk_sacrebleu']:.2f}",
                        hansards_report["training"][name]["updates"],
                    ]
                    for name, s in systems.items()
                ],
            ),
            "",
        ]
    if multi30k_reports:
        lines += [
            *markdown_table(
                ["Multi30k, sacreBLEU over seeds (mean ± std)", "seeds", "test_2016_flickr", "test_2017_flickr"],
                seed_rows(seed_scores(multi30k_reports)),
            ),
            "",
        ]
    return lines + [f"- {line}" for line in verdicts] + alignment_block(alignment) + ["", README_END]


def alignment_block(line: str) -> list[str]:
    """The results block's alignment line between its markers, which --page alignment --readme rewrites alone."""
    return [ALIGNMENT_BEGIN, f"- {line}", ALIGNMENT_END]


def replace_block(text: str, block: list[str], begin: str = README_BEGIN, end: str = README_END) -> list[str]:
    """TEXT's lines with its BEGIN ... END block replaced by BLOCK."""
    if begin not in text or end not in text:
        raise ValueError(f"no {begin} ... {end} block to replace")
    before, rest = text.split(begin, 1)
    return (before + "\n".join(block) + rest.split(end, 1)[1]).splitlines()


PAGES = {  # --page: its publisher, and the stages whose reports it needs
    "directions": (publish_directions, "multi30k-directions or hansards-fr-en"),
    "alignment": (publish_alignment, "hansards-alignment"),
}


def replaced_readme(readme: Path, block: list[str], begin: str = README_BEGIN, end: str = README_END) -> list[str]:
    """README's lines with its BEGIN ... END block replaced by BLOCK; a one-line error for a README without one."""
    try:
        return replace_block(readme.read_text(), block, begin, end)
    except (OSError, ValueError) as error:
        sys.exit(f"publish_results.py: error: {readme}: {error}")


def publish_page(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """--page: that page, its report folders and its link; with --readme (alignment only) its README line."""
    if args.readme and args.page != "alignment":
        parser.error(f"--readme takes README.md's figures: run it without --page {args.page}")
    readme = replaced_readme(args.readme, alignment_block(readme_line(args.work)), ALIGNMENT_BEGIN, ALIGNMENT_END) if args.readme else None
    publish, stages = PAGES[args.page]
    if not publish(args.work, args.out):
        sys.exit(f"publish_results.py: error: no report of the stages {stages} in {args.work}/report: run them first")
    if (args.out / "README.md").exists():
        write_atomic(args.out / "README.md", with_links(read_lines(args.out / "README.md"), page_links(args.out)))
    record_machines(args.work, args.out)
    if readme is not None:
        write_atomic(args.readme, readme)
        print(f"| updated the alignment line of {args.readme}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("work/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/results"))
    parser.add_argument("--readme", type=Path, help="also replace the results block of this README")
    parser.add_argument(
        "--page",
        choices=("all", *PAGES),
        default="all",
        help="directions or alignment: write only that page and its report folders, and link it from README.md "
        "(alignment with --readme: its line of the README's results block too)",
    )
    args = parser.parse_args()
    if args.page != "all":
        publish_page(args, parser)
        return
    hansards_report = load_report(args.work / "report", "hansards.test")
    loaded = {split: load_report(args.work / "report", f"multi30k.{split}") for split in MULTI30K_TESTS}
    multi30k_reports = None if None in loaded.values() else loaded
    if hansards_report is None and multi30k_reports is None:
        sys.exit(
            f"publish_results.py: error: no report for hansards.test or multi30k.test/test1 in {args.work}/report: "
            "run tooling/reproduce_results.sh's evaluate stages first (for the directions stages alone: --page directions)"
        )
    hansards = hansards_section(args.work, hansards_report) if hansards_report else None
    multi30k = multi30k_section(args.work, multi30k_reports) if multi30k_reports else None
    verdicts = [line for section in (hansards, multi30k) if section for line in section[1]]
    verdicts += [
        f"Not run yet: {name}."
        for name, section in (("the Hansards (stages hansards, hansards-evaluate)", hansards), ("Multi30k (stages multi30k-*)", multi30k))
        if section is None
    ]
    block = readme_block(hansards_report, multi30k_reports, verdicts, readme_line(args.work))
    readme = replaced_readme(args.readme, block) if args.readme else None  # checked before anything is written
    copy_reports(args.work, args.out)
    for publish, _ in PAGES.values():
        publish(args.work, args.out)
    record_machines(args.work, args.out)
    write_atomic(args.out / "README.md", page(args.work, hansards, multi30k, verdicts, page_links(args.out)))
    print(f"| wrote {args.out}/README.md")
    if readme is not None:
        write_atomic(args.readme, readme)
        print(f"| updated the results block of {args.readme}")


if __name__ == "__main__":
    main()
