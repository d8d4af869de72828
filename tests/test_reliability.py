"""Interruption and resume (issue 6): a run killed with SIGKILL and restarted with the same
command continues exactly as if it had never stopped, and an interrupted checkpoint copy never
replaces the good checkpoint it was overwriting."""
import os
import signal
import subprocess

import pytest
import torch
from fairseq import checkpoint_utils

from conftest import BIN, REPO, TINY, losses_by_update, run

UPDATES, SAVE_EVERY, KILL_AFTER = 14, 4, 6


def train_command(multi30k, save_dir) -> list[str]:
    """The paper's Adadelta + clipping (its accumulators must survive the restart), dropout
    (its random stream must too), and a checkpoint every SAVE_EVERY updates, mid-epoch."""
    return [str(BIN / "fairseq-train"), str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin",
            "--task", "translation", "-s", "en", "-t", "fr", "--arch", "rnnsearch_small", *TINY,
            "--dropout", "0.2", "--optimizer", "rnnsearch_adadelta", "--clip-norm", "1.0",
            "--max-tokens", "1000", "--max-update", str(UPDATES), "--save-interval-updates",
            str(SAVE_EVERY), "--no-epoch-checkpoints", "--disable-validation", "--save-dir", str(save_dir),
            "--num-workers", "0", "--data-buffer-size", "0", "--log-format", "json", "--log-interval", "1",
            "--seed", "5", "--cpu"]


def run_to_end(command: list[str]) -> str:
    result = run(*command)
    return result.stdout + result.stderr


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


def assert_same_weights(checkpoint, expected_checkpoint) -> None:
    """Every parameter of two fairseq checkpoints equal to 1e-6."""
    actual, expected = (checkpoint_utils.load_checkpoint_to_cpu(str(c))["model"] for c in (checkpoint, expected_checkpoint))
    for name, value in expected.items():
        torch.testing.assert_close(actual[name], value, rtol=0, atol=1e-6, msg=name)


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


def test_two_cpu_processes_match_one_process_seeing_the_same_global_batch(multi30k, tmp_path):
    """Data parallel through fairseq's trainer: torchrun starts 2 processes (gloo); each takes
    every other batch, fairseq all-reduces the gradients. One process with --update-freq 2
    sums the same two batches per update, so the weights must agree. Dropout is off: its
    random stream differs between one process running two batches and two running one."""
    common = train_command(multi30k, tmp_path) + ["--dropout", "0", "--max-update", "6", "--no-save-optimizer-state"]
    one = run_to_end(common + ["--save-dir", str(tmp_path / "one"), "--update-freq", "2"])
    two = run_to_end([str(BIN / "torchrun"), "--nproc_per_node", "2", "--master_port", "29561", *common,
                      "--save-dir", str(tmp_path / "two"), "--distributed-world-size", "2",
                      "--distributed-backend", "gloo", "--ddp-backend", "legacy_ddp"])
    assert losses_by_update(two) == losses_by_update(one)  # the logged, all-reduced losses
    assert_same_weights(tmp_path / "two" / "checkpoint_last.pt", tmp_path / "one" / "checkpoint_last.pt")


def test_diverging_run_stops_with_one_line_and_keeps_its_last_good_checkpoint(multi30k, tmp_path):
    """An absurd learning rate: update 1 is saved, update 2's gradients are not finite; fairseq
    stops the run (writing crash.pt) and checkpoint_last.pt keeps update 1's finite weights."""
    command = train_command(multi30k, tmp_path) + ["--optimizer", "sgd", "--lr", "1e30", "--save-interval-updates", "1"]
    result = run(*command, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "fairseq-train: error: gradients are Nan/Inf: training diverged and stopped"), result.stderr[-2000:]
    last = checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "checkpoint_last.pt"))
    assert last["optimizer_history"][-1]["num_updates"] == 1
    assert all(torch.isfinite(value).all() for value in last["model"].values())


