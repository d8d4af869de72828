"""Execute docs/tutorial.ipynb top to bottom, first on the test suite's CI budget (timed, outputs
dropped), then with its full budget, and save it with the full run's outputs, as the repository
publishes it; its metadata records both wall times and the hash of everything the run left in it
(``notebook_hash``: every cell's kind, source and outputs, in order), which tests/test_tutorial.py
checks, so that an edited cell, output or figure, or a cell moved or removed, needs a new run:

    MULTI30K_DIR=../shared/data/multi30k python tooling/run_tutorial.py

The full run downloads the alignment gold standard into work/tutorial/alignment-gold, where a
student's run puts it (on a machine without internet, copy its three files there first); the CI run
reads it from there. Its outputs then name no folder outside the repository.

Run it with nothing else running: its wall times go into the notebook's metadata.
"""

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
TUTORIAL = REPO / "docs" / "tutorial.ipynb"
RECORD = "rnnsearch"  # the metadata key of the run's record


def notebook_hash(notebook: nbformat.NotebookNode) -> str:
    """SHA-256 of every cell's kind, source and outputs (figures included), in order."""
    cells = [[cell.cell_type, cell.source, cell.get("outputs", [])] for cell in notebook.cells]
    return hashlib.sha256(json.dumps(cells, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def execute(budget: str, work: Path) -> tuple[nbformat.NotebookNode, float]:
    """The notebook executed on ``budget`` in the work folder ``work``, and its wall minutes."""
    os.environ.update(TUTORIAL_BUDGET=budget, TUTORIAL_WORK=str(work))
    notebook = nbformat.read(TUTORIAL, as_version=4)
    start = time.monotonic()
    NotebookClient(notebook, timeout=None, kernel_name="python3", resources={"metadata": {"path": str(TUTORIAL.parent)}}).execute()
    return notebook, (time.monotonic() - start) / 60


FULL_WORK = Path("work") / "tutorial"  # relative to the repository, as the notebook's paths are


def main() -> None:
    os.environ.setdefault("ALIGNMENT_GOLD_DIR", str(FULL_WORK / "alignment-gold"))  # the full run's folder, for the CI run too
    with tempfile.TemporaryDirectory() as work:
        _, ci_minutes = execute("ci", Path(work))
    print(f"| the CI budget ran in {ci_minutes:.1f} min")
    notebook, minutes = execute("full", FULL_WORK)
    notebook.metadata[RECORD] = {
        "budget": "full",
        "wall_minutes": round(minutes, 1),
        "ci_wall_minutes": round(ci_minutes, 1),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "notebook_hash": notebook_hash(notebook),
    }
    nbformat.write(notebook, TUTORIAL)
    print(f"| executed {TUTORIAL.relative_to(REPO)} in {minutes:.1f} min")


if __name__ == "__main__":
    main()
