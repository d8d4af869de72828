"""Collect what scripts/reproduce_results.sh wrote into WORK/report and publish the small files
(reports, BLEU-by-length plots, heatmaps, AER) with one summary, OUT/README.md:

    python scripts/publish_results.py --work work/results --out docs/results

The summary adds what the reports do not hold: each Hansards system's BLEU on sources of
10-20 words against 30 words or more (the claim of Figure 2), and the wall time of every step
(WORK/wall_times.tsv, one line per command: program, its last argument, seconds).
"""
import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rnnsearch_plugin.analysis import bleu  # noqa: E402
from rnnsearch_plugin.analysis.markdown import markdown_table  # noqa: E402
from rnnsearch_plugin.data.textio import read_lines, write_atomic  # noqa: E402

REPORT_FILES = ("report.md", "report.json", "bleu_by_length.csv", "bleu_by_length.png", "long_sentences.md")
SPLITS = {"multi30k.test": "Multi30k test_2016_flickr", "multi30k.test1": "Multi30k test_2017_flickr",
          "hansards.test": "Hansards test"}
COMMAND = """MULTI30K_DIR=../shared/data/multi30k HANSARDS_DIR=../shared/data/hansards bash scripts/reproduce_results.sh"""


def copy_reports(work: Path, out: Path) -> None:
    """The report folders without translations and SVGs, heatmap PNGs and AER tables."""
    for source in sorted((work / "report").iterdir()):
        target = out / source.name
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted(source.iterdir()):
            if path.name in REPORT_FILES or path.suffix == ".png" or path.name.startswith("aer."):
                shutil.copyfile(path, target / path.name)


def length_gap(work: Path, split: str, systems: list[str]) -> list[list[Any]]:
    """Per system: BLEU of sources with 10-20 words, with 30 or more, and the difference."""
    corpus, name = split.split(".")
    raw, report = work / corpus / "raw", work / "report" / split
    sources, references = read_lines(raw / f"{name}.en"), read_lines(raw / f"{name}.fr")
    lengths = bleu.source_lengths(sources)
    rows = []
    for system in systems:
        hypotheses = read_lines(report / "translations" / f"{system}.txt")
        by_bucket = {r["bucket"]: r for r in bleu.by_length(hypotheses, references, lengths, [10, 20, 30])}
        short, long = by_bucket["10-20"], by_bucket["30+"]
        gap = f"{long['bleu'] - short['bleu']:+.2f}" if short["sentences"] and long["sentences"] else "-"
        rows.append([system, bleu.bucket_cell(short), bleu.bucket_cell(long), gap])
    return rows


def options_cell(options: dict[str, Any]) -> str:
    """{'arch': 'lstm', 'encoder_dropout_in': 0.3, ...} -> '`--arch lstm --encoder-dropout-in 0.3 ...`'."""
    return "`" + " ".join(f"--{name.replace('_', '-')} {value}" for name, value in options.items()) + "`"


def bleu_rows(reports: dict[str, dict], splits: list[str]) -> list[list[Any]]:
    systems = reports[splits[0]]["systems"]
    rows = []
    for system in systems:
        training = reports[splits[0]]["training"][system]
        scores = [f"{reports[s]['systems'][system]['sacrebleu']:.2f} / {reports[s]['systems'][system]['tokenised_bleu']:.2f}"
                  for s in splits]
        rows.append([system, *scores, training["updates"], training["epochs"], training["dev_nll"], training["wall_hours"],
                     options_cell(systems[system]["options"])])
    return rows


def aer_rows(work: Path) -> list[list[Any]]:
    rows = []
    for corpus in ("multi30k", "hansards"):
        scores = json.loads((work / "report" / f"{corpus}.aer" / "aer.json").read_text())
        rows += [[f"rnnsearch_small ({corpus})" if links != "diagonal" else "diagonal", links,
                  f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['aer']:.3f}"]
                 for links, s in scores.items() if links != "diagonal" or corpus == "hansards"]
    return rows


def wall_rows(work: Path, reports: dict[str, dict]) -> list[list[Any]]:
    """The latest run of each step behind the page: the training of each reported system and each
    report. WORK's log also holds the runs that the options were chosen by, which are left out."""
    published = {work / "checkpoints" / split.split(".")[0] / system / "train.log"
                 for split, report in reports.items() for system in report["systems"]}
    latest = {}
    for line in read_lines(work / "wall_times.tsv"):
        program, output, seconds = line.split("\t")
        if Path(output) in published or Path(output).parent == work / "report":
            latest[program, output] = seconds
    return [[program, output.replace(str(work), "WORK"), f"{int(seconds) / 60:.1f}"]
            for (program, output), seconds in latest.items()]


