"""What the results pages share (tooling/publish_results.py and tooling/alignment_page.py): reading
the reports the stages wrote, their cells, verdict lines, and copying report folders into the
published tree."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

MISSING = "—"  # a figure a report does not have (chrF before rnnsearch-evaluate wrote it)


def read_json(path: Path) -> Any:
    """PATH's JSON, None if absent."""
    return json.loads(path.read_text()) if path.exists() else None


def load_report(reports: Path, name: str) -> dict | None:
    """REPORTS/NAME/report.json (REPORTS: WORK/report, or OUT for a published one), None if absent."""
    return read_json(reports / name / "report.json")


def score_cell(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"


def chrf_cell(system: dict, prefix: str = "") -> str:
    """chrF2 of a report's system (PREFIX 'no_unk_': of its No UNK subset), "—" for a report written
    before rnnsearch-evaluate had it."""
    return score_cell(system.get(prefix + "chrf"))


def training_cells(report: dict, system: str) -> list[Any]:
    """Updates, best dev NLL and training hours of SYSTEM in REPORT ("—" where it had no training log)."""
    training = report["training"].get(system)
    return [training["updates"], f"{training['dev_nll']:.3f}", f"{training['wall_hours']:.2f}"] if training else [MISSING] * 3


def verdict(holds: bool, claim: str, short_by: str) -> str:
    """The verdict line of a claim; SHORT_BY says by how much a claim that does not hold misses."""
    return f"**Holds**: {claim}" if holds else f"**Does not hold** (short by {short_by}): {claim}"


def copy_files(source: Path, target: Path, wanted: Callable[[Path], bool], recursive: bool = False) -> None:
    """Copy SOURCE's files that WANTED accepts into TARGET (RECURSIVE: its subfolders' too, in their
    places; never a translations folder's)."""
    for path in sorted(source.rglob("*") if recursive else source.iterdir()):
        if path.is_file() and "translations" not in path.relative_to(source).parts and wanted(path):
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
