"""The machine a measurement ran on: the processor's model name and the instruction sets its speed
depends on (``ISA_FLAGS``). ``python tooling/machine.py`` prints "model name<TAB>flags" ("none"
for none of them), as tooling/reproduce_results.sh and tooling/readme_figures.py record it;
tooling/benchmarking/environment.py puts the same in a benchmark's header.
"""

from rnnsearch_plugin.speed.routes import cpuinfo_field

ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


def isa_flags() -> list[str]:
    """Those of ``ISA_FLAGS`` the processor has."""
    flags = set(cpuinfo_field("flags").split())
    return [flag for flag in ISA_FLAGS if flag in flags]


def machine_line() -> str:
    """The processor's model name, a tab, and the ISA_FLAGS it has ("none" for none)."""
    return f"{cpuinfo_field('model name')}\t{' '.join(isa_flags()) or 'none'}"


if __name__ == "__main__":
    print(machine_line())
