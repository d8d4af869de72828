"""What fairseq's commands log (``fairseq_fixes/log_output.py``): each --log-file line once, no hydra version_base warning."""
from conftest import run


def test_log_file_holds_each_line_once(checkpoint):
    """fairseq-train --log-file (the fixture's run: 300 updates over 5 epochs, each validated):
    every progress line once, not once more per epoch."""
    lines = [line for line in (checkpoint.parent / "train.log").read_text().splitlines() if "num_updates" in line]
    assert sum("valid on 'valid' subset" in line for line in lines) >= 4
    assert len(lines) == len(set(lines))


def test_commands_print_no_hydra_version_base_warning(tmp_path):
    """hydra's version_base block is gone; its other warnings are still shown."""
    result = run("fairseq-train", str(tmp_path / "no-data"), "--user-dir", "rnnsearch_plugin", "--task", "translation",
                 "--arch", "rnnsearch_small", "--max-tokens", "1000", check=False)
    assert "version_base" not in result.stderr
    assert "hydra.experimental.initialize() is no longer experimental" in result.stderr
