"""docs/tutorial.ipynb: every cell runs, top to bottom, on the CI budget (ten updates on 3,000
training pairs), with the data and the gold standard from this machine's folders where it has them,
else downloaded as a student's run downloads them; and what is committed is what one full run left
(tooling/run_tutorial.py records a hash of every cell's kind, source and outputs, in order)."""

import copy
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO, SHARED_DATA
from nbclient import NotebookClient

sys.path.insert(0, str(REPO / "tooling"))
from run_tutorial import RECORD, TUTORIAL, notebook_hash  # noqa: E402

LOCAL_FOLDERS = {"MULTI30K_DIR": "multi30k", "ALIGNMENT_GOLD_DIR": "alignment-gold"}


def committed() -> nbformat.NotebookNode:
    return nbformat.read(TUTORIAL, as_version=4)


def test_every_cell_runs_on_the_ci_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("TUTORIAL_BUDGET", "ci")
    monkeypatch.setenv("TUTORIAL_WORK", str(tmp_path))
    for variable, folder in LOCAL_FOLDERS.items():
        if (Path(SHARED_DATA) / folder).is_dir():
            monkeypatch.setenv(variable, os.path.join(SHARED_DATA, folder))
    notebook = committed()
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(TUTORIAL.parent)}}).execute()
    outputs = "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", []))
    assert "budget ci" in outputs and (tmp_path / "report" / "bleu_by_length.png").stat().st_size > 0
    assert (tmp_path / "report" / "aer.md").read_text().count("| diagonal |") == 1


def test_the_committed_notebook_is_what_its_full_run_left():
    notebook = committed()
    record = notebook.metadata[RECORD]
    assert record["budget"] == "full" and record["wall_minutes"] > 0 and record["ci_wall_minutes"] > 0
    assert "budget full" in "".join(output.get("text", "") for output in notebook.cells[1].outputs)
    assert notebook_hash(notebook) == record["notebook_hash"], "the notebook changed after its run: run tooling/run_tutorial.py"


def edits(notebook: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """The notebook changed in each way a hand edit changes it."""
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code" and cell.outputs]
    markdown = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "markdown")
    figure = next(i for i in code if any("image/png" in output.get("data", {}) for output in notebook.cells[i].outputs))
    text = next(i for i in code if any("text" in output for output in notebook.cells[i].outputs))
    changed = {name: copy.deepcopy(notebook) for name in ("output", "markdown", "deleted", "swapped", "figure")}
    output = next(output for output in changed["output"].cells[text].outputs if "text" in output)
    output["text"] = output["text"].replace("1", "2", 1) if "1" in output["text"] else output["text"] + "."
    changed["markdown"].cells[markdown].source += " "
    del changed["deleted"].cells[code[-1]]
    cells = changed["swapped"].cells
    cells[code[0]], cells[code[1]] = cells[code[1]], cells[code[0]]
    outputs = changed["figure"].cells[figure].outputs
    outputs.remove(next(output for output in outputs if "image/png" in output.get("data", {})))
    return changed


@pytest.mark.parametrize("edit", ["output", "markdown", "deleted", "swapped", "figure"])
def test_the_hash_sees_each_kind_of_hand_edit(edit):
    notebook = committed()
    assert notebook_hash(edits(notebook)[edit]) != notebook_hash(notebook)


def test_the_outputs_name_no_folder_of_the_machine_that_ran_it():
    """No absolute folder, and no ../shared: the project's data beside the clone, which a student's machine lacks."""
    notebook = committed()
    texts = [
        output.get("text", "") + "".join(output.get("data", {}).get("text/markdown", ""))
        for cell in notebook.cells
        for output in cell.get("outputs", [])
    ]
    machine = r"(?<![\w.~])/(?:work|home|tmp|root|Users|content)/\S*|\.\./shared\b\S*"
    found = [match[0] for text in texts for match in re.finditer(machine, text)]
    assert not found, found