def corpus_line(work: Path, corpus: str) -> str:
    """'spm, 5,760 / 6,216 en / fr dictionary entries; 661,374 / 3,000 / 3,000 train / valid / test pairs'
    from the corpus's manifest.json."""
    manifest = json.loads((work / corpus / "manifest.json").read_text())
    pairs, vocabulary = manifest["pairs"], manifest["vocabulary"]
    return (f"{manifest['scheme']}, {vocabulary['en']:,} / {vocabulary['fr']:,} en / fr dictionary entries; "
            + " / ".join(f"{n:,}" for n in pairs.values()) + " " + " / ".join(pairs) + " pairs")


def summary(work: Path, reports: dict[str, dict]) -> list[str]:
    hansards_systems = list(reports["hansards.test"]["systems"])
    header = ["system", *(f"{SPLITS[s]}: sacreBLEU / tokenised lowercased BLEU" for s in ("multi30k.test", "multi30k.test1")),
              "updates", "epochs", "best dev NLL (nats/token)", "training hours", "options"]
    return [
        "# Results on real data within a CPU budget", "",
        f"Regenerate everything (about 2.5 hours on 2 cores): `{COMMAND}`, then this page with "
        "`python scripts/publish_results.py --work work/results --out docs/results`. Every model trains for the "
        "same wall time (45 minutes, `--stop-time-hours 0.75`) with Adam, `--max-tokens 4000`, "
        "one thread pinned to one of the two cores, two jobs at a time; the checkpoint with the best validation "
        "loss is evaluated with beam 5. The options column, read from each checkpoint, has its learning rate and "
        "its schedule, its seed (the script's `SEED`) and what was chosen for each model on the validation sets "
        "(its `MULTI30K_DROPOUT`, `MAXOUT_DROPOUT`, `ANNOTATION_DROPOUT`, `READOUT_STATE`, `RNNSEARCH_LR`, "
        "`RNNSEARCH_LR_SHRINK`, `LSTM_DROPOUT`, `HANSARDS_DROPOUT`). `rnnsearch_plugin` sizes: "
        "`rnnsearch_small`, `rnnencdec_small`; fairseq's `lstm` with `--encoder-bidirectional` and the same "
        "sizes (256).", "",
        f"## Multi30k En->Fr ({corpus_line(work, 'multi30k')})", "",
        *markdown_table(header, bleu_rows(reports, ["multi30k.test", "multi30k.test1"])), "",
        "Figure 2 style, test_2016_flickr: ![BLEU by length](multi30k.test/bleu_by_length.png)", "",
        "Reports: [test_2016_flickr](multi30k.test/report.md), [test_2017_flickr](multi30k.test1/report.md).", "",
        "Figure 3 style, the first three test_2016_flickr sentences (rnnsearch_small):", "",
        *(f"![alignment {i}](multi30k.alignments/alignment_{i}.png)" for i in range(3)), "",
        f"## Canadian Hansards En->Fr ({corpus_line(work, 'hansards')})", "",
        *markdown_table(["system", "sacreBLEU / tokenised lowercased BLEU", "updates", "epochs",
                         "best dev NLL (nats/token)", "training hours", "options"],
                        bleu_rows(reports, ["hansards.test"])), "",
        "BLEU by source length: ![BLEU by length](hansards.test/bleu_by_length.png)", "",
        *markdown_table(["system", "BLEU, 10-20 words (sentences)", "BLEU, 30+ words (sentences)", "30+ minus 10-20"],
                        length_gap(work, "hansards.test", hansards_systems)), "",
        "[Report](hansards.test/report.md), with BLEU per 10-word bucket up to 60+.", "",
        *(f"![alignment {i}](hansards.alignments/alignment_{i}.png)" for i in range(3)), "",
        "## Alignment error rate (Hansards gold standard, 37 sentences)", "",
        *markdown_table(["model", "links", "precision", "recall", "AER"], aer_rows(work)), "",
        "## Wall time of each step", "",
        *markdown_table(["program", "output", "minutes"], wall_rows(work, reports)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("work/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/results"))
    args = parser.parse_args()
    missing = [s for s in SPLITS if not (args.work / "report" / s / "report.json").exists()]
    if missing:
        sys.exit(f"publish_results.py: error: no report for {', '.join(missing)} in {args.work}/report: "
                 "run scripts/reproduce_results.sh first")
    reports = {s: json.loads((args.work / "report" / s / "report.json").read_text()) for s in SPLITS}
    copy_reports(args.work, args.out)
    write_atomic(args.out / "README.md", summary(args.work, reports))
    print(f"| wrote {args.out}/README.md")


if __name__ == "__main__":
    main()
