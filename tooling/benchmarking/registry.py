"""The benchmark's sections by name: what each runs, the table it adds to the report, and what
it needs. ``--sections`` chooses among these names, they run in this order, and the report shows
their tables in this order; a new section is a module with its two functions and one entry here."""

import argparse
from dataclasses import dataclass
from typing import Any, Callable

from . import report, sections, tricks


@dataclass(frozen=True)
class Section:
    """A section: the function that measures it and the one that renders its record."""

    run: Callable[[argparse.Namespace], dict[str, Any]]  # the record OUT/results.json keeps under the section's name
    table: Callable[[dict[str, Any]], list[str]]  # that record's lines of OUT/results.md
    default: bool = True  # runs when --sections is not given
    data: bool = False  # trains or translates the binarized corpus of --data
    needs: tuple[str, ...] = ()  # sections that run first whenever this one runs (it reads their output)
    peaks: bool = True  # the report's header names the matmul peaks beside its figures
    # with --update: the record kept, from OUT/results.json's (None if it has none) and this run's
    merge: Callable[[dict[str, Any] | None, dict[str, Any]], dict[str, Any]] = lambda earlier, new: new


SECTIONS = {
    "train": Section(sections.train_section, report.train_table, data=True),
    "decode": Section(sections.decode_section, report.decode_table, data=True, needs=("train",)),
    "paper": Section(sections.paper_section, report.paper_table),
    "memory": Section(sections.memory_section, report.memory_table),
    "allocator": Section(sections.allocator_section, report.allocator_table, default=False, data=True),
    "tricks": Section(tricks.tricks_section, tricks.tricks_table, default=False, data=True, peaks=False, merge=tricks.merge),
}


def to_run(chosen: list[str]) -> list[str]:
    """The chosen sections and those they need, in the registry's order."""
    needed = set(chosen).union(*(SECTIONS[name].needs for name in chosen))
    return [name for name in SECTIONS if name in needed]
