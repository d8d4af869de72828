"""Data-parallel training started by torchrun, on CPUs and on GPUs however they are shared out
(``fairseq_fixes/distributed_launch.py``)."""

import pytest
import torch
from conftest import BIN, assert_same_weights, losses_by_update, run_to_end, train_command


def test_two_cpu_processes_match_one_process_seeing_the_same_global_batch(multi30k, tmp_path):
    """Data parallel through fairseq's trainer: torchrun starts 2 processes (gloo); each takes
    every other batch, fairseq all-reduces the gradients. One process with --update-freq 2
    sums the same two batches per update, so the weights must agree. Dropout is off: its
    random stream differs between one process running two batches and two running one."""
    common = train_command(multi30k, tmp_path) + ["--dropout", "0", "--max-update", "6", "--no-save-optimizer-state"]
    one = run_to_end(common + ["--save-dir", str(tmp_path / "one"), "--update-freq", "2"])
    two = run_to_end(
        [
            str(BIN / "torchrun"),
            "--nproc_per_node",
            "2",
            "--master_port",
            "29561",
            *common,
            "--save-dir",
            str(tmp_path / "two"),
            "--distributed-world-size",
            "2",
            "--distributed-backend",
            "gloo",
            "--ddp-backend",
            "legacy_ddp",
        ]
    )
    assert losses_by_update(two) == losses_by_update(one)  # the logged, all-reduced losses
    assert_same_weights(tmp_path / "two" / "checkpoint_last.pt", tmp_path / "one" / "checkpoint_last.pt")


@pytest.mark.parametrize(
    "visible,rank,local_rank,gpu",
    [
        (0, 3, "1", 0),  # CPUs only: device 0, the only value fairseq accepts without CUDA
        (8, 11, "3", 3),  # torchrun, 8 GPUs per machine: the process's LOCAL_RANK
        (1, 5, "5", 0),  # one GPU visible per process (CUDA_VISIBLE_DEVICES set per task)
        (2, 3, "3", 1),  # LOCAL_RANK beyond the visible GPUs: fairseq's rank modulo device count
        (4, 6, None, 2),  # no LOCAL_RANK: fairseq's rule
    ],
)
def test_torchrun_process_gets_a_visible_gpu(monkeypatch, visible, rank, local_rank, gpu):
    """fairseq's own entry point (infer_init_method) with torchrun's environment and a faked
    number of visible GPUs: the device chosen, and the one CUDA is set to."""
    from fairseq.dataclass.configs import DistributedTrainingConfig
    from fairseq.distributed import utils as distributed_utils

    from rnnsearch_plugin.fairseq_fixes import distributed_launch

    distributed_launch.install()
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
    assert (cfg.device_id, cfg.distributed_rank, cfg.distributed_world_size) == (gpu, rank, 16)
    assert chosen == ([gpu] if gpu > 0 else [])
