"""The sample sentencepiece learns from: every line of a small corpus, in order; a uniform, repeatable sample of a large one."""

from collections import Counter

from rnnsearch_plugin.data.schemes import sample

LINES = [f"line {index}" for index in range(20)]


def test_a_corpus_of_at_most_the_size_is_every_line_in_order():
    assert sample(iter(LINES), 20, seed=1) == LINES
    assert sample(iter(LINES), 25, seed=1) == LINES


def test_a_larger_corpus_gives_each_line_the_same_chance_and_the_same_sample_for_the_same_seed():
    assert sample(iter(LINES), 5, seed=3) == sample(iter(LINES), 5, seed=3) != sample(iter(LINES), 5, seed=4)
    drawn = Counter(line for seed in range(4000) for line in sample(iter(LINES), 5, seed))
    assert set(drawn) == set(LINES) and sum(drawn.values()) == 4000 * 5
    assert all(900 < count < 1100 for count in drawn.values()), drawn  # 1,000 expected, 28 the standard deviation
