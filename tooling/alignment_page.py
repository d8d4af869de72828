"""OUT/alignment.md: the model as an aligner beside a statistical one, from what the
stage hansards-alignment of tooling/reproduce_results.sh wrote into WORK/report:

    hansards.align/ALIGNER/ALIGNER.json     eflomal's and fast_align's pairs, settings and wall time per step
    hansards.align/ALIGNER.NAME/aer.json    their links on the gold, each direction and symmetrised
    hansards.align/rnnsearch.en-fr/aer.json RNNsearch En->Fr (argmax, each threshold) and both directions symmetrised
    hansards.align/rnnsearch.fr-en/aer.json RNNsearch Fr->En (the gold transposed)
    hansards.align/align_load.test.json     rnnsearch-align on the 3,000 test pairs, both directions
    hansards.align/rnnsearch.guided.en-fr/aer.json, hansards.guided.test/report.json
                                            the guided model's links, and its BLEU and the model trained
                                            jointly with a head beside the unguided one's
    hansards.head/NAME/aer.json             the attention of the model the heads were added to
                                            (rnnsearch_small) and each head's links, the joint head's too
    hansards.head/align_load.NAME.json      rnnsearch-align on the test pairs with the head and with the attention
    hansards.head.test/report.json          the model's BLEU without and with a head

Read by tooling/publish_results.py (--page alignment, and with every page); a stage not run yet is
named as pending. The targets are the ones the page states.
"""

from pathlib import Path
from typing import Any

from results_cells import MISSING, chrf_cell, copy_files, read_json, score_cell, training_cells, verdict  # beside this script

from rnnsearch_plugin.analysis.links import SYMMETRISATIONS
from rnnsearch_plugin.analysis.markdown import markdown_table
from rnnsearch_plugin.analysis.training_log import read_training_log
from rnnsearch_plugin.data.textio import write_atomic
from rnnsearch_plugin.data.word_links import SYMMETRISATION

ALIGN, GUIDED_REPORT, HEAD, HEAD_REPORT = "hansards.align", "hansards.guided.test", "hansards.head", "hansards.head.test"
FOLDERS = (ALIGN, GUIDED_REPORT, HEAD, HEAD_REPORT)  # the report folders the page publishes
HEADS = {  # the heads' reports (hansards.head/NAME): what the head was trained toward, with what context, and
    # its training (WORK/checkpoints/CORPUS/MODEL; None: the rows of two heads' links symmetrised, no training of their own)
    "rnnsearch_small.head_links": ("eflomal's links", "hansards/rnnsearch_small.head_links"),
    "rnnsearch_small.head_own": ("its own objective, no links", "hansards/rnnsearch_small.head_own"),
    "rnnsearch_small.head_links_full": ("eflomal's links, full context", "hansards/rnnsearch_small.head_links_full"),
    "rnnsearch_small.head_links_long": ("eflomal's links, three times as long", "hansards/rnnsearch_small.head_links_long"),
    "rnnsearch_small.head_links_full.fr-en": (
        "eflomal's links, full context, Fr->En",
        "hansards.fr-en/rnnsearch_small.head_links_full",
    ),
    "rnnsearch_small.head_links_full.both": ("eflomal's links, full context, both directions symmetrised", None),
    "rnnsearch_small.head_joint": ("eflomal's links, full context, trained jointly", "hansards/rnnsearch_small.head_joint"),
}
FULL, JOINT = "rnnsearch_small.head_links_full", "rnnsearch_small.head_joint"  # one head's two trainings: alone, jointly
HEAD_BLEU_GAP, PAIRS_TO_TIME = 0.3, 100_000
STATISTICAL_ROWS = ("forward", "reverse", "intersect", "union", "grow-diag-final-and")
STATISTICAL = {"eflomal": "eflomal", "fast_align": "fast_align's model"}  # statistical_alignments.py --aligner, and its name here
SEARCH, GUIDED = "rnnsearch_small", "rnnsearch_small_guided"
AER_TARGET, GUIDED_GAP, BLEU_COST, SECONDS_TARGET = 0.35, 0.05, 0.5, 300
REGENERATE = (
    "Regenerate: `bash tooling/reproduce_results.sh prepare hansards-alignment` (it reads the models of the stages "
    "hansards and hansards-fr-en where they ran, else trains them; HANSARDS_MINUTES and HEAD_MINUTES set its budgets), "
    "then this page with "
    "`python tooling/publish_results.py --work work/results --out docs/results --page alignment`."
)


