"""Before and after a change, from runs of tooling/benchmark.py on one machine alternated between
the two checkouts: each of ours against fairseq's ``lstm`` measured in the same repeat, in both, so
that the comparison does not depend on how fast the machine was that hour.

    python tooling/compare_benchmarks.py --before B1/results.json B2/results.json \
        --after A1/results.json A2/results.json --before-name "before the split" \
        --after-name "reference + engine" --out benchmarks/before-after.md

Each side takes one results.json, or several (one per invocation, e.g. ``--repeats 1`` each,
before and after alternated invocation by invocation): their repeats are pooled in order, each
section from the invocations that ran it.

Training and beam search: the median over repeats of (ours / lstm) within each repeat; the paper
size: seconds per update (the medians), which has no lstm to compare with; peak memory as measured.
"""

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

PEER = "lstm"


def median_ratio(runs: dict[str, list[dict[str, float]]], name: str, key: str) -> float:
    """The median over repeats of ``name``'s ``key`` over the peer's in the same repeat."""
    return statistics.median(ours[key] / peer[key] for ours, peer in zip(runs[name], runs[PEER]))


def training_rows(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    rows = []
    for name in (name for name in after["train"]["runs"] if name != PEER and name in before["train"]["runs"]):
        cells = [median_ratio(report["train"]["runs"], name, key) for key in ("wps", "wps_seen") for report in (before, after)]
        rows.append(f"| `{name}` | " + " | ".join(f"{cell:.2f}" for cell in cells) + " |")
    return rows


def decode_rows(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    rows = []
    for beam, runs in after["decode"]["runs"].items():
        for name in (name for name in runs if name != PEER and name in before["decode"]["runs"].get(beam, {})):
            cells = [median_ratio(report["decode"]["runs"][beam], name, "sentences_per_second") for report in (before, after)]
            rows.append(f"| {beam} | `{name}` | {cells[0]:.2f} | {cells[1]:.2f} |")
    return rows


def paper_rows(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    rows = []
    for name in after["paper"]["runs"]:
        if name in before["paper"]["runs"]:
            seconds = [statistics.median(run["seconds_per_update"] for run in report["paper"]["runs"][name]) for report in (before, after)]
            rows.append(f"| `{name}` | {seconds[0]:.2f} | {seconds[1]:.2f} | {seconds[0] / seconds[1]:.2f} |")
    return rows


def memory_rows(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    rows = []
    for name, peaks in after["memory"]["peak_mb"].items():
        for length, peak in peaks.items():
            if length in before["memory"]["peak_mb"].get(name, {}):
                rows.append(f"| `{name}` | {length} | {before['memory']['peak_mb'][name][length]:.0f} | {peak:.0f} |")
    return rows


def pooled(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's invocations as one: each section from the invocations that ran it, the repeats of
    train, decode and paper in order, the memory section of the first (it does not vary), the
    environment of the first."""
    merged: dict[str, Any] = {"environment": reports[0]["environment"]}
    for section in ("train", "paper"):
        if ran := [report[section]["runs"] for report in reports if section in report]:
            merged[section] = {"runs": pooled_runs(ran)}
    if ran := [report["decode"]["runs"] for report in reports if "decode" in report]:
        merged["decode"] = {"runs": {beam: pooled_runs([runs[beam] for runs in ran]) for beam in ran[0]}}
    if memory := [report["memory"] for report in reports if "memory" in report]:
        merged["memory"] = memory[0]
    return merged


def pooled_runs(runs: list[dict[str, list[dict[str, float]]]]) -> dict[str, list[dict[str, float]]]:
    return {name: [run for invocation in runs for run in invocation[name]] for name in runs[0]}


def repeats(report: dict[str, Any]) -> int:
    return len(next(iter(report["train"]["runs"].values()))) if "train" in report else 0


def report(before: dict[str, Any], after: dict[str, Any], names: tuple[str, str]) -> str:
    environment = after["environment"]
    was, now = names
    lines = [
        f"# Before ({was}) and after ({now})",
        "",
        f"{environment['device']}, ISA flags {environment['isa_flags']}; torch {environment['torch']}, "
        f"{environment['threads']} threads; {environment['date']}. tooling/benchmark.py ran for {was} and for {now}, "
        f"alternated on this machine; every figure is a median over the repeats ({repeats(before)} and {repeats(after)} of training).",
    ]
    if "train" in before and "train" in after:
        lines += [
            "",
            "## Training: target tokens/s against fairseq's `lstm` in the same repeat",
            "",
            f"| model | first sight, {was} | first sight, {now} | seen before, {was} | seen before, {now} |",
            "| --- | --- | --- | --- | --- |",
            *training_rows(before, after),
        ]
    if "decode" in before and "decode" in after:
        lines += [
            "",
            "## Beam search: sentences/s against fairseq's `lstm` in the same repeat",
            "",
            f"| beam | model | {was} | {now} |",
            "| --- | --- | --- | --- |",
            *decode_rows(before, after),
        ]
    if "paper" in before and "paper" in after:
        lines += [
            "",
            "## Paper size: seconds per update",
            "",
            f"| model, dtype, criterion | {was} | {now} | speed-up |",
            "| --- | --- | --- | --- |",
            *paper_rows(before, after),
        ]
    if "memory" in before and "memory" in after:
        lines += [
            "",
            f"## Peak memory (MB) of one training step, {after['memory']['sentences']} sentence pairs",
            "",
            f"| model, criterion | length | {was} | {now} |",
            "| --- | --- | --- | --- |",
            *memory_rows(before, after),
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, nargs="+", required=True, help="results.json of each invocation before")
    parser.add_argument("--after", type=Path, nargs="+", required=True, help="results.json of each invocation after")
    parser.add_argument("--before-name", required=True)
    parser.add_argument("--after-name", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    before, after = (pooled([json.loads(path.read_text()) for path in paths]) for paths in (args.before, args.after))
    args.out.write_text(report(before, after, (args.before_name, args.after_name)))
    print(f"| wrote {args.out}")


if __name__ == "__main__":
    main()
