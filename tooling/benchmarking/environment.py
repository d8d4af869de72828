"""The machine and process environment a benchmark records and runs its workers under: the
processor, its ISA flags, the library versions, and glibc's malloc settings."""

import os
import platform
import time
from collections.abc import Mapping

MALLOC = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")  # set by scripts/activate.sh


def allocator_settings(env: Mapping[str, str]) -> str:
    """The MALLOC_* settings of ``env`` as the report names them."""
    return " ".join(f"{key}={env[key]}" for key in MALLOC if env.get(key)) or "glibc defaults"


def glibc_defaults() -> dict[str, str]:
    """This process's environment without the MALLOC_* settings of scripts/activate.sh."""
    return {key: value for key, value in os.environ.items() if key not in MALLOC}


def tensor_following_allocator() -> dict[str, str]:
    """glibc with every block of 64 KB or more in a mapping of its own, returned when freed, so that
    the process's peak follows what its tensors hold. By default glibc raises that threshold to
    the size of each mapped block freed (up to 32 MB), after which such blocks stay in its heap:
    four runs of the same 64 x 100 step then peaked anywhere from 1,341 to 1,968 MB."""
    return {**glibc_defaults(), "MALLOC_MMAP_THRESHOLD_": str(64 * 1024)}


def environment(device: str) -> dict[str, str]:
    """The report header's record: device, ISA flags, versions, threads, allocator, date."""
    import fairseq
    import torch
    from machine import ISA_FLAGS, isa_flags

    from rnnsearch_plugin.speed.routes import cpuinfo_field

    cpu = cpuinfo_field("model name") or platform.processor()
    described = torch.cuda.get_device_name() if device == "cuda" else f"{cpu}, {os.cpu_count()} cores"
    return {
        "device": described,
        "isa_flags": " ".join(isa_flags()) or "none of " + ", ".join(ISA_FLAGS),
        "torch": torch.__version__,
        "fairseq": fairseq.__version__,
        "python": platform.python_version(),
        "threads": str(torch.get_num_threads()),
        "allocator": allocator_settings(os.environ),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
