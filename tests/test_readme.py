"""The README's figures come from result files: its two commands' block is what
tooling/readme_figures.py writes from benchmarks/readme_commands.json (and its test count is the
suite's), and every figure of its speed table is in the benchmark file the section names, in a row
of the same model."""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "tooling"))
import alignment_page  # noqa: E402
import publish_results  # noqa: E402
import readme_figures  # noqa: E402

README = (REPO / "README.md").read_text()


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_commands_figures_are_those_recorded():
    figures = json.loads(readme_figures.FIGURES.read_text())
    recorded = readme_figures.BLOCK.search(README)
    assert "quickstart" in figures
    assert recorded is not None and recorded.group(0) == recorded.group(1) + readme_figures.block(figures) + recorded.group(2)


def test_the_test_count_is_the_suites():
    """Every test the suite collects ran in the recorded run (the README names those that failed, if
    any): a test added or removed since asks for the suite to be measured again
    (tooling/readme_figures.py tests). The run that script records is the count: there, it is skipped."""
    if os.environ.get(readme_figures.RECORDING):
        pytest.skip("this run of the suite is the one tooling/readme_figures.py records: its count is the record")
    tests = json.loads(readme_figures.FIGURES.read_text()).get("tests")
    if tests is None:
        pytest.skip("no run of the suite recorded yet: tooling/readme_figures.py tests records one")
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    count = re.search(r"^(\d+) tests? collected", collected.stdout, re.M)
    assert count is not None, collected.stdout[-2000:]
    assert tests["passed"] + tests["skipped"] + tests["failed"] == int(count.group(1))


def test_every_speed_figure_is_in_the_benchmark_files_row_of_its_model():
    """Each row of the speed table names its model (the first in backticks; a row without one is the
    row above's), and each of its figures is a whole figure of a row of that model in the benchmark file."""
    speed = section("Speed")
    (source,) = re.findall(r"\]\((benchmarks/results[^)]*\.md)\)", speed)
    measured = (REPO / source).read_text().splitlines()
    checked, model = 0, None
    for row in (line for line in speed.splitlines() if line.startswith("| ") and "---" not in line):
        model = next(iter(re.findall(r"`(\w+)`", row.split(" | ")[0])), model)
        rows = [line for line in measured if f"`{model}" in line]
        for figure in re.findall(r"\d+\.\d+(?:-\d+\.\d+)?|\d+%", row):
            assert any(re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d.]\d|\d)", line) for line in rows), (figure, model)
            checked += 1
    assert checked >= 10


def test_no_issue_numbers_in_the_docs_or_the_code():
    """The docs and the code name no issue of this project (a reader cannot see them); fairseq's
    public issues may be cited. The README names no run numbers or commit ids either."""
    folders = ("docs", "rnnsearch_plugin", "scripts", "tooling", "tests", "configs")
    files = [REPO / "README.md", REPO / "CONTRIBUTING.md", *(path for folder in folders for path in (REPO / folder).rglob("*"))]
    mentions = re.compile(r"(?<!fairseq )(?<!fairseq's )\bissues? \d+", re.IGNORECASE)
    found = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in files
        if path.suffix in {".md", ".py", ".sh", ".yaml", ".cfg", ".js", ".html"} and "__pycache__" not in path.parts
        for match in mentions.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not found
    assert not re.search(r"\brun \d+\b|\b[0-9a-f]{7}\b", README)


def test_every_results_figure_is_on_the_results_page():
    """The results block (tooling/publish_results.py's) states only figures that docs/results/README.md,
    written by the same run, holds; its alignment line is the one publish_results.py --page alignment
    makes from the reports docs/results publishes (a WORK whose report folder they are)."""
    block = README.split(publish_results.README_BEGIN, 1)[1].split(publish_results.README_END, 1)[0]
    before, alignment = block.split(publish_results.ALIGNMENT_BEGIN, 1)
    page = (REPO / "docs" / "results" / "README.md").read_text()
    figures = re.findall(r"[+-]?\d+\.\d+", before)
    assert len(figures) >= 20
    assert not [figure for figure in figures if figure not in page]
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "report").symlink_to(REPO / "docs" / "results")
        line = alignment_page.readme_line(Path(work))
    assert alignment.split(publish_results.ALIGNMENT_END, 1)[0].strip() == f"- {line}"
    assert "AER 0." in line
