"""The engines a model can be built with (``--engine``), chosen once, in ``models/rnnsearch.py``:

- ``reference``: ``models/`` as it is, the paper's equations in their order;
- ``cpu``: ``cpu.py``, the same parameters run the CPU engine's faster way, on any device, and
  ``alignment_head.py``, the alignment head without its large tensors kept for backward;
- ``auto`` (the default, and what a checkpoint without the option gets): the engine measured on the
  device the model runs on (``cpu.py`` on the CPU), the reference everywhere else.

Another engine (CUDA graphs, a compiled step) is one more module subclassing ``models/``' encoder
and decoder (and alignment head) and one more entry in ``ENGINES``.
"""

import logging
from typing import Any, Optional

from ..models.alignment_head import AlignmentHead
from ..models.decoder import ConditionalGRUDecoder
from ..models.encoder import RecurrentEncoder
from . import precision
from .alignment_head import CpuAlignmentHead
from .cpu import CpuDecoder, CpuEncoder

logger = logging.getLogger(__name__)

ENGINES: dict[str, tuple[type[RecurrentEncoder], type[ConditionalGRUDecoder], type[AlignmentHead]]] = {
    "auto": (CpuEncoder, CpuDecoder, CpuAlignmentHead),
    "reference": (RecurrentEncoder, ConditionalGRUDecoder, AlignmentHead),
    "cpu": (CpuEncoder, CpuDecoder, CpuAlignmentHead),
}


def build(
    name: str, *, encoder: dict[str, Any], decoder: dict[str, Any], alignment_head: Optional[dict[str, Any]]
) -> tuple[RecurrentEncoder, ConditionalGRUDecoder]:
    """The encoder and decoder of engine ``name`` from their constructors' arguments, and the
    decoder's alignment head from its own (None: no head)."""
    encoder_class, decoder_class, head_class = ENGINES[name]
    head = None if alignment_head is None else head_class(**alignment_head)
    built = encoder_class(**encoder), decoder_class(**decoder, alignment_head=head)
    if name == "cpu":
        for half in built:
            half.everywhere = True
    return built


def set_bfloat16(model: Any, requested: bool) -> bool:
    """Run the model's encoder and decoder under bfloat16 autocast on the CPU (``precision.py``) if
    ``requested``, the engine has the route and the processor has bfloat16 arithmetic; whether it does so."""
    halves = (model.encoder, model.decoder)
    if requested and not all(hasattr(half, "cpu_bfloat16") for half in halves):
        logger.warning("--amp: the reference engine has no bfloat16 route on the CPU, so the model runs in float32 (--engine auto)")
        return False
    enabled = precision.cpu_bfloat16_available(requested)
    for half in halves:
        if hasattr(half, "cpu_bfloat16"):
            half.cpu_bfloat16 = enabled
    return enabled


def bfloat16(model: Any) -> bool:
    """Whether the model runs under bfloat16 autocast on the CPU."""
    return bool(getattr(model.decoder, "cpu_bfloat16", False))
