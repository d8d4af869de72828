"""The engines a model can be built with (``--engine``), chosen once, in ``models/rnnsearch.py``:

- ``reference``: ``models/`` as it is, the paper's equations in their order;
- ``cpu``: ``cpu.py``, the same parameters run the CPU engine's faster way, on any device;
- ``auto`` (the default, and what a checkpoint without the option gets): the engine measured on the
  device the model runs on (``cpu.py`` on the CPU), the reference everywhere else.

Another engine (CUDA graphs, a compiled step) is one more module subclassing ``models/``' encoder
and decoder and one more entry in ``ENGINES``.
"""

import logging
from typing import Any

from ..models.decoder import ConditionalGRUDecoder
from ..models.encoder import RecurrentEncoder
from . import precision
from .cpu import CpuDecoder, CpuEncoder

logger = logging.getLogger(__name__)

ENGINES: dict[str, tuple[type[RecurrentEncoder], type[ConditionalGRUDecoder]]] = {
    "auto": (CpuEncoder, CpuDecoder),
    "reference": (RecurrentEncoder, ConditionalGRUDecoder),
    "cpu": (CpuEncoder, CpuDecoder),
}


def build(name: str, *, encoder: dict[str, Any], decoder: dict[str, Any]) -> tuple[RecurrentEncoder, ConditionalGRUDecoder]:
    """The encoder and decoder of engine ``name`` from their constructors' arguments."""
    encoder_class, decoder_class = ENGINES[name]
    built = encoder_class(**encoder), decoder_class(**decoder)
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
