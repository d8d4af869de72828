"""``--bf16`` trains on the GPU (or the CPU) it is given, not on a TPU that is not there.

fairseq's ``options.parse_args_and_arch`` sets ``args.tpu = True`` whenever ``--bf16`` is given
(bfloat16 was a TPU-only dtype when it was written), so the trainer then asks ``torch_xla`` for its
device and ``fairseq-train --bf16`` fails on every machine without it, GPUs that compute in
bfloat16 (Ampere and later) included. ``install`` wraps ``distributed.utils.call_main``, which
every ``fairseq-train`` run passes through after parsing, to undo that inference where it cannot
hold: ``--bf16`` with ``tpu`` set and no ``torch_xla`` installed. A run with ``torch_xla`` keeps
fairseq's behaviour. Delete this once fairseq stops inferring ``--tpu`` from ``--bf16``.
"""

import importlib.util
from typing import Any, Callable

from fairseq.distributed import utils as distributed_utils

from .patching import Function, wrap_once


def tpu_is_inferred_without_xla(common: Any) -> bool:
    """Whether fairseq turned ``--bf16`` into TPU training on a machine without ``torch_xla``."""
    return bool(common.bf16 and common.tpu) and importlib.util.find_spec("torch_xla") is None


def train_on_the_given_device(call_main: Function) -> Function:
    def wrapped(cfg: Any, main: Callable[..., Any], **kwargs: Any) -> Any:
        if tpu_is_inferred_without_xla(cfg.common):
            cfg.common.tpu = False
        return call_main(cfg, main, **kwargs)

    return wrapped


def install() -> None:
    wrap_once(distributed_utils, "call_main", train_on_the_given_device)
