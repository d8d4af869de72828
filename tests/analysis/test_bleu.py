"""BLEU as the paper reports it (Table 1, Figure 2) and chrF against sacreBLEU's command line; the
tokeniser by target language and the source lengths by the source language's unit."""

import sys

import pytest
from conftest import sacrebleu_cli
from sacremoses import MosesTokenizer

from rnnsearch_plugin.analysis import bleu
from rnnsearch_plugin.data.textio import read_lines, write_atomic


def test_bleu_functions_equal_sacrebleus_command_line_on_a_real_overlap(multi30k, tmp_path):
    """The tiny model scores near 0: check the same routes on a lossy system far from 0 and 100."""
    references = read_lines(multi30k / "raw" / "test.fr")
    hypotheses = [" ".join(line.split()[1:]) if i % 3 else line.lower() for i, line in enumerate(references)]
    write_atomic(tmp_path / "hyp", hypotheses)
    assert bleu.detokenised(hypotheses, references, "fr")[0] == pytest.approx(
        sacrebleu_cli(multi30k / "raw" / "test.fr", tmp_path / "hyp"), abs=6e-5
    )
    tokenizer = MosesTokenizer("fr")
    for name, lines in {"hyp.tok": hypotheses, "ref.tok": references}.items():
        write_atomic(tmp_path / name, [tokenizer.tokenize(line, escape=False, return_str=True) for line in lines])
    scores = {}
    for lowercase in (False, True):
        scores[lowercase] = sacrebleu_cli(
            tmp_path / "ref.tok", tmp_path / "hyp.tok", "--tokenize", "none", "--smooth-method", "none", *(["-lc"] if lowercase else [])
        )
        assert bleu.tokenised(hypotheses, references, "fr", lowercase) == pytest.approx(scores[lowercase], abs=6e-5)
    assert 30 < scores[False] < scores[True] < 99


def test_one_bucket_bleu_equals_corpus_bleu_and_buckets_partition_the_sentences(multi30k):
    references = read_lines(multi30k / "raw" / "valid.fr")
    hypotheses = [" ".join(line.split()[: max(1, len(line.split()) - 2)]) for line in references]  # a lossy system
    lengths = bleu.source_lengths(read_lines(multi30k / "raw" / "valid.en"), "en")
    (single,) = bleu.by_length(hypotheses, references, lengths, [], "fr")
    assert single["sentences"] == len(references)
    assert single["bleu"] == pytest.approx(bleu.detokenised(hypotheses, references, "fr")[0])
    parts = bleu.buckets(lengths, [5, 12, 20])
    assert sorted(i for b in parts for i in b.indices) == list(range(len(lengths)))
    assert all(b.low <= lengths[i] and (b.high is None or lengths[i] < b.high) for b in parts for i in b.indices)


def test_gap_interval_is_the_percentiles_of_sacrebleus_own_scores_of_the_resampled_buckets(multi30k):
    """The interval from summed per-sentence statistics against the slow route: sacreBLEU's corpus
    score of each resample's sentences, drawn with the same generator."""
    import numpy as np

    references = read_lines(multi30k / "raw" / "valid.fr")
    hypotheses = [" ".join(line.split()[: max(1, len(line.split()) - i % 4)]) for i, line in enumerate(references)]
    short, long = bleu.buckets(bleu.source_lengths(read_lines(multi30k / "raw" / "valid.en"), "en"), [12])
    interval = bleu.gap_interval(hypotheses, references, short.indices, long.indices, "fr", samples=40, seed=7)
    rng = np.random.default_rng(7)

    def scores(indices: list[int]) -> np.ndarray:
        picks = rng.choice(np.asarray(indices), size=(40, len(indices)))
        return np.array([bleu.detokenised([hypotheses[i] for i in row], [references[i] for i in row], "fr")[0] for row in picks])

    expected = np.percentile(scores(long.indices) - scores(short.indices), [2.5, 97.5])
    assert interval == pytest.approx(tuple(expected), abs=1e-6)
    point = (
        bleu.detokenised([hypotheses[i] for i in long.indices], [references[i] for i in long.indices], "fr")[0]
        - bleu.detokenised([hypotheses[i] for i in short.indices], [references[i] for i in short.indices], "fr")[0]
    )
    assert interval[0] < point < interval[1] and interval[1] - interval[0] > 0.1