def aer_rows(folder: Path, aligner: str, skip: tuple[str, ...] = ()) -> list[list[Any]]:
    """One table row per link method of FOLDER/aer.json (none if absent): aligner, links (the method's
    name without the aligner's: "eflomal intersect" -> "intersect"), P, R, AER, links found."""
    scores = read_json(folder / "aer.json") or {}
    return [
        [aligner, name.removeprefix(f"{aligner} "), f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['aer']:.3f}", s["links"]]
        for name, s in scores.items()
        if name not in skip
    ]


def head_rows(folder: Path, aligner: str, symmetrised: bool) -> list[list[Any]]:
    """A head's rows of FOLDER/aer.json, the diagonal left out; ``symmetrised``: only the rows of both
    directions' links symmetrised (rnnsearch-aer with --reverse-path writes one direction's too)."""
    rows = aer_rows(folder, aligner, skip=("diagonal",))
    return [row for row in rows if row[1].endswith(tuple(SYMMETRISATIONS))] if symmetrised else rows


def best(rows: list[list[Any]]) -> list[Any] | None:
    """The row of lowest AER (the first of equals), None for no rows."""
    return min(rows, key=lambda row: float(row[4])) if rows else None


def statistical_lines(align: Path, aligner: str = "eflomal") -> tuple[list[list[Any]], str]:
    """A statistical aligner's rows (``STATISTICAL``) and the sentence saying what it aligned and how long it took."""
    report = read_json(align / aligner / f"{aligner}.json")
    rows = [row for name in STATISTICAL_ROWS for row in aer_rows(align / f"{aligner}.{name}", aligner)]
    if report is None:
        return rows, f"{STATISTICAL[aligner]}: not run yet."
    steps = ", ".join(f"{step} {seconds:.0f} s" for step, seconds in report["seconds"].items())
    name = f"eflomal {report['eflomal']}" if aligner == "eflomal" else f"{STATISTICAL[aligner]} (tooling/fast_align.py, -d -o -v)"
    return rows, (
        f"{name} aligned the {report['training_pairs']:,} prepared training pairs with the gold's "
        f"{report['gold_pairs']} ({report['source']}-{report['target']}, the gold's tokenisation), both directions, on "
        f"{report['threads']} thread: {sum(report['seconds'].values()) / 60:.1f} min of wall time ({steps}); "
        "symmetrised by the plugin's links module."
    )


def scaled_minutes(report: dict | None, pairs: int) -> float | None:
    """A statistical aligner's measured wall time (both directions) carried to ``pairs`` pairs, in minutes."""
    return None if report is None else sum(report["seconds"].values()) * pairs / report["training_pairs"] / 60


def speed_lines(align: Path) -> tuple[list[str], float | None]:
    """The table of rnnsearch-align on the test pairs, and its seconds for all of them (None: not run)."""
    report = read_json(align / "align_load.test.json")
    if report is None:
        return ["rnnsearch-align on the test pairs: not run yet (stage hansards-alignment)."], None
    env, row = report["environment"], report["rows"][-1]
    return [
        f"rnnsearch-align on the Hansards test pairs, directions: {report['directions']}; {env['device']}, "
        f"{env['threads']} thread, torch {env['torch']}, {env['date']} (`{report['command']}`):",
        "",
        *markdown_table(
            ["pairs", "seconds", "pairs/s", "peak MB"],
            [[f"{r['pairs']:,}", f"{r['seconds']:.1f}", f"{r['pairs_per_second']:.1f}", f"{r['peak_mb']:.0f}"] for r in report["rows"]],
        ),
    ], row["seconds"] if row["pairs"] >= 3000 else None


def system_row(report: dict, name: str) -> list[Any]:
    """A system's BLEU and training figures (rnnsearch-evaluate's report.json), "—" for what it lacks."""
    system = report["systems"][name]
    scores = [score_cell(system.get("sacrebleu")), chrf_cell(system), score_cell(system.get("no_unk_sacrebleu"))]
    return [name, *scores, *training_cells(report, name)]


