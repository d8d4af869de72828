"""BLEU as the paper reports it (Table 1, Figure 2) against sacreBLEU's command line."""
import pytest
from sacremoses import MosesTokenizer

from conftest import sacrebleu_cli
from rnnsearch_plugin.analysis import bleu
from rnnsearch_plugin.data.textio import read_lines, write_atomic


def test_bleu_functions_equal_sacrebleus_command_line_on_a_real_overlap(multi30k, tmp_path):
    """The tiny model scores near 0: check the same routes on a lossy system far from 0 and 100."""
    references = read_lines(multi30k / "raw" / "test.fr")
    hypotheses = [" ".join(line.split()[1:]) if i % 3 else line.lower() for i, line in enumerate(references)]
    write_atomic(tmp_path / "hyp", hypotheses)
    assert bleu.detokenised(hypotheses, references)[0] == pytest.approx(
        sacrebleu_cli(multi30k / "raw" / "test.fr", tmp_path / "hyp"), abs=6e-5)
    tokenizer = MosesTokenizer("fr")
    for name, lines in {"hyp.tok": hypotheses, "ref.tok": references}.items():
        write_atomic(tmp_path / name, [tokenizer.tokenize(line, escape=False, return_str=True) for line in lines])
    scores = {}
    for lowercase in (False, True):
        scores[lowercase] = sacrebleu_cli(tmp_path / "ref.tok", tmp_path / "hyp.tok", "--tokenize", "none",
                                          "--smooth-method", "none", *(["-lc"] if lowercase else []))
        assert bleu.tokenised(hypotheses, references, "fr", lowercase) == pytest.approx(scores[lowercase], abs=6e-5)
    assert 30 < scores[False] < scores[True] < 99


def test_one_bucket_bleu_equals_corpus_bleu_and_buckets_partition_the_sentences(multi30k):
    references = read_lines(multi30k / "raw" / "valid.fr")
    hypotheses = [" ".join(line.split()[: max(1, len(line.split()) - 2)]) for line in references]  # a lossy system
    lengths = bleu.source_lengths(read_lines(multi30k / "raw" / "valid.en"))
    (single,) = bleu.by_length(hypotheses, references, lengths, [])
    assert single["sentences"] == len(references)
    assert single["bleu"] == pytest.approx(bleu.detokenised(hypotheses, references)[0])
    parts = bleu.buckets(lengths, [5, 12, 20])
    assert sorted(i for b in parts for i in b.indices) == list(range(len(lengths)))
    assert all(b.low <= lengths[i] and (b.high is None or lengths[i] < b.high) for b in parts for i in b.indices)


def test_gap_interval_is_the_percentiles_of_sacrebleus_own_scores_of_the_resampled_buckets(multi30k):
    """The interval from summed per-sentence statistics against the slow route: sacreBLEU's corpus
    score of each resample's sentences, drawn with the same generator."""
    import numpy as np

    references = read_lines(multi30k / "raw" / "valid.fr")
    hypotheses = [" ".join(line.split()[: max(1, len(line.split()) - i % 4)]) for i, line in enumerate(references)]
    short, long = bleu.buckets(bleu.source_lengths(read_lines(multi30k / "raw" / "valid.en")), [12])
    interval = bleu.gap_interval(hypotheses, references, short.indices, long.indices, samples=40, seed=7)
    rng = np.random.default_rng(7)

    def scores(indices: list[int]) -> np.ndarray:
        picks = rng.choice(np.asarray(indices), size=(40, len(indices)))
        return np.array([bleu.detokenised([hypotheses[i] for i in row], [references[i] for i in row])[0] for row in picks])

    expected = np.percentile(scores(long.indices) - scores(short.indices), [2.5, 97.5])
    assert interval == pytest.approx(tuple(expected), abs=1e-6)
    point = bleu.detokenised([hypotheses[i] for i in long.indices], [references[i] for i in long.indices])[0] - \
        bleu.detokenised([hypotheses[i] for i in short.indices], [references[i] for i in short.indices])[0]
    assert interval[0] < point < interval[1] and interval[1] - interval[0] > 0.1
