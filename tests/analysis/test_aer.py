"""The Alignment Error Rate (Och & Ney 2003) and its links."""
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED_DATA
from rnnsearch_plugin.analysis.aer import (
    alignment_error_rate, argmax_links, diagonal_links, read_gold, threshold_links,
)


GOLD = Path(SHARED_DATA) / "alignment-gold"


# Sentence 1: S = {(1,1), (2,2)}, P = S + {(2,3)}; sentence 2: S = {(1,1)}, P = S + {(2,1), (3,2)}.
TOY_GOLD = "1 1 1 S\n1 2 2 S\n1 2 3 P\n2 1 1 S\n2 2 1 P\n2 3 2 P\n"


def test_aer_of_a_hand_made_gold_standard(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    gold = read_gold(path)
    assert gold == {1: ({(1, 1), (2, 2)}, {(1, 1), (2, 2), (2, 3)}), 2: ({(1, 1)}, {(1, 1), (2, 1), (3, 2)})}
    predicted = {1: {(1, 1), (2, 3), (3, 3)}, 2: {(2, 1), (3, 3)}}
    # |A| = 3 + 2 = 5, |S| = 2 + 1 = 3, |A∩S| = 1 ((1,1) of sentence 1) + 0 = 1,
    # |A∩P| = 2 ((1,1), (2,3)) + 1 ((2,1)) = 3.
    # precision = 3/5, recall = 1/3, AER = 1 - (1 + 3) / (5 + 3) = 1/2.
    result = alignment_error_rate(predicted, gold)
    assert result == {"precision": 3 / 5, "recall": 1 / 3, "aer": 1 / 2, "sentences": 2, "links": 5}


def test_predicting_exactly_the_sure_links_gives_aer_zero(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    gold = read_gold(path)
    result = alignment_error_rate({sentence: set(sure) for sentence, (sure, _) in gold.items()}, gold)
    assert (result["precision"], result["recall"], result["aer"]) == (1.0, 1.0, 0.0)


def test_aer_refuses_different_sentences(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    with pytest.raises(ValueError, match="missing \\[2\\]"):
        alignment_error_rate({1: {(1, 1)}}, read_gold(path))
    with pytest.raises(ValueError, match="not in gold \\[3\\]"):
        alignment_error_rate({1: set(), 2: set(), 3: set()}, read_gold(path))


def test_read_gold_names_the_file_and_line_of_a_malformed_link(tmp_path):
    path = tmp_path / "bad.wa"
    path.write_text("1 1 1 S\n1 2 X S\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: expected")):
        read_gold(path)
    path.write_text("1 0 1 S\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:1: positions are 1-based")):
        read_gold(path)


def test_read_gold_on_the_hansards_trial_data():
    gold = read_gold(GOLD / "dev.wa.nonullalign")
    assert sorted(gold) == list(range(1, 38))
    assert all(sure <= possible for sure, possible in gold.values())
    # 1,784 distinct links in the file, 338 of them S (counted with awk)
    assert sum(len(possible) for _, possible in gold.values()) == 1784
    assert sum(len(sure) for sure, _ in gold.values()) == 338
    english = (GOLD / "dev.e").read_text(encoding="utf-8").splitlines()
    french = (GOLD / "dev.f").read_text(encoding="utf-8").splitlines()
    for sentence, (_, possible) in gold.items():
        assert max(e for e, _ in possible) <= len(english[sentence - 1].split())
        assert max(f for _, f in possible) <= len(french[sentence - 1].split())
    predicted = {s: diagonal_links(len(english[s - 1].split()), len(french[s - 1].split())) for s in gold}
    result = alignment_error_rate(predicted, gold)
    assert 0 < result["aer"] < 1 and result["sentences"] == 37


def test_diagonal_baseline():
    assert diagonal_links(4, 4) == {(1, 1), (2, 2), (3, 3), (4, 4)}
    # n = 2 English, m = 4 French: centres (j - 0.5) * 2 / 4 = 0.25, 0.75, 1.25, 1.75
    assert diagonal_links(2, 4) == {(1, 1), (1, 2), (2, 3), (2, 4)}
    # n = 4, m = 2: centres 1 and 3 lie on a boundary and round half up, to words 2 and 4
    assert diagonal_links(4, 2) == {(2, 1), (4, 2)}


def test_argmax_and_threshold_links():
    weights = np.array([[0.6, 0.3, 0.1], [0.2, 0.4, 0.4], [0.1, 0.1, 0.8]])  # French x English
    assert argmax_links(weights) == {(1, 1), (2, 2), (3, 3)}  # ties go to the first English word
    assert threshold_links(weights, 0.3) == {(1, 1), (2, 1), (2, 2), (3, 2), (3, 3)}
    assert threshold_links(weights, 0.95) == argmax_links(weights)
