"""Figure 3 as data and as a picture, and the Alignment Error Rate (Och & Ney 2003)."""
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from fairseq.utils import extract_soft_alignment
from matplotlib.image import imread

from rnnsearch_plugin.analysis.aer import (
    alignment_error_rate, argmax_links, diagonal_links, read_gold, threshold_links,
)
from rnnsearch_plugin.analysis.alignment import merge_groups, merge_pieces, parse_soft_alignments, word_groups
from rnnsearch_plugin.analysis.heatmap import plot_alignment, plot_alignment_grid

GOLD = Path(os.environ.get("SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) / "alignment-gold"

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


def test_word_groups():
    assert word_groups(["▁the", "▁kit", "ten", "</s>"], "spm") == [0, 1, 1, 2]
    assert word_groups(["un@@", "believ@@", "able", "!", "</s>"], "bpe") == [0, 0, 0, 1, 2]
    assert word_groups(["kit@@", "</s>"], "bpe") == [0, 1]
    assert word_groups(["a", "b"], "word") == [0, 1]
    with pytest.raises(ValueError, match="unknown scheme"):
        word_groups(["a"], "wordpiece")


# rows: target pieces, columns: source pieces
PIECE_WEIGHTS = np.array([
    [0.7, 0.1, 0.1, 0.1],
    [0.1, 0.5, 0.2, 0.2],
    [0.3, 0.1, 0.4, 0.2],
    [0.0, 0.0, 0.2, 0.8],
])


def test_merge_spm_pieces_by_hand():
    merged, source, target = merge_pieces(PIECE_WEIGHTS, ["▁the", "▁kit", "ten", "</s>"],
                                          ["▁le", "▁cha", "ton", "</s>"], "spm")
    assert (source, target) == (["the", "kitten", "</s>"], ["le", "chaton", "</s>"])
    # columns kit + ten summed; rows cha [0.1, 0.7, 0.2] and ton [0.3, 0.5, 0.2] averaged
    np.testing.assert_allclose(merged, [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.0, 0.2, 0.8]], atol=1e-12)


def test_merge_bpe_pieces_by_hand():
    weights = np.array([
        [0.2, 0.3, 0.4, 0.1],
        [0.1, 0.6, 0.2, 0.1],
        [0.0, 0.1, 0.6, 0.3],
        [0.0, 0.0, 0.1, 0.9],
    ])
    merged, source, target = merge_pieces(weights, ["un@@", "believ@@", "able", "!"], ["in@@", "croy@@", "able", "!"], "bpe")
    assert (source, target) == (["unbelievable", "!"], ["incroyable", "!"])
    # rows in/croy/able -> [0.9, 0.1], [0.9, 0.1], [0.7, 0.3], averaged to [5/6, 1/6]
    np.testing.assert_allclose(merged, [[5 / 6, 1 / 6], [0.1, 0.9]], atol=1e-12)


def test_merged_rows_stay_distributions():
    generator = np.random.default_rng(0)
    source = ["▁a", "b", "c", "▁d", "▁e", "f", "</s>"]
    target = ["▁u", "▁v", "w", "▁x", "y", "z", "</s>"]
    weights = generator.dirichlet(np.ones(len(source)), size=len(target))  # T x S, rows sum to 1
    merged, source_words, target_words = merge_pieces(weights, source, target, "spm")
    assert merged.shape == (len(target_words), len(source_words)) == (4, 4)
    np.testing.assert_allclose(merged.sum(axis=1), 1.0, atol=1e-12)
    assert merge_pieces(weights, source, target, "word")[0].shape == (7, 7)


def test_merge_groups_leaves_out_end_of_sentence_and_words_without_pieces():
    # "the kitten" / "le chaton": pieces ▁the ▁kit ten </s> and ▁le ▁cha ton </s>; </s> cut off
    weights = merge_groups(PIECE_WEIGHTS[:3, :3], [0, 1, 1], [0, 1, 1], 2, 2)
    np.testing.assert_allclose(weights, [[0.7, 0.2], [0.2, 0.6]], atol=1e-12)
    assert argmax_links(weights) == {(1, 1), (2, 2)}
    padded = merge_groups(PIECE_WEIGHTS[:3, :3], [0, 2, 2], [0, 1, 1], 3, 2)  # French word 2 has no piece
    np.testing.assert_allclose(padded[1], [0.0, 0.0])


def fairseq_soft_line(sample_id: int, alignment: list[list[str]]) -> str:
    """The A- line exactly as fairseq_cli/generate.py prints it for --print-alignment soft."""
    return "A-{}\t{}".format(sample_id, " ".join([",".join(src_probs) for src_probs in alignment]))


def test_parse_soft_alignments_round_trips_fairseq_output():
    pad, eos = 1, 2
    source = torch.tensor([pad, 5, 6, eos])  # left-padded source, its </s> last
    target = torch.tensor([7, 8, 9, eos, pad])  # right-padded hypothesis, its </s> included
    generator = torch.Generator().manual_seed(0)
    attention = torch.softmax(torch.randn(5, 3, generator=generator), dim=-1)  # T x S real positions
    attention = torch.cat([torch.zeros(5, 1), attention], dim=1)  # T x S with the pad column
    best = extract_soft_alignment(attention, source, target, pad, eos)
    second = extract_soft_alignment(attention.flip(0), source, target, pad, eos)
    lines = ["S-3\tw5 w6", "H-3\t-1.5\tw7 w8 w9", fairseq_soft_line(3, best), fairseq_soft_line(3, second),
             fairseq_soft_line(0, best), fairseq_soft_line(5, [])]
    parsed = parse_soft_alignments(line + "\n" for line in lines)
    assert sorted(parsed) == [0, 3, 5] and parsed[5].shape == (0, 0)
    assert parsed[3].shape == (4, 3)  # 3 target tokens + </s>, 2 source tokens + </s>
    np.testing.assert_allclose(parsed[3], attention[:4, 1:].numpy(), atol=5e-7)  # the first hypothesis
    np.testing.assert_allclose(parsed[3].sum(axis=1), 1.0, atol=2e-6)


def test_parse_soft_alignments_names_the_malformed_line():
    with pytest.raises(ValueError, match="line 2: not comma-separated"):
        parse_soft_alignments(["H-0\t-1.0\tw", "A-0\t0-0 1-1"])
    with pytest.raises(ValueError, match="line 1: rows of different lengths"):
        parse_soft_alignments(["A-0\t0.5,0.5 1.0"])
    with pytest.raises(ValueError, match="line 3: expected"):
        parse_soft_alignments(["S-0\tw", "", "A-x\t1.0"])


def toy_weights() -> np.ndarray:
    """5 target x 7 source words; cell (0, 0) is 1 (white), cell (1, 0) is 0 (black)."""
    weights = np.full((5, 7), 0.5)
    weights[0, 0], weights[1, 0] = 1.0, 0.0
    return weights


SOURCE_WORDS = ["the", "agreement", "on", "the", "European", "area", "</s>"]
TARGET_WORDS = ["l'", "accord", "sur", "la", "zone"]


def test_plot_alignment_png_has_the_documented_size_and_grayscale(tmp_path):
    path = tmp_path / "figure3.png"
    plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, path)
    image = imread(path)
    # width 1.5 + 0.3 * 7 + 0.2 = 3.8 in, height 1.5 + 0.3 * 5 + 0.2 = 3.2 in, at 100 dpi
    assert image.shape[:2] == (320, 380)
    # cell (row r, column c) centred at x = (1.5 + 0.3 (c + 0.5)) in, y = (1.5 + 0.3 (r + 0.5)) in
    np.testing.assert_allclose(image[165, 165, :3], 1.0, atol=0.02)  # weight 1: white
    np.testing.assert_allclose(image[195, 165, :3], 0.0, atol=0.02)  # weight 0: black
    np.testing.assert_allclose(image[195, 195, :3], 0.5, atol=0.02)  # weight 0.5: mid gray
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind

    titled = tmp_path / "titled.png"
    plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, titled, title="(a)")
    assert imread(titled).shape[:2] == (360, 380)  # + 0.4 in for the title


def test_plot_alignment_svg_and_grid(tmp_path):
    svg = tmp_path / "figure3.svg"
    plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, svg, title="(a)")
    text = svg.read_text()
    assert text.startswith("<?xml") and "<svg" in text and 'width="273.6pt"' in text  # 3.8 in
    grid = tmp_path / "grid.png"
    items = [(toy_weights(), SOURCE_WORDS, TARGET_WORDS, "(a)"), (toy_weights()[:3], SOURCE_WORDS, TARGET_WORDS[:3], "(b)"),
             (toy_weights(), SOURCE_WORDS, TARGET_WORDS, None)]
    plot_alignment_grid(items, grid)
    # two columns of 3.8 in; rows 3.6 in (titled 5-word panel) and 3.2 in (untitled one)
    assert imread(grid).shape[:2] == (680, 760)
    with pytest.raises(ValueError, match="2 source labels"):
        plot_alignment(toy_weights(), SOURCE_WORDS[:2], TARGET_WORDS, tmp_path / "bad.png")
    with pytest.raises(ValueError, match="png or .svg"):
        plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, tmp_path / "figure.pdf")
