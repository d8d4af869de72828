"""Execute docs/tutorial.ipynb top to bottom with its full budget and save it with the outputs, as
the repository publishes it, each code cell marked with the hash of the source that produced its
outputs (tests/test_tutorial.py fails when a cell changed after its outputs were written):

    MULTI30K_DIR=../shared/data/multi30k python tooling/run_tutorial.py

Run it with nothing else running: its wall time goes into the notebook's metadata.
"""

import hashlib
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
TUTORIAL = REPO / "docs" / "tutorial.ipynb"
RECORD = "rnnsearch"  # the metadata key of the run's record, on the notebook and on each code cell


def source_hash(cell: nbformat.NotebookNode) -> str:
    return hashlib.sha256(cell.source.encode("utf-8")).hexdigest()


def main() -> None:
    notebook = nbformat.read(TUTORIAL, as_version=4)
    start = time.monotonic()
    NotebookClient(notebook, timeout=None, kernel_name="python3", resources={"metadata": {"path": str(TUTORIAL.parent)}}).execute()
    minutes = (time.monotonic() - start) / 60
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.metadata[RECORD] = {"source_sha256": source_hash(cell)}
    notebook.metadata[RECORD] = {
        "budget": "full",
        "wall_minutes": round(minutes, 1),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    nbformat.write(notebook, TUTORIAL)
    print(f"| executed {TUTORIAL.relative_to(REPO)} in {minutes:.1f} min")


if __name__ == "__main__":
    main()
