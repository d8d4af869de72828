"""User mistakes end fairseq's commands in one clear line, never a traceback (``fairseq_fixes/cli_errors.py``)."""

import pickle
import shutil

import pytest
import torch
from conftest import assert_one_line_error, fairseq_decode, fairseq_train, generate_command, run, train_command
from fairseq import checkpoint_utils

from rnnsearch_plugin import fairseq_fixes


def test_missing_data_directory(tmp_path):
    result = run(
        "fairseq-train",
        str(tmp_path / "no-such-data"),
        "--user-dir",
        "rnnsearch_plugin",
        "--task",
        "translation",
        "--arch",
        "rnnsearch_small",
        "--max-tokens",
        "1000",
        "--max-update",
        "1",
        check=False,
    )
    assert_one_line_error(result, "fairseq-train: error:", "no-such-data")


def test_dictionary_that_does_not_match_the_checkpoint(multi30k, checkpoint, tmp_path):
    other = tmp_path / "bin"
    other.mkdir()
    for lang in ("en", "fr"):
        lines = (multi30k / "bin" / f"dict.{lang}.txt").read_text().splitlines()
        (other / f"dict.{lang}.txt").write_text("\n".join(lines[:-40]) + "\n")
    result = run(
        *fairseq_decode("fairseq-interactive", other, checkpoint),
        stdin="A dog .\n",
        check=False,
    )
    assert_one_line_error(result, "source dictionary of", "use the data directory")


def test_a_missing_checkpoint_or_split_is_one_line_naming_what_to_give(multi30k, checkpoint, tmp_path):
    """fairseq's "Model file not found" (a wrong --path) and "Dataset not found" (a --gen-subset
    the data folder lacks, which the message lists)."""
    missing = run(*generate_command(multi30k, tmp_path / "missing.pt"), check=False)
    assert_one_line_error(missing, "fairseq-generate: error: Model file not found: ", "missing.pt: check the checkpoint's path (--path")
    nosuch = run(*generate_command(multi30k, checkpoint, "--gen-subset", "nosuch"), check=False)
    assert_one_line_error(
        nosuch,
        f"fairseq-generate: error: Dataset not found: nosuch ({multi30k / 'bin'}): ",
        "holds the splits test, test1, train, valid: name one of them (--gen-subset",
    )
    assert missing.returncode == nosuch.returncode == 1


def test_resuming_with_another_architecture(multi30k, checkpoint, tmp_path):
    shutil.copy(checkpoint, tmp_path / "checkpoint_last.pt")  # an rnnsearch checkpoint
    result = run(
        *fairseq_train(multi30k / "bin"),
        "--arch",
        "rnnencdec_small",
        "--optimizer",
        "adam",
        "--max-tokens",
        "1000",
        "--max-update",
        "1",
        "--save-dir",
        str(tmp_path),
        "--num-workers",
        "0",
        "--cpu",
        check=False,
    )
    assert_one_line_error(result, "Cannot load model parameters", "Resume with the model options (--arch")


def raise_and_report(error: Exception, monkeypatch, capsys) -> tuple[list, str]:
    """Install the hook as in fairseq-train, then report ``error``: (what reached Python's own
    hook, what was printed)."""
    import sys

    from rnnsearch_plugin.fairseq_fixes import cli_errors

    reached = []
    monkeypatch.setattr(sys, "argv", ["/venv/bin/fairseq-train"])
    monkeypatch.setattr(sys, "excepthook", lambda *report: reached.append(report[1]))
    cli_errors.install()
    try:
        raise error
    except Exception as raised:
        sys.excepthook(type(raised), raised, raised.__traceback__)
    return reached, capsys.readouterr().err


def test_full_traceback_on_request(monkeypatch, capsys):
    """HYDRA_FULL_ERROR=1, as for fairseq-hydra-train, gives a user mistake its traceback back."""
    missing = FileNotFoundError(2, "No such file or directory", "/no/such/data")
    reached, printed = raise_and_report(missing, monkeypatch, capsys)
    assert reached == []
    assert printed == "fairseq-train: error: No such file or directory: '/no/such/data' (check the data directory and file paths)\n"
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    reached, printed = raise_and_report(missing, monkeypatch, capsys)
    assert reached == [missing] and printed == ""


@pytest.mark.parametrize(
    "error,one_line",
    [
        (FloatingPointError("gradients are Nan/Inf"), "training diverged"),
        (
            FloatingPointError(
                "Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering "
                "the learning rate, using gradient clipping or increasing the batch size."
            ),
            "Minimum loss scale reached (0.0001)",
        ),
        (FloatingPointError("Fatal error: gradients are inconsistent between workers."), None),
        (FileNotFoundError("no file name"), None),
        (OSError("Model file not found: /no/such.pt"), "Model file not found: /no/such.pt: check the checkpoint's path"),
        (OSError("Model file not found"), None),
        (FileNotFoundError("Dataset not found: valid (/no/such/bin)"), "/no/such/bin holds no binarized splits"),
        (FileNotFoundError("Dataset not found at last"), None),
        (pickle.UnpicklingError("invalid load key, 'x'."), None),
    ],
)
def test_only_the_users_mistakes_become_one_line(error, one_line, monkeypatch, capsys):
    """fp16's minimum-loss-scale stop is not called a divergence; what is not the user's input
    (workers that disagree, an error without the file it names, a pickle error that names no
    refused code, fairseq's messages about a missing model or split without the model or the
    split) keeps its traceback."""
    reached, printed = raise_and_report(error, monkeypatch, capsys)
    if one_line is None:
        assert reached == [error] and printed == ""
    else:
        assert reached == [] and one_line in printed and len(printed.splitlines()) == 1
        assert ("diverged" in printed) == str(error).startswith("gradients are Nan/Inf")


def test_diverging_run_stops_with_one_line_and_keeps_its_last_good_checkpoint(multi30k, tmp_path):
    """An absurd learning rate: update 1 is saved, update 2's gradients are not finite; fairseq
    stops the run (writing crash.pt) and checkpoint_last.pt keeps update 1's finite weights."""
    command = train_command(multi30k, tmp_path) + ["--optimizer", "sgd", "--lr", "1e30", "--save-interval-updates", "1"]
    result = run(*command, check=False)
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines()[-1].startswith("fairseq-train: error: gradients are Nan/Inf: training diverged and stopped")
    ), result.stderr[-2000:]
    fairseq_fixes.install()  # the checkpoint read as the plugin reads it, whichever tests ran before in this process
    last = checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "checkpoint_last.pt"))
    assert last["optimizer_history"][-1]["num_updates"] == 1
    assert all(torch.isfinite(value).all() for value in last["model"].values())
