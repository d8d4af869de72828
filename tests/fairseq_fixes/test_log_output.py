"""What fairseq's commands log (``fairseq_fixes/log_output.py``): each --log-file line once, none of hydra's
warnings about fairseq's configuration calls, no DEBUG lines."""

import subprocess
import sys

import pytest
from conftest import fairseq_decode, fairseq_train, interactive, run, tiny_training

HYDRA_DEPRECATIONS = (
    "version_base",
    "hydra.experimental.initialize() is no longer experimental",
    "hydra.experimental.compose() is no longer experimental",
    "# @package _group_",
    "validated against ConfigStore schema",
    "The strict flag in the compose API is deprecated",
)


def test_log_file_holds_each_line_once(checkpoint):
    """fairseq-train --log-file (the fixture's run: 300 updates over 5 epochs, each validated):
    every progress line once, not once more per epoch."""
    lines = [line for line in (checkpoint.parent / "train.log").read_text().splitlines() if "num_updates" in line]
    assert sum("valid on 'valid' subset" in line for line in lines) >= 4
    assert len(lines) == len(set(lines))


@pytest.mark.parametrize("command", [("fairseq-train",), (sys.executable, "-m", "fairseq_cli.train")])
def test_commands_print_none_of_hydras_warnings_about_fairseqs_configuration(tmp_path, command, monkeypatch):
    """hydra's version_base block and its deprecations of the API fairseq calls are gone, from the
    console command and from ``python -m``; a user's own -W filter still decides (shows them again)."""
    options = (
        str(tmp_path / "no-data"),
        "--user-dir",
        "rnnsearch_plugin",
        "--task",
        "translation",
        "--arch",
        "rnnsearch_small",
        "--max-tokens",
        "1000",
    )
    result = run(*command, *options, check=False)
    assert not [warning for warning in HYDRA_DEPRECATIONS if warning in result.stderr], result.stderr
    assert "No such file or directory" in result.stderr  # it ran as far as the data
    monkeypatch.setenv("PYTHONWARNINGS", "always::UserWarning")
    shown = run(*command, *options, check=False)
    assert "hydra.experimental.initialize() is no longer experimental" in shown.stderr


def test_pinned_fairseq_asks_for_debug_logging_when_its_models_are_imported():
    """The bug behind ``restore_command_logging``: when this fails, fairseq no longer configures
    logging on import and the repair can go."""
    probe = "import logging, fairseq.models; print(logging.getLogger().level)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "10"


@pytest.mark.parametrize("command", [("fairseq-interactive",), (sys.executable, "-m", "fairseq_cli.interactive")])
def test_interactive_logs_at_info_in_fairseqs_format(multi30k, checkpoint, command, monkeypatch):
    """fairseq-interactive with the plugin: its translations, fairseq's INFO log in fairseq's format
    and nothing from hydra; LOGLEVEL=DEBUG still asks for DEBUG lines."""
    result = interactive(multi30k, checkpoint, "A dog runs .\n", command=command)
    assert result.stdout.count("D-0\t") == 1
    assert "| INFO | fairseq_cli.interactive | loading model(s)" in result.stderr
    assert "DEBUG" not in result.stderr and "Warning" not in result.stderr, result.stderr
    monkeypatch.setenv("LOGLEVEL", "DEBUG")
    debug = interactive(multi30k, checkpoint, "A dog runs .\n", command=command)
    assert "| DEBUG | hydra.core.utils |" in debug.stderr


def test_commands_print_no_pin_memory_or_autocast_warning(multi30k, tmp_path):
    """fairseq-train and fairseq-generate on a CPU: neither torch's pin_memory warning nor the
    torch.cuda.amp.autocast deprecation, both about fairseq's code."""
    train = run(*fairseq_train(multi30k / "bin"), *tiny_training(tmp_path, 2))
    generate = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", tmp_path / "checkpoint_last.pt"),
        "--gen-subset",
        "valid",
        "--beam",
        "1",
        "--max-len-a",
        "0",
        "--max-len-b",
        "2",
        "--batch-size",
        "512",
    )
    for result in (train, generate):
        assert "pin_memory" not in result.stderr and "torch.cuda.amp.autocast" not in result.stderr
    assert "num_updates 2" in train.stdout + train.stderr
