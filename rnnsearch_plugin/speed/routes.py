"""What the processor says of itself in /proc/cpuinfo, which decides a route: its vendor picks
tanh's (``activations.py``). The benchmarks and the tutorial name the processor by it too."""

from pathlib import Path


def cpuinfo_field(key: str) -> str:
    """The first processor's ``key`` in /proc/cpuinfo (``vendor_id``, ``model name``, ``flags``),
    or "" where it does not say (no such file, or no such key)."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    fields = (line.split(":", 1) for line in lines if ":" in line)
    return next((value.strip() for name, value in fields if name.strip() == key), "")
