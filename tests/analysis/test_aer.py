"""The Alignment Error Rate (Och & Ney 2003), its links, and gold standards in the NAACL and
Pharaoh formats."""

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA

from rnnsearch_plugin.analysis.aer import (
    alignment_error_rate,
    argmax_links,
    check_positions,
    diagonal_links,
    read_naacl,
    read_pharaoh,
    threshold_links,
    transposed,
)

GOLD = Path(SHARED_DATA) / "alignment-gold"


# Sentence 1: S = {(1,1), (2,2)}, P = S + {(2,3)}; sentence 2: S = {(1,1)}, P = S + {(2,1), (3,2)}.
TOY_GOLD = "1 1 1 S\n1 2 2 S\n1 2 3 P\n2 1 1 S\n2 2 1 P\n2 3 2 P\n"


def test_aer_of_a_hand_made_gold_standard(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    gold = read_naacl(path)
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
    gold = read_naacl(path)
    result = alignment_error_rate({sentence: set(sure) for sentence, (sure, _) in gold.items()}, gold)
    assert (result["precision"], result["recall"], result["aer"]) == (1.0, 1.0, 0.0)


def test_aer_refuses_different_sentences(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    with pytest.raises(ValueError, match="missing \\[2\\]"):
        alignment_error_rate({1: {(1, 1)}}, read_naacl(path))
    with pytest.raises(ValueError, match="not in gold \\[3\\]"):
        alignment_error_rate({1: set(), 2: set(), 3: set()}, read_naacl(path))


def test_read_gold_names_the_file_and_line_of_a_malformed_link(tmp_path):
    path = tmp_path / "bad.wa"
    path.write_text("1 1 1 S\n1 2 X S\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: expected")):
        read_naacl(path)
    path.write_text("1 0 1 S\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:1: positions are 1-based")):
        read_naacl(path)


def test_read_gold_on_the_hansards_trial_data():
    gold = read_naacl(GOLD / "dev.wa.nonullalign")
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


def test_a_transposed_naacl_gold_scores_a_model_of_the_other_direction(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    gold = transposed(read_naacl(path))
    assert gold == {1: ({(1, 1), (2, 2)}, {(1, 1), (2, 2), (3, 2)}), 2: ({(1, 1)}, {(1, 1), (1, 2), (2, 3)})}
    predicted = {1: {(1, 1), (3, 2)}, 2: {(1, 2)}}  # (French, English) positions
    # transposed: |A| = 3, |S| = 3, |A∩S| = 1 ((1,1)), |A∩P| = 2 + 1 ((1,1), (3,2); (1,2)):
    # precision 3/3, recall 1/3, AER = 1 - (1 + 3) / (3 + 3) = 1/3
    assert alignment_error_rate(predicted, gold) == pytest.approx(
        {"precision": 1.0, "recall": 1 / 3, "aer": 1 / 3, "sentences": 2, "links": 3}
    )
    # against the gold as read, only (1,1) of sentence 1 would count: AER = 1 - (1 + 1) / 6 = 2/3
    assert alignment_error_rate(predicted, read_naacl(path))["aer"] == pytest.approx(2 / 3)


PHARAOH_SOURCES = ["a dog runs .", "two men"]
PHARAOH_TARGETS = ["un chien court .", "deux hommes sont"]
# Sentence 1: S = {(1,1), (2,2), (4,4)}, P = S + {(3,3)}; sentence 2: S = {(1,1), (2,3)}, P = S + {(1,2)}
# (1-based; the file counts from 0). Sentence 2's sure link "1-2" is also given as possible: sure wins.
PHARAOH = "0-0 1-1 2?2 3-3\n0-0 1-2 0p1 1?2\n"


def test_pharaoh_gold_with_sure_and_possible_links(tmp_path):
    path = tmp_path / "gold.talp"
    path.write_text(PHARAOH)
    gold = read_pharaoh(path, PHARAOH_SOURCES, PHARAOH_TARGETS)
    assert gold == {1: ({(1, 1), (2, 2), (4, 4)}, {(1, 1), (2, 2), (3, 3), (4, 4)}), 2: ({(1, 1), (2, 3)}, {(1, 1), (1, 2), (2, 3)})}
    # the diagonal: sentence 1 (4 x 4) the identity; sentence 2 (2 source, 3 target words)
    # floor((2j - 1) 2 / 6) + 1 = 1, 2, 2 for j = 1, 2, 3
    predicted = {1: diagonal_links(4, 4), 2: diagonal_links(2, 3)}
    assert predicted[2] == {(1, 1), (2, 2), (2, 3)}
    # |A| = 4 + 3 = 7, |S| = 3 + 2 = 5, |A∩S| = 3 + 2 = 5, |A∩P| = 4 + 2 = 6 ((2,2) of sentence 2 is in neither):
    # precision 6/7, recall 5/5, AER = 1 - (5 + 6) / (7 + 5) = 1/12
    assert alignment_error_rate(predicted, gold) == pytest.approx(
        {"precision": 6 / 7, "recall": 1.0, "aer": 1 / 12, "sentences": 2, "links": 7}
    )
    one_based = tmp_path / "one_based.talp"
    one_based.write_text("1-1 2-2 3?3 4-4\n1-1 2-3 1p2 2?3\n")
    assert read_pharaoh(one_based, PHARAOH_SOURCES, PHARAOH_TARGETS, one_based=True) == gold
    empty = tmp_path / "empty.talp"
    empty.write_text("0-0\n\n")  # a sentence pair without links
    assert read_pharaoh(empty, PHARAOH_SOURCES, PHARAOH_TARGETS)[2] == (set(), set())


@pytest.mark.parametrize(
    "text, message",
    [
        ("0-0 1-1\n", " has 1 lines but the gold source has 2 and the gold target 2: give one line per sentence pair in each"),
        ("0-0\n0-0 2-1\n", ":2: link 2-1 is out of range: the source has 2 words and the target 3 (positions are 0-based)"),
        ("0-0\n0-0 1-3\n", ":2: link 1-3 is out of range: the source has 2 words and the target 3"),
        (
            "0-0 1:1\n0-0\n",
            ":1: malformed link '1:1': expected i-j (sure) or i?j / ipj (possible), i the source and j the target word position",
        ),
        ("0-0 1-1-S\n0-0\n", ":1: malformed link '1-1-S'"),
    ],
)
def test_pharaoh_gold_refuses_bad_input_in_one_line(tmp_path, text, message):
    path = tmp_path / "gold.talp"
    path.write_text(text)
    with pytest.raises(ValueError) as error:
        read_pharaoh(path, PHARAOH_SOURCES, PHARAOH_TARGETS)
    assert str(error.value).startswith(f"{path}{message}") and "\n" not in str(error.value)


def test_naacl_links_outside_their_sentences_are_refused(tmp_path):
    path = tmp_path / "toy.wa"
    path.write_text(TOY_GOLD)
    check_positions(read_naacl(path), ["a b", "a b c"], ["a b c", "a b"], str(path))
    with pytest.raises(
        ValueError,
        match=re.escape(f"{path}: sentence 2, link 3 2 is out of range: the source has 2 words and the target 2 (positions are 1-based)"),
    ):
        check_positions(read_naacl(path), ["a b", "a b"], ["a b c", "a b"], str(path))
