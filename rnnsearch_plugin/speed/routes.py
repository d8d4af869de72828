"""Which devices the routes of this package serve. Each was chosen by measurements on CPUs only
(``benchmarks/changes.md``), so a tensor on any other device takes torch's own route (``torch.tanh``,
autograd's per-step weight gradients, one encoder row per hypothesis, fairseq's own --amp) until a route has been measured there
(``tooling/gpu_check.sh``).

``cpuinfo_field`` reads what the processor says of itself (its vendor decides the tanh route).
"""

from pathlib import Path

import torch


def measured_on(device: torch.device) -> bool:
    """Whether the routes of ``speed/`` were measured on ``device``'s kind: the CPU only."""
    return device.type == "cpu"


def cpuinfo_field(key: str) -> str:
    """The first processor's ``key`` in /proc/cpuinfo (``vendor_id``, ``model name``, ``flags``),
    or "" where it does not say (no such file, or no such key)."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    fields = (line.split(":", 1) for line in lines if ":" in line)
    return next((value.strip() for name, value in fields if name.strip() == key), "")
