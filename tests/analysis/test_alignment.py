"""Figure 3 as data: pieces merged into words, and fairseq-generate's soft alignments read back."""

import numpy as np
import pytest
import torch
from fairseq.utils import extract_soft_alignment

from rnnsearch_plugin.analysis.aer import argmax_links
from rnnsearch_plugin.analysis.alignment import merge_groups, merge_pieces, parse_soft_alignments, word_groups


def test_word_groups():
    assert word_groups(["▁the", "▁kit", "ten", "</s>"], "spm") == [0, 1, 1, 2]
    assert word_groups(["un@@", "believ@@", "able", "!", "</s>"], "bpe") == [0, 0, 0, 1, 2]
    assert word_groups(["kit@@", "</s>"], "bpe") == [0, 1]
    assert word_groups(["a", "b"], "word") == [0, 1]
    with pytest.raises(ValueError, match="unknown scheme"):
        word_groups(["a"], "wordpiece")


# rows: target pieces, columns: source pieces
PIECE_WEIGHTS = np.array(
    [
        [0.7, 0.1, 0.1, 0.1],
        [0.1, 0.5, 0.2, 0.2],
        [0.3, 0.1, 0.4, 0.2],
        [0.0, 0.0, 0.2, 0.8],
    ]
)


def test_merge_spm_pieces_by_hand():
    merged, source, target = merge_pieces(PIECE_WEIGHTS, ["▁the", "▁kit", "ten", "</s>"], ["▁le", "▁cha", "ton", "</s>"], "spm")
    assert (source, target) == (["the", "kitten", "</s>"], ["le", "chaton", "</s>"])
    # columns kit + ten summed; rows cha [0.1, 0.7, 0.2] and ton [0.3, 0.5, 0.2] averaged
    np.testing.assert_allclose(merged, [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.0, 0.2, 0.8]], atol=1e-12)


def test_merge_bpe_pieces_by_hand():
    weights = np.array(
        [
            [0.2, 0.3, 0.4, 0.1],
            [0.1, 0.6, 0.2, 0.1],
            [0.0, 0.1, 0.6, 0.3],
            [0.0, 0.0, 0.1, 0.9],
        ]
    )
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
    lines = [
        "S-3\tw5 w6",
        "H-3\t-1.5\tw7 w8 w9",
        fairseq_soft_line(3, best),
        fairseq_soft_line(3, second),
        fairseq_soft_line(0, best),
        fairseq_soft_line(5, []),
    ]
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