CHINESE = ["我们今天去北京。", "他喜欢喝茶，不喜欢咖啡。", "这本书很有意思。"]
CHINESE_OUTPUT = ["我们明天去北京。", "他喜欢喝茶。", "这本书有意思。"]


def test_the_bleu_tokeniser_is_sacrebleus_choice_for_the_target_language(tmp_path, monkeypatch):
    """zh: sacreBLEU's own choice for an en-zh pair (its command line's -l), not 13a, which would
    leave each Chinese sentence about one token; fr: 13a; ja without MeCab: char, with a note."""
    write_atomic(tmp_path / "ref.zh", CHINESE)
    write_atomic(tmp_path / "hyp.zh", CHINESE_OUTPUT)
    score, signature = bleu.detokenised(CHINESE_OUTPUT, CHINESE, "zh")
    assert "|tok:zh|" in signature and bleu.sacrebleu_tokenizer("zh") == ("zh", None)
    assert score == pytest.approx(sacrebleu_cli(tmp_path / "ref.zh", tmp_path / "hyp.zh", "-l", "en-zh"), abs=6e-5)
    assert score > 10 * sacrebleu_cli(tmp_path / "ref.zh", tmp_path / "hyp.zh")  # 13a on the same lines
    assert "|tok:13a|" in bleu.detokenised(["Un chat."], ["Un chien."], "fr")[1]
    for module in ("MeCab", "ipadic"):  # as if sacrebleu[ja]'s mecab-python3 and ipadic were not installed
        monkeypatch.setitem(sys.modules, module, None)
    tokenizer, note = bleu.sacrebleu_tokenizer("ja")
    assert tokenizer == "char"
    assert note == (
        'sacreBLEU\'s ja-mecab tokenizer needs MeCab and ipadic (pip install "sacrebleu[ja]"): BLEU on characters (tok:char) instead'
    )
    japanese = ["私は学校に行きます。"]
    score, signature = bleu.detokenised(["私は学校へ行く。"], japanese, "ja")
    assert "|tok:char|" in signature
    write_atomic(tmp_path / "ref.ja", japanese)
    write_atomic(tmp_path / "hyp.ja", ["私は学校へ行く。"])
    assert score == pytest.approx(sacrebleu_cli(tmp_path / "ref.ja", tmp_path / "hyp.ja", "--tokenize", "char"), abs=6e-5)
    assert bleu.sacrebleu_tokenizer("th") == ("char", None)  # no spaces and no sacreBLEU tokeniser of its own


def test_chrf_is_sacrebleus_chrf2_and_refuses_unequal_counts(multi30k, tmp_path):
    references = read_lines(multi30k / "raw" / "test.fr")
    hypotheses = [" ".join(line.split()[1:]) if i % 3 else line.lower() for i, line in enumerate(references)]
    write_atomic(tmp_path / "hyp", hypotheses)
    score, signature = bleu.chrf(hypotheses, references)
    assert score == pytest.approx(sacrebleu_cli(multi30k / "raw" / "test.fr", tmp_path / "hyp", "-m", "chrf"), abs=6e-5)
    assert signature.startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|") and 40 < score < 99
    with pytest.raises(bleu.ScoringError, match="999 hypotheses for 1000 reference lines"):
        bleu.chrf(hypotheses[1:], references)


def test_source_lengths_are_in_the_source_languages_own_units():
    english = ["A man, in a red hat, sings.", "Two dogs"]
    assert bleu.source_lengths(english, "en") == [10, 2]  # Moses splits the commas and the full stop
    assert bleu.source_length_unit("en") == "words (Moses tokens)"
    assert bleu.source_lengths(CHINESE, "zh") == [len(line) for line in CHINESE] == [8, 12, 8]
    assert bleu.source_length_unit("zh") == "characters"
    korean = ["나는 학교에 갑니다.", "좋아요"]  # spaces between words, but no Moses rules for Korean
    assert bleu.source_lengths(korean, "ko") == [3, 1] and bleu.source_length_unit("ko") == "words (separated by spaces)"
    assert bleu.tokenised(CHINESE_OUTPUT, CHINESE, "zh") is None  # no Moses tokeniser: no multi-bleu.perl figure
