"""The CPU engine's choices, made once when the model is built (``engines.build``): one ``Tricks``
object that the engine's encoder, decoder and alignment head share and read. Each trick is a
named field, on unless ``--engine-tricks`` leaves it out; a trick left out takes torch's own route
for the same equations, so the numbers stay the reference's (``tests/models/test_engines.py``):

- ``tanh_route``: tanh by the processor's fastest exact route (``activations.py``: 2 sigmoid(2x) - 1
  where ``by_sigmoid``, the processor's fact read when the choices are made), else ``torch.tanh``;
- ``energies_backward``: the additive score's hand-written backward (``scores.py``), else autograd's
  through the same forward;
- ``beam_reordering``: the source side once per sentence in beam search (``beam_reordering.py``),
  else once per hypothesis, as fairseq's lstm holds it.

``bfloat16`` is the precision policy (``precision.py``): bfloat16 products under ``--amp`` where the
model runs on a CPU with bfloat16 arithmetic, else float32. What each trick buys, measured on the
whole step it serves: ``benchmarks/``' tricks table.
"""

import contextlib
import json
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import ContextManager, Optional

import torch
from torch import Tensor

from ..errors import UserInputError
from . import activations

ALL, NONE = "all", "none"  # --engine-tricks' words for every trick and for none
SUMMARY = re.compile(r"\btricks=(\{.*?\})")  # ``Tricks.summary`` in a line of the model summary


@dataclass(frozen=True)
class Tricks:
    tanh_route: bool = True
    energies_backward: bool = True
    beam_reordering: bool = True
    bfloat16: bool = False
    by_sigmoid: bool = field(default_factory=activations.sigmoid_route_is_faster)  # the tanh route's float32 route

    @classmethod
    def names(cls) -> list[str]:
        """The tricks as ``--engine-tricks`` names them: tanh-route, energies-backward, ..."""
        return [spec.name.replace("_", "-") for spec in fields(cls) if spec.name not in ("bfloat16", "by_sigmoid")]

    @classmethod
    def chosen(cls, spec: str, bfloat16: bool) -> "Tricks":
        """The tricks ``--engine-tricks`` names ("all", "none", or names joined by commas)."""
        named = {name.strip() for name in spec.split(",")} - {""}
        unknown = named - {ALL, NONE, *cls.names()}
        if not named or unknown or (named & {ALL, NONE} and len(named) > 1):
            raise UserInputError(f"--engine-tricks {spec!r}: give {ALL!r}, {NONE!r} or some of {', '.join(cls.names())}, joined by commas")
        on = set(cls.names()) if ALL in named else named - {NONE}
        chosen = cls(**{name.replace("-", "_"): name in on for name in cls.names()}, bfloat16=bfloat16)
        return chosen if chosen.tanh_route else replace(chosen, by_sigmoid=False)

    def summary(self) -> str:
        """The choices as one JSON object, for the model summary fairseq-train logs (``CpuDecoder.extra_repr``)."""
        return f"tricks={json.dumps(asdict(self), sort_keys=True)}"

    @classmethod
    def in_summary(cls, line: str) -> Optional["Tricks"]:
        """The choices ``summary`` wrote into ``line``, or None where it holds none
        (``analysis/training_log.py`` reads a run's precision there)."""
        match = SUMMARY.search(line)
        if match is None:
            return None
        known = {spec.name for spec in fields(cls)}  # a run's record of tricks since removed is read without them
        return cls(**{name: value for name, value in json.loads(match[1]).items() if name in known})

    def tanh(self, x: Tensor) -> Tensor:
        return activations.tanh(x, self.by_sigmoid) if self.tanh_route else torch.tanh(x)

    def autocast(self) -> ContextManager[None]:
        """bfloat16 autocast on the CPU where the model runs in bfloat16 (``precision.py``)."""
        return torch.autocast("cpu", dtype=torch.bfloat16) if self.bfloat16 else contextlib.nullcontext()
