"""Word links from soft alignments, their symmetrisation (intersection, union, Koehn et al. 2005's
grow-diag-final-and) and the Pharaoh files word aligners write, on hand-made links whose answers
are worked out by hand in each test. Links are (source, target), 0-based."""

import re

import numpy as np
import pytest

from rnnsearch_plugin.analysis.links import (
    SYMMETRISATIONS,
    argmax_links,
    grow_diag_final_and,
    intersect,
    pharaoh_line,
    read_pharaoh_links,
    threshold_links,
    union,
)


def test_argmax_and_threshold_links():
    weights = np.array([[0.6, 0.3, 0.1], [0.2, 0.4, 0.4], [0.1, 0.1, 0.8], [0.25, 0.25, 0.5]])  # 4 target x 3 source
    # row 1 ties between source words 1 and 2: the first wins
    assert argmax_links(weights) == {(0, 0), (1, 1), (2, 2), (2, 3)}
    # >= 0.3: (0,0) (1,0); (1,1) (2,1); (2,2); (2,3)
    assert threshold_links(weights, 0.3) == {(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (2, 3)}
    # rows 1 (largest 0.4) and 3 (largest 0.5) lie wholly below 0.55: target words 1 and 3 are left unaligned
    assert threshold_links(weights, 0.55) == {(0, 0), (2, 2)}


def test_links_of_empty_rows_and_matrices():
    # a row of zeros: argmax takes its first source word, no threshold above 0 links it
    weights = np.array([[0.0, 0.0], [0.1, 0.9]])  # 2 target x 2 source
    assert argmax_links(weights) == {(0, 0), (1, 1)}
    assert threshold_links(weights, 0.5) == {(1, 1)}
    # no target words: no links, whatever the source
    assert argmax_links(np.zeros((0, 3))) == set() and argmax_links(np.zeros((0, 0))) == set()
    assert threshold_links(np.zeros((0, 3)), 0.3) == set()
    for shape in [(2, 0), (3,)]:  # target words without source words; not a matrix
        with pytest.raises(ValueError, match=re.escape(f"weights must be a target x source matrix with source words, got shape {shape}")):
            argmax_links(np.zeros(shape))
        with pytest.raises(ValueError, match=re.escape(f"got shape {shape}")):
            threshold_links(np.zeros(shape), 0.3)


def test_intersect_and_union():
    forward, reverse = {(0, 0), (1, 1), (2, 1)}, {(0, 0), (1, 2)}
    assert intersect(forward, reverse) == {(0, 0)}
    assert union(forward, reverse) == {(0, 0), (1, 1), (2, 1), (1, 2)}
    assert SYMMETRISATIONS["intersect"](forward, reverse, 3, 3) == {(0, 0)}
    assert SYMMETRISATIONS["union"](forward, reverse, 3, 3) == {(0, 0), (1, 1), (2, 1), (1, 2)}


# Five source and five target words:
#            target 0  1  2  3  4
#   source 0        B  .  .  .  .      B both directions, F forward only, R reverse only
#   source 1        .  F  .  .  .
#   source 2        R  F  .  .  .
#   source 3        .  .  .  .  .
#   source 4        .  .  .  F  R
FORWARD = {(0, 0), (1, 1), (2, 1), (4, 3)}
REVERSE = {(0, 0), (2, 0), (4, 4)}


def test_grow_diag_final_and_worked_by_hand():
    # 1. intersection: {(0,0)}; union: the six marked points.
    # 2. grow-diag, scanning (source, target) in order:
    #    (0,0): its neighbours in Moses' order (-1,0) (0,-1) (1,0) (0,1) (-1,-1) (-1,1) (1,-1) (1,1): only the
    #    diagonal (1,1) is in the union, and both its words are unaligned: added.
    #    (1,1): (2,1) is in the union and source 2 unaligned: added; then its diagonal (2,0) is in the union,
    #    but source 2 (just now) and target 0 are both aligned: not added.
    #    (2,1): (2,0) again refused; nothing else in the union. A second pass adds nothing.
    #    Without the diagonal neighbours (plain "grow") (1,1) would not be reached from (0,0), and
    #    final-and below would add (1,1) but then refuse (2,1) (target 1 aligned): the diagonal is why (2,1) is in.
    # 3. final-and, forward first: (4,3): both words unaligned: added. Reverse: (2,0): both aligned; (4,4):
    #    source 4 is now aligned (by (4,3)), target 4 is not: final-and refuses it, where plain grow-diag-final
    #    (either word unaligned) would add it.
    assert grow_diag_final_and(FORWARD, REVERSE, 5, 5) == {(0, 0), (1, 1), (2, 1), (4, 3)}
    # The directions' order matters in final-and: reverse first adds (4,4), which then blocks the forward (4,3).
    assert grow_diag_final_and(REVERSE, FORWARD, 5, 5) == {(0, 0), (1, 1), (2, 1), (4, 4)}
    assert SYMMETRISATIONS["grow-diag-final-and"](FORWARD, REVERSE, 5, 5) == {(0, 0), (1, 1), (2, 1), (4, 3)}


def test_grow_diag_repeats_its_scan_until_nothing_is_added():
    # Three words each; intersection {(2,2)}; forward adds (1,1), reverse (0,1).
    # Pass 1 reaches (2,2) last (source 2) and adds its diagonal (1,1) (both words unaligned), whose
    # position (source 1) the scan has already passed. Pass 2 reaches (1,1) and adds its neighbour (0,1):
    # source 0 unaligned, target 1 aligned. A single pass would leave (0,1) to final-and, which refuses it
    # (target 1 aligned).
    assert grow_diag_final_and({(2, 2), (1, 1)}, {(2, 2), (0, 1)}, 3, 3) == {(2, 2), (1, 1), (0, 1)}


def test_grow_diag_final_and_of_directions_with_nothing_in_common():
    # No intersection: nothing to grow from; final-and takes the forward (0,1) and (1,0) (both words free
    # each time), then refuses the reverse (0,0) and (1,1), whose words are all aligned by then.
    assert grow_diag_final_and({(0, 1), (1, 0)}, {(0, 0), (1, 1)}, 2, 2) == {(0, 1), (1, 0)}


def test_final_and_needs_both_words_unaligned():
    # One direction empty: no intersection, nothing grows; final-and scans the forward links in order:
    # (0,0) both words free: added; (0,1) source 0 aligned: refused (plain grow-diag-final, either word free,
    # would add it: target 1 is free); (1,1) both free: added; (2,1) target 1 aligned: refused.
    forward = {(0, 0), (0, 1), (1, 1), (2, 1)}
    assert grow_diag_final_and(forward, set(), 3, 2) == {(0, 0), (1, 1)}
    # the same links as the reverse direction's: the forward one, empty, adds nothing first
    assert grow_diag_final_and(set(), forward, 3, 2) == {(0, 0), (1, 1)}
    assert grow_diag_final_and(set(), set(), 3, 2) == set()
    # no words at all (an empty sentence on either side): nothing to link
    assert grow_diag_final_and(set(), set(), 0, 4) == set()


def test_grow_diag_adds_a_neighbour_with_one_word_unaligned_never_one_with_both_aligned():
    # Three words each; both directions link (0,0) and (2,2); the forward also (1,0), the reverse (1,1).
    # grow-diag, the neighbours of (0,0) in Moses' order: (1,0), beside it, in the union, source 1 unaligned
    # (target 0 aligned): added; (1,1), diagonal, in the union, source 1 aligned by now but target 1 not: added.
    assert grow_diag_final_and({(0, 0), (2, 2), (1, 0)}, {(0, 0), (2, 2), (1, 1)}, 3, 3) == {(0, 0), (1, 0), (1, 1), (2, 2)}
    # Two words each, all four pairs in the union, only (0,0) in both. The neighbours of (0,0): (1,0), source 1
    # unaligned: added; (0,1), target 1 unaligned: added; then the diagonal (1,1): source 1 and target 1 both
    # aligned: refused, now and in every later scan; final-and refuses the forward (1,1) too.
    assert grow_diag_final_and({(0, 0), (0, 1), (1, 1)}, {(0, 0), (1, 0)}, 2, 2) == {(0, 0), (0, 1), (1, 0)}


@pytest.mark.parametrize("name", sorted(SYMMETRISATIONS))
def test_symmetrisations_refuse_links_outside_the_sentence_pair(name):
    # a reverse model's (target, source) links not transposed: 2 source words, 3 target words
    with pytest.raises(
        ValueError,
        match=re.escape(
            "the reverse links [(2, 0)] lie outside a pair of 2 source and 3 target "
            "words: give (source, target) links, 0-based, the reverse model's transposed"
        ),
    ):
        SYMMETRISATIONS[name]({(0, 0), (1, 2)}, {(0, 0), (2, 0)}, 2, 3)


# the sentence pairs the Pharaoh files below align: 3 + 3, 1 + 1 and 2 + 1 words
SOURCES, TARGETS = ["a b c", "d", "e f"], ["x y z", "w", "v"]


def test_pharaoh_lines_written_and_read_back(tmp_path):
    links = [{(2, 0), (0, 1), (0, 0), (1, 2)}, set(), {(0, 0)}]
    lines = [pharaoh_line(sentence) for sentence in links]
    assert lines == ["0-0 0-1 1-2 2-0", "", "0-0"]  # sorted by source word, then target word; no links, empty line
    path = tmp_path / "aligned.txt"
    path.write_text("\n".join(lines) + "\n")
    assert read_pharaoh_links(path, SOURCES, TARGETS) == links
    path.write_text("1-1 1-2 2-3 3-1\n\n1-1\n")
    assert read_pharaoh_links(path, SOURCES, TARGETS, one_based=True) == links


EXPECTED_LINK = "expected i-j (sure) or i?j / ipj (possible), i the source and j the target word position"


@pytest.mark.parametrize(
    "text, one_based, message",
    [
        (
            "0-0\n0-0\n",
            False,
            " has 2 lines but there are 3 source and 3 target sentences: give one line of links per sentence pair, in their order",
        ),
        (
            "0-0\n0-1\n0-0\n",
            False,
            ":2: link 0-1 is out of range: the source has 1 words and the target 1 (positions are "
            "0-based): link words of this sentence pair, the source word first",
        ),
        ("0-0\n\n2-0\n", False, ":3: link 2-0 is out of range: the source has 2 words and the target 1 (positions are 0-based)"),
        ("1-1\n\n1-1 0-1\n", True, ":3: link 0-1 is out of range: the source has 2 words and the target 1 (positions are 1-based)"),
        ("1-1\n1-1\n3-1\n", True, ":3: link 3-1 is out of range"),
        (
            "0-0 1?1\n\n0-0\n",
            False,
            ":1: possible links (i?j, ipj) belong in a gold standard: an alignment to score gives its links as i-j",
        ),
        ("0-0\n\n0:0\n", False, f":3: malformed link '0:0': {EXPECTED_LINK}"),
        ("0-0 0-0-1\n\n0-0\n", False, f":1: malformed link '0-0-1': {EXPECTED_LINK}"),
        ("0-0\n-1-0\n0-0\n", False, f":2: malformed link '-1-0': {EXPECTED_LINK}"),
        ("0-0\n\n0-a\n", False, f":3: malformed link '0-a': {EXPECTED_LINK}"),
    ],
)
def test_read_pharaoh_links_refuses_bad_input_in_one_line(tmp_path, text, one_based, message):
    path = tmp_path / "aligned.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as error:
        read_pharaoh_links(path, SOURCES, TARGETS, one_based)
    assert str(error.value).startswith(f"{path}{message}") and "\n" not in str(error.value)
