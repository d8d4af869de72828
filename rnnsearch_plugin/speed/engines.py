"""The engines a model can be built with (``--engine``), chosen once, when ``models/rnnsearch.py``
builds the model, with the device it will run on; nothing decides it again at call time:

- ``reference``: ``models/`` as it is, the paper's equations in their order;
- ``cpu``: ``cpu.py``, the same parameters run the CPU engine's faster way (on any device), and
  ``alignment_head.py``, the alignment head without its large tensors kept for backward; its
  tricks (``tricks.py``) are those ``--engine-tricks`` names, fixed for the model's life;
- ``auto`` (the default, and what a checkpoint without the option gets): the CPU engine where the
  model runs on the CPU (no CUDA, or ``--cpu``), the only device its tricks were measured on; the
  reference elsewhere.

The precision policy is the engine's too: with ``--amp``, bfloat16 products where the model runs
on a CPU with bfloat16 arithmetic (``precision.py``), in training from the model's configuration,
in translation from the command's (``prepare_for_inference``).

Another engine (CUDA graphs, a compiled step) is one more module subclassing ``models/``' encoder
and decoder (and alignment head) and one more entry here.
"""

import dataclasses
import logging
from typing import Any, Optional

import torch
from fairseq.utils import safe_getattr

from ..models.alignment_head import AlignmentHead
from ..models.decoder import ConditionalGRUDecoder
from ..models.encoder import RecurrentEncoder
from . import precision
from .alignment_head import CpuAlignmentHead
from .cpu import CpuDecoder, CpuEncoder
from .tricks import ALL, Tricks

logger = logging.getLogger(__name__)
ENGINES = ("auto", "reference", "cpu")
Halves = tuple[RecurrentEncoder, ConditionalGRUDecoder]


def runs_on_cpu(cfg: Any) -> bool:
    """Whether a model of configuration ``cfg`` runs on the CPU, as fairseq places it: without CUDA,
    or with ``--cpu`` (``cpu: II("common.cpu")``; a configuration made outside fairseq holds the
    unresolved string, and a machine with CUDA then places the model there)."""
    return not torch.cuda.is_available() or safe_getattr(cfg, "cpu", False) is True


def build(cfg: Any, *, encoder: dict[str, Any], decoder: dict[str, Any], alignment_head: Optional[dict[str, Any]]) -> Halves:
    """The encoder and decoder of the engine that ``cfg`` (``--engine``, ``--engine-tricks``,
    ``--amp``) and the device choose, from their constructors' arguments, and the decoder's
    alignment head from its own (None: no head)."""
    name = str(safe_getattr(cfg, "engine", None) or "auto")
    on_cpu, amp = runs_on_cpu(cfg), safe_getattr(cfg, "amp", False) is True  # amp: II("common.amp"), unresolved outside fairseq
    if name == "reference" or (name == "auto" and not on_cpu):
        if amp and on_cpu:
            warn_no_bfloat16_route()
        head = None if alignment_head is None else AlignmentHead(**alignment_head)
        return RecurrentEncoder(**encoder), ConditionalGRUDecoder(**decoder, alignment_head=head)
    bfloat16 = on_cpu and precision.cpu_bfloat16_available(amp)
    tricks = Tricks.chosen(str(safe_getattr(cfg, "engine_tricks", None) or ALL), bfloat16)
    head = None if alignment_head is None else CpuAlignmentHead(tricks, **alignment_head)
    return CpuEncoder(tricks, **encoder), CpuDecoder(tricks, **decoder, alignment_head=head)


def set_bfloat16(model: Any, requested: bool) -> bool:
    """Run the model's engine with bfloat16 products on the CPU if ``requested``, the engine has
    the route and the processor has bfloat16 arithmetic; whether it does so."""
    halves = [module for module in model.modules() if isinstance(getattr(module, "tricks", None), Tricks)]
    if requested and not halves:
        warn_no_bfloat16_route()
        return False
    enabled = precision.cpu_bfloat16_available(requested)
    for half in halves:
        half.tricks = dataclasses.replace(half.tricks, bfloat16=enabled)
    return enabled


def prepare_for_inference(model: Any, amp: bool) -> None:
    """Translation with ``--amp`` on a CPU: bfloat16 products, the weights stored in bfloat16 once
    (autocast would cast them again at every decoding step)."""
    on_cpu = next(model.parameters()).device.type == "cpu"
    if set_bfloat16(model, on_cpu and amp):
        model.to(torch.bfloat16)
        logger.info("translating with bfloat16 products on the CPU (--amp)")


def warn_no_bfloat16_route() -> None:
    logger.warning("--amp: the reference engine has no bfloat16 route on the CPU, so the model runs in float32 (--engine auto)")
