"""tooling/machine.py: the processor line every measurement records."""

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tooling"))
import machine  # noqa: E402


def test_machine_line_names_the_processor_and_the_flags_it_has(monkeypatch):
    fields = {"model name": "AMD EPYC 9B45", "flags": "fpu avx2 avx512f sse4_2"}
    monkeypatch.setattr(machine, "cpuinfo_field", lambda key: fields.get(key, ""))
    assert machine.machine_line() == "AMD EPYC 9B45\tavx2 avx512f"
    fields["flags"] = "fpu sse4_2"
    assert machine.machine_line() == "AMD EPYC 9B45\tnone"
