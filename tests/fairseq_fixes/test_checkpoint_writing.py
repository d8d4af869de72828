"""Interruption and resume: a run killed with SIGKILL and restarted with the same
command continues exactly as if it had never stopped, and an interrupted checkpoint copy never
replaces the good checkpoint it was overwriting (``fairseq_fixes/checkpoint_writing.py``)."""

import os
import signal
import subprocess

import pytest
import torch
from conftest import REPO, SAVE_EVERY, UPDATES, assert_same_weights, losses_by_update, run_to_end, train_command
from fairseq import checkpoint_utils

from rnnsearch_plugin.fairseq_fixes import checkpoint_writing

KILL_AFTER = 6  # the run is killed once it has logged this update


def run_until_killed(command: list[str]) -> str:
    """Start the run and SIGKILL it as soon as it has logged update KILL_AFTER."""
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in process.stdout:
        seen.append(line)
        if f'"num_updates": "{KILL_AFTER}"' in line:
            process.send_signal(signal.SIGKILL)
            break
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL, "".join(seen)[-3000:]
    return "".join(seen)


def test_sigkill_then_same_command_continues_like_an_uninterrupted_run(multi30k, tmp_path):
    """Trained on the 1,014 validation pairs (not a multiple of --required-batch-size-multiple 8,
    so the batch that batching.py puts back is in every epoch): about 12 batches per epoch, so the
    resumed part runs through the end of epoch 1 and into epoch 2. A killed copy's .tmp files
    are removed when the run starts again."""
    valid_set = ["--train-subset", "valid", "--max-tokens", "4000"]
    uninterrupted = run_to_end(train_command(multi30k, tmp_path / "whole") + valid_set)
    reference = losses_by_update(uninterrupted)
    assert sorted(reference) == list(range(1, UPDATES + 1)) and "end of epoch 1 " in uninterrupted
    assert len((multi30k / "raw" / "valid.en").read_text().splitlines()) % 8 != 0

    interrupted = tmp_path / "interrupted"
    command = train_command(multi30k, interrupted) + valid_set
    before_kill = losses_by_update(run_until_killed(command))
    assert max(before_kill) == KILL_AFTER
    stale = [interrupted / "checkpoint_best.pt.tmp", interrupted / "checkpoint_last.pt.tmp"]
    for path in stale:  # what a kill during a copy leaves
        path.write_bytes(b"half a checkpoint")
    after_restart = run_to_end(command)
    assert not any(path.exists() for path in stale)
    resumed = losses_by_update(after_restart)
    resumed_from = SAVE_EVERY * (KILL_AFTER // SAVE_EVERY)  # the last checkpoint before the kill
    assert f"Loaded checkpoint {interrupted / 'checkpoint_last.pt'} (epoch 1 @ {resumed_from} updates)" in after_restart
    assert sorted(resumed) == list(range(resumed_from + 1, UPDATES + 1))
    # same losses update by update (as fairseq logs them, 3 decimals) and same final weights
    assert resumed == {update: reference[update] for update in resumed}
    assert_same_weights(interrupted / "checkpoint_last.pt", tmp_path / "whole" / "checkpoint_last.pt")


def test_interrupted_checkpoint_copy_leaves_the_previous_checkpoint(tmp_path):
    """fairseq copies the checkpoint it just wrote onto checkpoint_last.pt / _best.pt; a copy
    that dies half-way must not leave a truncated file under the target name."""
    checkpoint_writing.install()
    good, new = tmp_path / "checkpoint_last.pt", tmp_path / "checkpoint_3_6000.pt"
    good.write_bytes(b"good checkpoint")
    new.write_bytes(b"newer checkpoint, longer")

    def dying_copy(src_path: str, dst_path: str, overwrite: bool = False) -> bool:
        with open(dst_path, "wb") as target:
            target.write(open(src_path, "rb").read()[:5])
        raise KeyboardInterrupt  # the process dies mid-copy

    with pytest.raises(KeyboardInterrupt):
        checkpoint_writing.replacing_atomically(dying_copy)(str(new), str(good), overwrite=True)
    assert good.read_bytes() == b"good checkpoint" and not good.with_name(good.name + ".tmp").exists()
    assert checkpoint_writing.replacing_atomically(checkpoint_utils.PathManager.copy.__wrapped__)(str(new), str(good), overwrite=True)
    assert good.read_bytes() == new.read_bytes()
    assert checkpoint_utils.PathManager.copy.wrapped_by.endswith("replacing_atomically")


def test_checkpoint_data_reaches_the_disk_before_its_name_does(tmp_path, monkeypatch):
    """fairseq's write (a .tmp renamed into place) and its copy onto checkpoint_last.pt: each new
    file is fsynced before the rename, and its folder after (power-loss safety)."""
    checkpoint_writing.install()
    events = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"))), fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda src, dst: (events.append(("replace", str(src), str(dst))), replace(src, dst))[1])
    written, last = tmp_path / "checkpoint_1_8.pt", tmp_path / "checkpoint_last.pt"
    checkpoint_utils.torch_persistent_save({"w": torch.ones(3)}, str(written))
    assert checkpoint_utils.PathManager.copy(str(written), str(last), overwrite=True)
    folder = ("fsync", str(tmp_path))
    assert events == [
        ("fsync", f"{written}.tmp"),
        ("replace", f"{written}.tmp", str(written)),
        folder,
        ("fsync", f"{last}.tmp"),
        ("replace", f"{last}.tmp", str(last)),
        folder,
    ]
    assert torch.load(last, weights_only=True)["w"].tolist() == [1.0, 1.0, 1.0]
