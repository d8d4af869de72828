"""Checkpoints written before the package was grouped into subpackages load, translate,
score and resume with the current code: ``tests/fixtures/checkpoint_before_subpackages`` holds one written
by the code before the move and the numbers that code computed from it."""

import json
import pickletools
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import losses_by_update, run

from rnnsearch_plugin import load

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "checkpoint_before_subpackages"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
TRAIN = [
    "--task",
    "translation",
    "-s",
    "en",
    "-t",
    "fr",
    "--arch",
    "rnnsearch_small",
    "--encoder-embed-dim",
    "8",
    "--decoder-embed-dim",
    "8",
    "--encoder-hidden-size",
    "8",
    "--decoder-hidden-size",
    "8",
    "--attention-hidden-size",
    "8",
    "--decoder-out-embed-dim",
    "8",
    "--dropout",
    "0.1",
    "--optimizer",
    "rnnsearch_adadelta",
    "--lr",
    "1.0",
    "--clip-norm",
    "1.0",
    "--criterion",
    "chunked_cross_entropy",
    "--max-tokens",
    "400",
    "--max-update",
    "44",
    "--save-interval-updates",
    "40",
    "--no-epoch-checkpoints",
    "--disable-validation",
    "--num-workers",
    "0",
    "--data-buffer-size",
    "0",
    "--log-format",
    "json",
    "--log-interval",
    "1",
    "--seed",
    "7",
    "--cpu",
]


def pickled_globals(checkpoint: Path) -> set[str]:
    """The globals a checkpoint's pickle names (read opcode by opcode, nothing run)."""
    with zipfile.ZipFile(checkpoint) as archive:
        data = archive.read(next(name for name in archive.namelist() if name.endswith("data.pkl")))
    operations = list(pickletools.genops(data))
    named = {str(argument) for operation, argument, _ in operations if operation.name == "GLOBAL"}
    return named | {
        f"{operations[i - 2][1]} {operations[i - 1][1]}"
        for i, (operation, _, _) in enumerate(operations)
        if operation.name == "STACK_GLOBAL"
    }


@pytest.mark.parametrize("written", ["before_the_move", "by_the_current_code"])
def test_checkpoints_pickle_no_module_of_the_plugin(written, request):
    """What makes a checkpoint independent of the plugin's module paths: its pickle names none."""
    path = FIXTURE / "checkpoint.pt" if written == "before_the_move" else request.getfixturevalue("checkpoint")
    assert not [name for name in pickled_globals(path) if "rnnsearch" in name]


def test_python_api_gives_the_translations_and_scores_of_the_code_that_wrote_it():
    model = load(FIXTURE / "checkpoint.pt", FIXTURE / "data")
    sources = (FIXTURE / "valid.en").read_text().splitlines()
    targets = (FIXTURE / "valid.fr").read_text().splitlines()
    best = [hypotheses[0] for hypotheses in model.generate([model.encode(s) for s in sources], beam=2)]
    assert [h["tokens"].tolist() for h in best] == [t["tokens"] for t in EXPECTED["translations"]]
    assert [float(h["score"]) for h in best] == pytest.approx([t["score"] for t in EXPECTED["translations"]], abs=1e-4)
    assert [s["score"] for s in model.score(sources, targets)] == pytest.approx(EXPECTED["scores"], abs=1e-4)


def test_training_resumes_where_the_code_that_wrote_it_left_off(tmp_path):
    """fairseq-train restores the optimizer (it compares the stored criterion and optimizer class
    names with the current ones) and the position in the epoch: updates 41-44 log the losses that
    the code that wrote the checkpoint logged when it resumed from it (3 decimals; one rounding step
    apart at most on another processor). Both resume with dropout off, so that the losses do not
    depend on how dropout draws its masks, which has changed since."""
    shutil.copyfile(FIXTURE / "checkpoint.pt", tmp_path / "checkpoint_last.pt")
    result = run(
        "fairseq-train", str(FIXTURE / "data"), "--user-dir", "rnnsearch_plugin", *TRAIN, "--dropout", "0", "--save-dir", str(tmp_path)
    )
    log = result.stdout + result.stderr
    assert f"Loaded checkpoint {tmp_path / 'checkpoint_last.pt'} (epoch" in log and "@ 40 updates)" in log
    resumed = losses_by_update(log)
    assert sorted(resumed) == [41, 42, 43, 44]
    for update, loss in EXPECTED["resumed_losses_without_dropout"].items():
        assert float(resumed[int(update)]) == pytest.approx(float(loss), abs=1.5e-3), update
