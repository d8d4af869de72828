"""docs/tutorial.ipynb: every cell runs, top to bottom, on the CI budget (a few dozen updates on
3,000 training pairs), and the outputs committed with it come from its committed cells
(tooling/run_tutorial.py records the hash of each cell's source with the outputs it produced)."""

import os
import sys

import nbformat
from conftest import REPO, SHARED_DATA
from nbclient import NotebookClient

sys.path.insert(0, str(REPO / "tooling"))
from run_tutorial import RECORD, TUTORIAL, source_hash  # noqa: E402


def code_cells() -> list[nbformat.NotebookNode]:
    return [cell for cell in nbformat.read(TUTORIAL, as_version=4).cells if cell.cell_type == "code"]


def test_every_cell_runs_on_the_ci_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("TUTORIAL_BUDGET", "ci")
    monkeypatch.setenv("TUTORIAL_WORK", str(tmp_path))
    monkeypatch.setenv("MULTI30K_DIR", os.path.join(SHARED_DATA, "multi30k"))
    monkeypatch.setenv("ALIGNMENT_GOLD_DIR", os.path.join(SHARED_DATA, "alignment-gold"))
    notebook = nbformat.read(TUTORIAL, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(TUTORIAL.parent)}}).execute()
    outputs = "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", []))
    assert "budget ci" in outputs and (tmp_path / "report" / "bleu_by_length.png").stat().st_size > 0


def test_the_committed_outputs_come_from_the_committed_cells():
    cells = code_cells()
    assert all(cell.get("outputs") for cell in cells), "a code cell without outputs: run tooling/run_tutorial.py"
    changed = [index for index, cell in enumerate(cells) if cell.metadata.get(RECORD, {}).get("source_sha256") != source_hash(cell)]
    assert not changed, f"code cells {changed} changed after their outputs were written: run tooling/run_tutorial.py"


def test_the_full_run_is_recorded():
    record = nbformat.read(TUTORIAL, as_version=4).metadata[RECORD]
    assert record["budget"] == "full" and record["wall_minutes"] > 0
    assert "budget full" in "".join(output.get("text", "") for output in code_cells()[0].outputs)
