"""Markdown tables for the reports (Table 1, Table 2, Appendix C, AER)."""

from typing import Any


def markdown_cell(text: Any) -> str:
    return "-" if text is None else (f"{text:.2f}" if isinstance(text, float) else str(text).replace("|", "\\|"))


def markdown_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + " --- |" * len(header),
        *("| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows),
    ]
