"""Which devices the routes of this package serve. Each was chosen by measurements on CPUs only
(``benchmarks/changes.md``), so a tensor on any other device takes torch's own route (``torch.tanh``,
autograd's per-step weight gradients, one encoder row per hypothesis, fairseq's own --amp) until a route has been measured there
(``tooling/gpu_check.sh``).

The processor a measurement names: ``cpuinfo_field``, and the instruction sets its speed depends
on, ``ISA_FLAGS`` (``machine_line``: "model name<TAB>flags", for tooling/reproduce_results.sh;
tooling/benchmark.py reads them here).
"""

from pathlib import Path

import torch

ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


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


def isa_flags() -> list[str]:
    """Those of ``ISA_FLAGS`` the processor has."""
    flags = set(cpuinfo_field("flags").split())
    return [flag for flag in ISA_FLAGS if flag in flags]


def machine_line() -> str:
    """The machine a stage of tooling/reproduce_results.sh ran on: its model name, a tab, and the
    ISA_FLAGS it has ("none" for none)."""
    return f"{cpuinfo_field('model name')}\t{' '.join(isa_flags()) or 'none'}"