def test_interrupted_checkpoint_copy_leaves_the_previous_checkpoint(tmp_path):
    """fairseq copies the checkpoint it just wrote onto checkpoint_last.pt / _best.pt; a copy
    that dies half-way must not leave a truncated file under the target name."""
    good, new = tmp_path / "checkpoint_last.pt", tmp_path / "checkpoint_3_6000.pt"
    good.write_bytes(b"good checkpoint")
    new.write_bytes(b"newer checkpoint, longer")

    def dying_copy(src_path: str, dst_path: str, overwrite: bool = False) -> bool:
        with open(dst_path, "wb") as target:
            target.write(open(src_path, "rb").read()[:5])
        raise KeyboardInterrupt  # the process dies mid-copy

    from rnnsearch_plugin.checkpoint_writing import replacing_atomically

    with pytest.raises(KeyboardInterrupt):
        replacing_atomically(dying_copy)(str(new), str(good), overwrite=True)
    assert good.read_bytes() == b"good checkpoint" and not good.with_name(good.name + ".tmp").exists()
    assert replacing_atomically(checkpoint_utils.PathManager.copy.__wrapped__)(str(new), str(good), overwrite=True)
    assert good.read_bytes() == new.read_bytes()
    assert checkpoint_utils.PathManager.copy.wrapped_by.endswith("replacing_atomically")  # installed by the plugin


def test_checkpoint_data_reaches_the_disk_before_its_name_does(tmp_path, monkeypatch):
    """fairseq's write (a .tmp renamed into place) and its copy onto checkpoint_last.pt: each new
    file is fsynced before the rename, and its folder after (power-loss safety)."""
    events = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"))), fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda src, dst: (events.append(("replace", str(src), str(dst))), replace(src, dst))[1])
    written, last = tmp_path / "checkpoint_1_8.pt", tmp_path / "checkpoint_last.pt"
    checkpoint_utils.torch_persistent_save({"w": torch.ones(3)}, str(written))
    assert checkpoint_utils.PathManager.copy(str(written), str(last), overwrite=True)
    folder = ("fsync", str(tmp_path))
    assert events == [("fsync", f"{written}.tmp"), ("replace", f"{written}.tmp", str(written)), folder,
                      ("fsync", f"{last}.tmp"), ("replace", f"{last}.tmp", str(last)), folder]
    assert torch.load(last, weights_only=True)["w"].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("visible,rank,local_rank,device", [
    (0, 3, "1", 0),      # CPUs only: device 0, the only value fairseq accepts without CUDA
    (8, 11, "3", 3),     # torchrun, 8 GPUs per machine: the process's LOCAL_RANK
    (1, 5, "5", 0),      # one GPU visible per process (CUDA_VISIBLE_DEVICES set per task)
    (2, 3, "3", 1),      # LOCAL_RANK beyond the visible GPUs: fairseq's rank modulo device count
    (4, 6, None, 2),     # no LOCAL_RANK: fairseq's rule
])
def test_torchrun_process_gets_a_visible_gpu(monkeypatch, visible, rank, local_rank, device):
    """fairseq's own entry point (infer_init_method) with torchrun's environment and a faked
    number of visible GPUs: the device chosen, and the one CUDA is set to."""
    from fairseq.dataclass.configs import DistributedTrainingConfig
    from fairseq.distributed import utils as distributed_utils

    chosen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: visible > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: visible)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    environment = {"MASTER_ADDR": "localhost", "MASTER_PORT": "29500", "WORLD_SIZE": "16", "RANK": str(rank)}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    if local_rank is None:
        monkeypatch.delenv("LOCAL_RANK", raising=False)
    else:
        monkeypatch.setenv("LOCAL_RANK", local_rank)
    cfg = DistributedTrainingConfig(distributed_world_size=16, tpu=False)
    distributed_utils.infer_init_method(cfg)
    assert (cfg.device_id, cfg.distributed_rank, cfg.distributed_world_size) == (device, rank, 16)
    assert chosen == ([device] if device > 0 else [])