def lambda_of(report: dict, system: str) -> str:
    """SYSTEM's --alignment-lambda as its training log gave it ("—" for a report without it)."""
    value = report["training"].get(system, {}).get("alignment_lambda")
    return MISSING if value is None else f"{value:g}"


def guided_lines(work: Path, guided_best: list[Any] | None, eflomal_best: list[Any] | None) -> tuple[list[str], list[str]]:
    """The guided model's BLEU beside the unguided one's, and the guided target's verdict."""
    report = read_json(work / "report" / GUIDED_REPORT / "report.json")
    if report is None or guided_best is None:
        return ["Guided alignment: not run yet (stage hansards-alignment)."], ["Not run yet: guided alignment (stage hansards-alignment)."]
    systems = report["systems"]
    rows = [system_row(report, name) for name in systems]
    lines = [
        "## Guided alignment (not the paper's): RNNsearch-50 En->Fr trained toward eflomal's links",
        "",
        f"The Hansards {report['split']} set, beam {report['beam']}; both models with the same options and data, one core "
        f"each, the guided one with `--alignment-lambda {lambda_of(report, GUIDED)}` (docs/training.md); each one's "
        "updates and hours are in the table.",
        "",
        *markdown_table(["system", "sacreBLEU", "chrF2", "No UNK sacreBLEU", "updates", "best dev NLL", "training hours"], rows),
    ]
    if SEARCH not in systems or GUIDED not in systems or eflomal_best is None:
        return lines, ["Not run yet: the guided model's comparison needs the unguided model and eflomal in the same run."]
    cost = systems[SEARCH]["sacrebleu"] - systems[GUIDED]["sacrebleu"]
    gap = float(guided_best[4]) - float(eflomal_best[4])
    claim = (
        f"trained with guided alignment, RNNsearch's best links ({guided_best[1]}) have AER {guided_best[4]}, "
        f"{gap:+.3f} from eflomal's best ({eflomal_best[1]}, {eflomal_best[4]}; target within {GUIDED_GAP}), "
        f"at {cost:+.2f} sacreBLEU lost on the Hansards test (target at most {BLEU_COST})."
    )
    short_by = f"{max(gap - GUIDED_GAP, 0):.3f} AER, {max(cost - BLEU_COST, 0):.2f} BLEU"
    return lines, [verdict(gap <= GUIDED_GAP and cost <= BLEU_COST, claim, short_by)]


def head_training(work: Path, run: str) -> str:
    """'1,234 updates in 20 min' of the training log of WORK/checkpoints/RUN (CORPUS/MODEL), "—" without a finished one."""
    log = work / "checkpoints" / run / "train.log"
    if not log.exists() or "done training in" not in log.read_text():
        return MISSING
    training = read_training_log(log)
    return f"{training['updates']:,} updates in {training['wall_hours'] * 60:.0f} min"


def seconds_per(report: dict | None, pairs: int) -> float | None:
    """rnnsearch-align's seconds for PAIRS pairs at the rate of its largest measured size (None: not run)."""
    if report is None:
        return None
    row = report["rows"][-1]
    return pairs / row["pairs_per_second"]


def head_findings(heads: dict[str, list[list[Any]]], eflomal: list[list[Any]]) -> list[str]:
    """What each way of training the head gave (its best AER), beside the links it learns from: a
    paragraph, none before any head is scored."""
    tried = [f"{HEADS[name][0]}, {best(rows)[4]}" for name, rows in heads.items() if rows]
    if not tried:
        return []
    text = f"What was tried, each head's best AER: {'; '.join(tried)}."
    teacher, top = next((row for row in eflomal if row[1] == SYMMETRISATION), None), best(eflomal)
    if teacher is not None:
        text += (
            f" The links a head is trained toward are eflomal's {SYMMETRISATION} links of the training pairs "
            "(`scripts/prepare_data.py --eflomal`), whose AER on the gold (aligned with the same training pairs) is "
            f"{teacher[4]}, {float(teacher[4]) - float(top[4]):+.3f} from eflomal's best ({top[1]}, {top[4]}): a head that "
            "learnt its teacher's links exactly would have that AER."
        )
    return [text, ""]


