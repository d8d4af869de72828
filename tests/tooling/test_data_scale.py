"""docs/data.md's figures of the pipeline at scale come from the benchmark's result file: each figure in
bold in its "Large corpora" section is a whole figure of benchmarks/data-scale*.md (tooling/data_scale.py
writes them from its measurements: sentencepiece's, and the paper's word scheme)."""

import re

from conftest import REPO


def test_every_figure_in_bold_is_the_benchmark_files():
    section = (REPO / "docs" / "data.md").read_text().split("## Large corpora\n", 1)[1].split("\n## ", 1)[0]
    measured = "\n".join(path.read_text() for path in sorted((REPO / "benchmarks").glob("data-scale*.md")))
    figures = re.findall(r"\*\*([\d.,]*\d)\*\*", section)
    assert len(figures) >= 6
    assert not [figure for figure in figures if not re.search(rf"(?<![\d.,]){re.escape(figure)}(?![\d]|[.,]\d)", measured)]
