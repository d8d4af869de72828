"""rnnsearch-aer on the Hansards gold standard."""
import json
from pathlib import Path

import pytest

from conftest import SHARED_DATA, run
from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_gold
from rnnsearch_plugin.data.textio import read_lines


def test_aer_command_scores_the_model_and_the_diagonal_against_the_gold(multi30k, checkpoint, tmp_path):
    gold_dir = Path(SHARED_DATA) / "alignment-gold"
    run("rnnsearch-aer", "--path", str(checkpoint), "--data", str(multi30k / "bin"), "--gold", str(gold_dir),
        "--out", str(tmp_path))
    scores = json.loads((tmp_path / "aer.json").read_text())
    french = read_lines(gold_dir / "dev.f")
    assert scores["argmax"]["links"] == sum(len(line.split()) for line in french)  # one link per French word
    assert scores["threshold 0.3"]["links"] >= scores["argmax"]["links"]
    english = read_lines(gold_dir / "dev.e")
    diagonal = {n: diagonal_links(len(e.split()), len(f.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    assert scores["diagonal"] == pytest.approx(alignment_error_rate(diagonal, read_gold(gold_dir / "dev.wa.nonullalign")))
    assert 0 <= scores["argmax"]["aer"] <= 1 and "| diagonal |" in (tmp_path / "aer.md").read_text()


def test_the_first_word_gets_back_its_capital_only_where_the_model_knows_it():
    """The gold set writes 'the commissionners went on :' for a sentence that began 'The'."""
    from types import SimpleNamespace

    from fairseq.data import Dictionary

    from rnnsearch_plugin.cli.aer import initial_capital

    source, target = Dictionary(), Dictionary()
    for word in ("The", "the", "went"):
        source.add_symbol(word)
    target.add_symbol("le")  # a model trained on lowercased French
    model = SimpleNamespace(src_dict=source, tgt_dict=target, tokenize=lambda text: text, apply_bpe=lambda text: text)
    assert initial_capital(model, ["the", "went"], target=False) == ["The", "went"]
    assert initial_capital(model, ["le", "projet"], target=True) == ["le", "projet"]
    assert initial_capital(model, ["I", "never"], target=False) == ["I", "never"]
    assert initial_capital(model, ["$", "250,000"], target=False) == ["$", "250,000"]