def head_lines(work: Path, eflomal_rows: list[list[Any]], fast_rows: list[list[Any]]) -> tuple[list[str], list[str]]:
    """The alignment head's section and its verdicts, beside eflomal's and fast_align's rows."""
    folder = work / "report" / HEAD
    if not folder.is_dir():
        pending = "Not run yet: the alignment head (stage hansards-alignment)."
        return ["## The alignment head", "", "Not run yet (stage hansards-alignment)."], [pending]
    attention, heads = head_reports(work)
    found = [row for rows in heads.values() for row in rows]
    training = [
        [f"head: {trained}" + (" (the whole model)" if name == JOINT else ""), head_training(work, run)]
        for name, (trained, run) in HEADS.items()
        if run is not None
    ]
    timed = next((name for name in HEADS if (folder / f"align_load.{name}.json").exists()), None)  # the stage's: the first head
    speed = {name: read_json(folder / f"align_load.{name}.json") for name in (SEARCH, timed)}
    aligned = {
        "rnnsearch-align, the head (one direction)": seconds_per(speed[timed], PAIRS_TO_TIME),
        "rnnsearch-align, the attention (one direction)": seconds_per(speed[SEARCH], PAIRS_TO_TIME),
    }
    minutes = {label: None if seconds is None else seconds / 60 for label, seconds in aligned.items()}
    for aligner, name in STATISTICAL.items():
        report = read_json(work / "report" / ALIGN / aligner / f"{aligner}.json")
        minutes[f"{name}, both directions (its measured time, scaled to the pairs)"] = scaled_minutes(report, PAIRS_TO_TIME)
    timing = [[label, MISSING if value is None else f"{value:.1f}"] for label, value in minutes.items()]
    report = read_json(work / "report" / HEAD_REPORT / "report.json")
    alone = "; ".join(trained for name, (trained, run) in HEADS.items() if run and name != JOINT)
    lines = [
        "## The alignment head",
        "",
        "`--alignment-head` (models/alignment_head.py, not the paper's) added to the unguided RNNsearch-50 En->Fr "
        "(its training in the first row) and trained alone (`--train-alignment-head-only`: every other parameter "
        f"frozen, so the model translates as before), each toward one of: {alone}; "
        "and the full-context head trained jointly with the translation from the start, toward the same links "
        "(`--alignment-head --alignment-head-context full --load-alignments --alignment-lambda 1`, the "
        "model's own training, its translation its own). A head's links are a_ij, "
        "the posterior of where to look once the emitted word is known. The Fr->En head is added to RNNsearch-50 Fr->En "
        "and trained as the En->Fr one, toward eflomal's links of the Fr->En training pairs; "
        "the two full-context heads' links symmetrised are scored as the attention's are (each direction's argmax or "
        "threshold links, then intersect, union or grow-diag-final-and). Each one's training on one thread, the model's own:",
        "",
        *markdown_table(
            ["model", "training"], [["RNNsearch-50 En->Fr, without a head", head_training(work, f"hansards/{SEARCH}")], *training]
        ),
        "",
        *markdown_table(["aligner", "links", "precision", "recall", "AER", "links found"], attention + found),
        "",
        "Each aligner's best links on the gold (chosen on these sentences), on the same training pairs:",
        "",
        *markdown_table(["aligner", "links", "AER"], best_rows([attention, *heads.values(), eflomal_rows, fast_rows])),
        "",
        *head_findings(heads, eflomal_rows),
        f"Time to align {PAIRS_TO_TIME:,} pairs, in minutes on one thread (rnnsearch-align at its rate on the 3,000 Hansards test pairs):",
        "",
        *markdown_table(["aligner", "minutes"], timing),
    ]
    if report is not None:
        lines += ["", f"The Hansards {report['split']} set, beam {report['beam']}, without and with the head:", ""]
        rows = [
            [name, score_cell(s.get("sacrebleu")), chrf_cell(s), score_cell(s.get("no_unk_sacrebleu"))]
            for name, s in report["systems"].items()
        ]
        lines += markdown_table(["system", "sacreBLEU", "chrF2", "No UNK sacreBLEU"], rows)
    verdicts = [line for line in [head_aer_verdict(attention, found, best(eflomal_rows))] if line]
    if report is not None and len(report["systems"]) == 2:
        without, with_head = (system["sacrebleu"] for system in report["systems"].values())
        verdicts.append(
            verdict(
                abs(with_head - without) <= HEAD_BLEU_GAP,
                f"with the head the model scores {with_head:.2f} sacreBLEU on the Hansards test, without it {without:.2f} "
                f"(target within {HEAD_BLEU_GAP}).",
                f"{abs(with_head - without) - HEAD_BLEU_GAP:.2f}",
            )
        )
    return lines, verdicts + joint_verdicts(work, heads)


