"""What fairseq's commands log (``fairseq_fixes/log_output.py``): each --log-file line once, no hydra version_base warning."""

import sys

import pytest
from conftest import fairseq_decode, fairseq_train, run, tiny_training


def test_log_file_holds_each_line_once(checkpoint):
    """fairseq-train --log-file (the fixture's run: 300 updates over 5 epochs, each validated):
    every progress line once, not once more per epoch."""
    lines = [line for line in (checkpoint.parent / "train.log").read_text().splitlines() if "num_updates" in line]
    assert sum("valid on 'valid' subset" in line for line in lines) >= 4
    assert len(lines) == len(set(lines))


@pytest.mark.parametrize("command", [("fairseq-train",), (sys.executable, "-m", "fairseq_cli.train")])
def test_commands_print_no_hydra_version_base_warning(tmp_path, command):
    """hydra's version_base block is gone, from the console command and from ``python -m``; its
    other warnings are still shown."""
    result = run(
        *command,
        str(tmp_path / "no-data"),
        "--user-dir",
        "rnnsearch_plugin",
        "--task",
        "translation",
        "--arch",
        "rnnsearch_small",
        "--max-tokens",
        "1000",
        check=False,
    )
    assert "version_base" not in result.stderr
    assert "hydra.experimental.initialize() is no longer experimental" in result.stderr


def test_commands_print_no_pin_memory_or_autocast_warning(multi30k, tmp_path):
    """fairseq-train and fairseq-generate on a CPU: neither torch's pin_memory warning nor the
    torch.cuda.amp.autocast deprecation, both about fairseq's code; other warnings still show."""
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
    assert "hydra.experimental.initialize() is no longer experimental" in train.stderr
