"""Data-parallel training started by ``torchrun``, on CPUs and on GPUs however they are shared out.

fairseq reads torchrun's environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``PORT``) in
``distributed.utils._infer_torch_distributed_launch_init``, which sets each process's device
to ``rank % torch.cuda.device_count()`` and so divides by zero on a machine without GPUs.
``install`` wraps it so that only the device differs (``device_for_process``):
torchrun's ``LOCAL_RANK`` when it is set and names a visible GPU, otherwise fairseq's own rule,
the global rank modulo the number of visible GPUs (which also serves one GPU made visible per
process, ``CUDA_VISIBLE_DEVICES`` set per task as SLURM often does), and device 0 (the only value
fairseq accepts without CUDA) when no GPU is visible. Delete it once fairseq handles a machine
without GPUs there itself.
"""

import os
from typing import Callable, Mapping

import torch
from fairseq.dataclass.configs import DistributedTrainingConfig
from fairseq.distributed import utils as distributed_utils

from .patching import wrap_once


def device_for_process(environment: Mapping[str, str], visible_devices: int) -> int:
    """The GPU index of the process of torchrun's ``RANK`` / ``LOCAL_RANK`` among ``visible_devices``."""
    if visible_devices == 0:
        return 0
    local_rank = environment.get("LOCAL_RANK")
    if local_rank is not None and int(local_rank) < visible_devices:
        return int(local_rank)
    return int(environment["RANK"]) % visible_devices


def choosing_the_device(infer: Callable[[DistributedTrainingConfig], None]) -> Callable[[DistributedTrainingConfig], None]:
    """fairseq's reading of torchrun's environment, its device replaced. fairseq's own runs only
    where a GPU is visible: elsewhere it divides by zero, and the same values are set here."""

    def init_from_torchrun_environment(cfg: DistributedTrainingConfig) -> None:
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if visible:
            infer(cfg)
        else:
            cfg.distributed_init_method = "env://"
            cfg.distributed_world_size = int(os.environ["WORLD_SIZE"])
            cfg.distributed_rank = int(os.environ["RANK"])
            cfg.distributed_no_spawn = True  # torchrun started the processes
        cfg.device_id = device_for_process(os.environ, visible)

    return init_from_torchrun_environment


def install() -> None:
    wrap_once(distributed_utils, "_infer_torch_distributed_launch_init", choosing_the_device)
