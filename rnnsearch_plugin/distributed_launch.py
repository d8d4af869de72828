"""Data-parallel training on CPUs, started by ``torchrun`` (gloo backend).

fairseq reads torchrun's environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``PORT``) in
``distributed.utils._infer_torch_distributed_launch_init``, which sets each process's device
to ``rank % torch.cuda.device_count()`` and so divides by zero on a machine without GPUs.
``install`` replaces it with one that takes torchrun's ``LOCAL_RANK`` as the GPU of each
process, or device 0 (the only value fairseq accepts without CUDA) when there is no GPU.
"""
import os

import torch
from fairseq.dataclass.configs import DistributedTrainingConfig
from fairseq.distributed import utils as distributed_utils


def init_from_torchrun_environment(cfg: DistributedTrainingConfig) -> None:
    cfg.distributed_init_method = "env://"
    cfg.distributed_world_size = int(os.environ["WORLD_SIZE"])
    cfg.distributed_rank = int(os.environ["RANK"])
    cfg.device_id = int(os.environ.get("LOCAL_RANK", 0)) if torch.cuda.is_available() else 0
    cfg.distributed_no_spawn = True  # torchrun started the processes


def install() -> None:
    distributed_utils._infer_torch_distributed_launch_init = init_from_torchrun_environment