def best_rows(aligners: list[list[list[Any]]]) -> list[list[Any]]:
    """Each aligner's best row (aligner, links, AER), of the rows of each; none for an aligner not run."""
    found = [best(rows) for rows in aligners if rows]
    return [[STATISTICAL.get(row[0], row[0]), row[1], row[4]] for row in found]


def head_reports(work: Path) -> tuple[list[list[Any]], dict[str, list[list[Any]]]]:
    """The attention's rows of the model the heads were added to, and each head's rows (none where not run)."""
    folder = work / "report" / HEAD
    attention = aer_rows(folder / SEARCH, "attention, the model without a head", skip=("diagonal",))
    return attention, {name: head_rows(folder / name, f"head: {trained}", run is None) for name, (trained, run) in HEADS.items()}


def head_aer_verdict(attention: list[list[Any]], found: list[list[Any]], eflomal_best: list[Any] | None) -> str | None:
    """The goal's verdict: the heads' best links against eflomal's best (None before both are scored)."""
    if not found or eflomal_best is None:
        return None
    row = best(found)
    gap = float(row[4]) - float(eflomal_best[4])
    return verdict(
        gap <= 0,
        f"the alignment head's best links ({row[0]}, {row[1]}) have AER {row[4]}, {gap:+.3f} from eflomal's best "
        f"({eflomal_best[1]}, {eflomal_best[4]}; target: at or below it); the model's attention: "
        f"{best(attention)[4] if attention else MISSING}.",
        f"{gap:.3f}",
    )


def readme_line(work: Path) -> str:
    """The top README's line on the alignment head: the page's verdict, with where the page is."""
    attention, heads = head_reports(work)
    eflomal, _ = statistical_lines(work / "report" / ALIGN)
    line = head_aer_verdict(attention, [row for rows in heads.values() for row in rows], best(eflomal))
    if line is None:
        return "Not run yet: the alignment head on the Hansards gold (stage hansards-alignment)."
    return f"{line} docs/results/alignment.md has every aligner's links, BLEU with and without a head, and the time to align."


def joint_verdicts(work: Path, heads: dict[str, list[list[Any]]]) -> list[str]:
    """The head trained jointly: its model's BLEU against the model without a head (the target), and the
    full-context head trained alone against it (AER, BLEU change, training): none before both are run."""
    report = read_json(work / "report" / GUIDED_REPORT / "report.json")
    systems = (report or {}).get("systems", {})
    if SEARCH not in systems or JOINT not in systems or not heads.get(JOINT):
        return []
    without, joint = systems[SEARCH]["sacrebleu"], systems[JOINT]["sacrebleu"]
    lines = [
        verdict(
            abs(joint - without) <= HEAD_BLEU_GAP,
            f"trained jointly with a full-context head, the model scores {joint:.2f} sacreBLEU on the Hansards test, the model "
            f"without a head {without:.2f} (target within {HEAD_BLEU_GAP}).",
            f"{abs(joint - without) - HEAD_BLEU_GAP:.2f}",
        )
    ]
    if heads.get(FULL):
        lines.append(
            f"Measured: the full-context head trained alone on a finished model has AER {best(heads[FULL])[4]} and leaves its "
            f"BLEU as it was, for {head_training(work, HEADS[FULL][1])} of the head's training; trained jointly from the start, "
            f"AER {best(heads[JOINT])[4]} at {joint - without:+.2f} sacreBLEU, for {head_training(work, HEADS[JOINT][1])} of the "
            "whole model's."
        )
    return lines


