"""The README's figures of its two commands: measured by running each command as written, kept in
benchmarks/readme_commands.json, and written into the README between ``<!-- figures: ... -->`` and
``<!-- /figures -->`` (tests/test_readme.py checks the block against the file, and the test count
against the suite).

    MULTI30K_DIR=../shared/data/multi30k python tooling/readme_figures.py quickstart   # in a fresh clone
    python tooling/readme_figures.py tests
    python tooling/readme_figures.py readme        # the block alone, from the file

``quickstart`` runs ``bash scripts/quickstart.sh`` and ``tests`` runs ``bash scripts/run_tests.sh``,
each timed from start to end (set-up included), on the machine as it is: run them one after the
other, with nothing else running. Each records the processor it ran on.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIGURES = REPO / "benchmarks" / "readme_commands.json"
README = REPO / "README.md"
BLOCK = re.compile(r"(<!-- figures: tooling/readme_figures\.py -->\n).*?(<!-- /figures -->)", re.S)
COMMANDS = {"quickstart": ["bash", "scripts/quickstart.sh"], "tests": ["bash", "scripts/run_tests.sh"]}
QUICKSTART_WORK = REPO / "work" / "quickstart"
RECORDING = "RNNSEARCH_RECORDING_TESTS"  # set in the suite's run this script records: its count is the record
PYTEST_END = re.compile(r"^=*\s*(?:(\d+) failed, )?(\d+) passed(?:, (\d+) skipped)?.* in ([\d.]+)s", re.M)


def processor() -> str:
    """The processor's model name and the flags that decide its speed here (tooling/machine.py), read by
    the environment the command set up (this script runs before it exists): the active virtual
    environment, else .venv, as scripts/setup.sh chooses."""
    environment = Path(os.environ.get("VIRTUAL_ENV") or REPO / ".venv")
    machine = [str(environment / "bin" / "python"), str(REPO / "tooling" / "machine.py")]
    line = subprocess.run(machine, cwd=REPO, capture_output=True, text=True, check=True)
    name, flags = line.stdout.strip().split("\t")
    return f"{name} ({flags})"


def timed(command: list[str]) -> tuple[float, str]:
    """Run ``command`` from the repository root, its output shown as it goes; minutes and output."""
    start = time.monotonic()
    environment = {**os.environ, RECORDING: "1"}
    process = subprocess.Popen(command, cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in process.stdout or []:
        sys.stdout.write(line)
        lines.append(line)
    if process.wait() != 0 and not PYTEST_END.search("".join(lines)):
        sys.exit(f"readme_figures.py: error: {' '.join(command)} failed ({process.returncode}); nothing recorded")
    return (time.monotonic() - start) / 60, "".join(lines)


def quickstart_figures(minutes: float, output: str) -> dict[str, Any]:
    report = json.loads((QUICKSTART_WORK / "report" / "report.json").read_text())
    (system,) = report["systems"].values()
    (training,) = report["training"].values()
    aer = json.loads((QUICKSTART_WORK / "report" / "aer.json").read_text())
    trained = re.search(r"^\| trained ([\d,]+) of [\d,]+ updates in ([\d.]+) min \(([\d.]+) updates/s", output, re.M)
    if trained is None:
        sys.exit("readme_figures.py: error: the quickstart printed no '| trained ...' line")
    return {
        "minutes": round(minutes, 1),
        "training_minutes": float(trained.group(2)),
        "updates": int(trained.group(1).replace(",", "")),
        "updates_per_second": float(trained.group(3)),
        "best_dev_nll": training["dev_nll"],
        "sacrebleu": round(system["sacrebleu"], 2),
        "chrf": round(system["chrf"], 2),
        "signature": system["signature"],
        "aer": aer,
        "processor": processor(),
    }


def tests_figures(minutes: float, output: str) -> dict[str, Any]:
    end = PYTEST_END.search(output)
    if end is None:
        sys.exit("readme_figures.py: error: the tests printed no pytest closing line")
    failed, passed, skipped, seconds = end.groups()
    return {
        "passed": int(passed),
        "failed": int(failed or 0),
        "skipped": int(skipped or 0),
        "pytest_minutes": round(float(seconds) / 60, 1),
        "minutes": round(minutes, 1),
        "processor": processor(),
    }


def block(figures: dict[str, Any]) -> str:
    """The README's lines for the figures recorded."""
    lines = []
    if "quickstart" in figures:
        q = figures["quickstart"]
        argmax = q["aer"]["argmax"]["aer"]
        lines.append(
            f"The quickstart, on a free 2-core {q['processor']}: {q['minutes']} minutes in all, of which "
            f"{q['updates']:,} updates in {q['training_minutes']} ({q['updates_per_second']} updates/s); "
            f"sacreBLEU **{q['sacrebleu']}** (chrF2 {q['chrf']}) on test_2016_flickr, and AER {argmax:.3f} "
            "of its attention's argmax links on the Hansards gold alignments."
        )
    if "tests" in figures:
        t = figures["tests"]
        same = "quickstart" in figures and figures["quickstart"]["processor"] == t["processor"]
        where = f"after it on the same machine ({t['processor']})" if same else f"on a 2-core {t['processor']}"
        lines.append(
            f"The tests, {where}: {t['passed']} passed"
            + (f", {t['failed']} failed" if t["failed"] else "")
            + f" and {t['skipped']} skipped in {t['pytest_minutes']} minutes ({t['minutes']} with the set-up)."
        )
    return "\n\n".join(lines) + "\n"


def write_readme(figures: dict[str, Any]) -> None:
    text = README.read_text()
    if not BLOCK.search(text):
        sys.exit("readme_figures.py: error: README.md has no <!-- figures: tooling/readme_figures.py --> block")
    README.write_text(BLOCK.sub(lambda match: match.group(1) + block(figures) + match.group(2), text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=[*COMMANDS, "readme"])
    args = parser.parse_args()
    figures = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    if args.what in COMMANDS:
        minutes, output = timed(COMMANDS[args.what])
        measure = quickstart_figures if args.what == "quickstart" else tests_figures
        figures[args.what] = measure(minutes, output)
        FIGURES.write_text(json.dumps(figures, indent=2) + "\n")
    write_readme(figures)


if __name__ == "__main__":
    main()