def models_line(work: Path) -> str:
    """'En->Fr 6,912 updates in 2.08 h, ...': the RNNsearch models' training, from their evaluation reports."""
    models = (("En->Fr", GUIDED_REPORT, SEARCH), ("Fr->En", "hansards.fr-en.test", SEARCH), ("En->Fr guided", GUIDED_REPORT, GUIDED))
    found = []
    for label, report, system in models:
        training = (read_json(work / "report" / report / "report.json") or {}).get("training", {}).get(system)
        if training:
            found.append(f"{label} {training['updates']:,} updates in {training['wall_hours']:.2f} h")
    return "; ".join(found) or "training figures not evaluated yet"


def alignment_page(work: Path) -> list[str] | None:
    """OUT/alignment.md's lines, None when WORK holds no report of the stage hansards-alignment."""
    align = work / "report" / ALIGN
    if not align.is_dir():
        return None
    eflomal, eflomal_line = statistical_lines(align)
    fast, fast_line = statistical_lines(align, "fast_align")
    search = aer_rows(align / "rnnsearch.en-fr", "RNNsearch En->Fr", skip=("diagonal",)) + aer_rows(
        align / "rnnsearch.fr-en", "RNNsearch Fr->En", skip=("diagonal",)
    )
    guided = aer_rows(align / "rnnsearch.guided.en-fr", "RNNsearch En->Fr guided", skip=("diagonal",))
    diagonal = [row for row in aer_rows(align / "rnnsearch.en-fr", "diagonal") if row[1] == "diagonal"]
    speed, seconds = speed_lines(align)
    tables = sorted(align.glob("*/aer.md"))
    guided_section, guided_verdicts = guided_lines(work, best(guided), best(eflomal))
    head_section, head_verdicts = head_lines(work, eflomal, fast)
    verdicts = []
    if search:
        row = best(search)
        verdicts.append(
            verdict(
                float(row[4]) <= AER_TARGET,
                f"RNNsearch's best links on the gold ({row[0]}, {row[1]}; chosen on these sentences) have AER {row[4]} "
                f"(target {AER_TARGET} or lower).",
                f"{float(row[4]) - AER_TARGET:.3f}",
            )
        )
    if eflomal:
        row = best(eflomal)
        verdicts.append(f"Measured: eflomal's best links ({row[1]}) have AER {row[4]} on the same gold.")
    if seconds is not None:
        verdicts.append(
            verdict(
                seconds <= SECONDS_TARGET,
                f"rnnsearch-align aligns the 3,000 Hansards test pairs, both directions symmetrised, in {seconds:.0f} s on one "
                f"thread (target under {SECONDS_TARGET} s on two cores).",
                f"{seconds - SECONDS_TARGET:.0f} s",
            )
        )
    return [
        "# The model as an aligner, beside a statistical aligner",
        "",
        REGENERATE,
        "",
        "## What holds and what does not",
        "",
        *(f"- {line}" for line in verdicts + guided_verdicts + head_verdicts),
        "",
        "## Alignment error rate on the Hansards gold standard",
        "",
        "AER, precision and recall (Och & Ney 2003) against sure and possible links of the English-French gold sentences "
        "(`rnnsearch-aer`; a Fr->En model's links scored against the gold transposed). RNNsearch: RNNsearch-50 at "
        f"the paper's word level ({models_line(work)}), links from their soft alignments as `rnnsearch-align` writes "
        "them (argmax; threshold T: argmax's links and every weight of at least T; with the other direction's model, "
        f"each direction's links symmetrised). {eflomal_line} {fast_line}",
        "",
        *markdown_table(["aligner", "links", "precision", "recall", "AER", "links found"], diagonal + eflomal + fast + search + guided),
        "",
        "Every aligner's table: " + ", ".join(f"[{p.parent.name}]({ALIGN}/{p.parent.name}/aer.md)" for p in tables) + ".",
        "",
        "## Speed",
        "",
        *speed,
        "",
        *guided_section,
        "",
        *head_section,
    ]


def publish_alignment(work: Path, out: Path) -> bool:
    """Write OUT/alignment.md and copy its reports' small files; False when WORK has no hansards.align."""
    lines = alignment_page(work)
    if lines is None:
        return False
    for folder in FOLDERS:
        copy_files(work / "report" / folder, out / folder, lambda path: path.suffix in (".md", ".json", ".png"), recursive=True)
    write_atomic(out / "alignment.md", lines)
    print(f"| wrote {out}/alignment.md")
    return True
