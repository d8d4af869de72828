"""tooling/fast_align.py (fast_align's model, Dyer, Chahuneau & Smith 2013, in numpy): one EM
iteration against a literal reading of the paper's equations, a target word and a source position
at a time in Python floats, on small random corpora (the posteriors, the expected counts, theta
after the variational M step, the alignments' expected log-likelihood and its gradient in the
tension), with blocks and chunks of every size; the tension's gradient steps raising that
likelihood; then fast_align run for real on 2,000 Hansards pairs with the alignment gold (every
link within its pair, each direction linking each word once, its links far better than the
diagonal's) and through ``statistical_alignments.py --aligner fast_align``, eflomal or not."""

import dataclasses
import json
import math
import random
import sys
from collections import defaultdict
from importlib.metadata import PackageNotFoundError

import numpy as np
import pytest
import torch
from conftest import REPO
from test_statistical_alignments import GOLD, PAIRS, hansards_pairs, links_of, prepared_folder, run, shared_words

from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_naacl
from rnnsearch_plugin.data.textio import read_lines

sys.path.insert(0, str(REPO / "tooling"))
import fast_align  # noqa: E402
import statistical_alignments  # noqa: E402

NULL = None  # the source word at position 0
P0, ALPHA = fast_align.SETTINGS.p0, fast_align.SETTINGS.alpha
Pair = tuple[list[str], list[str]]


# The paper's equations, literally: h, delta, the posteriors, the M steps' quantities.


def h(i: int, j: int, m: int, n: int) -> float:
    return -abs(i / m - j / n)


def delta(j: int, i: int, m: int, n: int, tension: float) -> float:
    """delta(a_i = j | i, m, n), j = 0 NULL."""
    if j == 0:
        return P0
    z = sum(math.exp(tension * h(i, k, m, n)) for k in range(1, n + 1))
    return (1 - P0) * math.exp(tension * h(i, j, m, n)) / z


def literal_posteriors(pairs: list[Pair], theta: dict, tension: float) -> tuple[list[list[list[float]]], float]:
    """(p(a_i = j | f, e) for each pair, target word i and source position j, 0 NULL; the corpus's
    log-likelihood, the sum of log p(f_i | e))."""
    posteriors, log_likelihood = [], 0.0
    for source, target in pairs:
        n, m, words = len(source), len(target), [NULL, *source]
        rows = []
        for i in range(1, m + 1):
            joint = [delta(j, i, m, n, tension) * theta[words[j], target[i - 1]] for j in range(n + 1)]
            log_likelihood += math.log(sum(joint))
            rows.append([value / sum(joint) for value in joint])
        posteriors.append(rows)
    return posteriors, log_likelihood


def literal_counts(pairs: list[Pair], posteriors: list[list[list[float]]]) -> dict:
    """E[c(e, f)]: each link's posterior added to its pair of words."""
    counts: dict = defaultdict(float)
    for (source, target), rows in zip(pairs, posteriors):
        for i, row in enumerate(rows, 1):
            for j, posterior in enumerate(row):
                counts[[NULL, *source][j], target[i - 1]] += posterior
    return counts


def literal_update(counts: dict) -> dict:
    """-v's M step, exp(digamma(c + alpha)) / exp(digamma(total + V_e alpha)), V_e the target words
    counted with e; torch's digamma."""
    totals, support = defaultdict(float), defaultdict(int)
    for (e, _), count in counts.items():
        totals[e] += count
        support[e] += 1
    return {(e, f): math.exp(digamma(count + ALPHA) - digamma(totals[e] + support[e] * ALPHA)) for (e, f), count in counts.items()}


def digamma(x: float) -> float:
    return torch.special.digamma(torch.tensor(x, dtype=torch.float64)).item()


def literal_objective(pairs: list[Pair], posteriors: list[list[list[float]]], tension: float) -> tuple[float, float]:
    """(Q, dQ/dlambda): sum q log delta(a_i = j), and the posterior's expected h less the model's,
    each target word's weighted by its posterior off NULL."""
    objective = gradient = 0.0
    for (source, target), rows in zip(pairs, posteriors):
        n, m = len(source), len(target)
        for i, row in enumerate(rows, 1):
            model_feature = sum(delta(j, i, m, n, tension) / (1 - P0) * h(i, j, m, n) for j in range(1, n + 1))
            for j, posterior in enumerate(row):
                objective += posterior * math.log(delta(j, i, m, n, tension))
                if j:
                    gradient += posterior * (h(i, j, m, n) - model_feature)
    return objective, gradient


def random_corpus(seed: int, count: int = 30) -> tuple[list[Pair], dict]:
    """``count`` pairs of 1 to 7 words a side from small vocabularies (words repeat within a
    sentence; a source word co-occurs with some of the 20 target words only), and a random theta
    (not normalised: the E step needs none) for every pair of words that co-occur, NULL included."""
    rng = random.Random(seed)
    pairs = [
        ([f"s{rng.randrange(8)}" for _ in range(rng.randint(1, 7))], [f"t{rng.randrange(20)}" for _ in range(rng.randint(1, 7))])
        for _ in range(count)
    ]
    theta: dict = {}
    for source, target in pairs:
        for e in [NULL, *source]:
            for f in target:
                theta.setdefault((e, f), rng.uniform(0.05, 1.0))
    return pairs, theta


def model_corpus(pairs: list[Pair], theta: dict) -> tuple[fast_align.Corpus, np.ndarray]:
    """The module's corpus of ``pairs`` and ``theta`` in its order of pairs (a pair of words the
    literal theta lacks: KeyError)."""
    data = fast_align.corpus([" ".join(source) for source, _ in pairs], [" ".join(target) for _, target in pairs])
    return data, np.array([theta[key] for key in words_of_pairs(data)])


def words_of_pairs(data: fast_align.Corpus) -> list[tuple]:
    return [(data.source_words[e], data.target_words[f]) for e, f in zip(data.pair_source.tolist(), data.pair_target.tolist())]


@pytest.fixture(params=[None, (7, 30), (40, 120)], ids=["default blocks", "a sentence a block", "small blocks and chunks"])
def block_sizes(request, monkeypatch):
    """BLOCK_LINKS and CHUNK_LINKS: the defaults (one block a shape, one chunk), or so small that
    shapes split into blocks, blocks into chunks, and the keys merge four chunks at a time."""
    if request.param:
        monkeypatch.setattr(fast_align, "BLOCK_LINKS", request.param[0])
        monkeypatch.setattr(fast_align, "CHUNK_LINKS", request.param[1])


@pytest.mark.parametrize("seed", [1, 2])
def test_one_em_iteration_is_the_papers_equations(seed, block_sizes):
    pairs, theta = random_corpus(seed)
    tension = 2.5 + seed
    data, theta_array = model_corpus(pairs, theta)
    assert set(words_of_pairs(data)) == set(theta)  # every pair of words that co-occur, once
    found = fast_align.expectations(data, theta_array, tension, P0)
    posteriors, log_likelihood = literal_posteriors(pairs, theta, tension)
    counts = literal_counts(pairs, posteriors)
    np.testing.assert_allclose(found.counts, [counts[key] for key in words_of_pairs(data)], rtol=1e-12)
    assert found.log_likelihood == pytest.approx(log_likelihood, rel=1e-12)
    expected = literal_objective(pairs, posteriors, tension)
    objective = fast_align.alignment_objective(fast_align.positions(found.shapes), tension, P0)
    np.testing.assert_allclose(objective, expected, rtol=1e-10, atol=1e-9)
    updated = literal_update(counts)
    np.testing.assert_allclose(
        fast_align.variational_update(data, found.counts, ALPHA), [updated[key] for key in words_of_pairs(data)], rtol=1e-9
    )


def test_digamma_is_torchs():
    x = np.concatenate([np.logspace(-3, 5, 200), [ALPHA, 1.0, 1.4616321449683622, 6.0, 7.5]])
    np.testing.assert_allclose(fast_align.digamma(x), torch.special.digamma(torch.from_numpy(x)).numpy(), rtol=1e-10, atol=1e-10)


def test_each_target_words_posteriors_sum_to_one_null_included(block_sizes):
    pairs, theta = random_corpus(3)
    pairs += [([], ["t1", "t2"]), (["s1"], [])]  # no source word, no target word: nothing to align, and unaligned
    data, theta_array = model_corpus(pairs, theta)
    seen = []
    for chunk, posterior, _ in fast_align.posterior_chunks(data, theta_array, 4.0, P0):
        for block in chunk.blocks:
            view = chunk.view(posterior, block)
            assert (view > 0).all() and np.allclose(view.sum(axis=2), 1.0, rtol=0, atol=1e-12)
            seen += block.sentences.tolist()
    assert sorted(seen) == list(range(len(pairs) - 2))  # every pair with words on both sides, once


@pytest.mark.parametrize("step", [fast_align.SETTINGS.tension_step, 1e4], ids=["fast_align's step", "a step too long, halved"])
def test_the_tension_steps_raise_the_expected_log_likelihood(step, block_sizes):
    pairs, theta = random_corpus(4, count=40)
    data, theta_array = model_corpus(pairs, theta)
    start = fast_align.SETTINGS.tension
    found = fast_align.expectations(data, theta_array, start, P0)
    tension = fast_align.optimised_tension(found.shapes, start, dataclasses.replace(fast_align.SETTINGS, tension_step=step))
    posteriors, _ = literal_posteriors(pairs, theta, start)  # the E step's, held fixed
    before, gradient = literal_objective(pairs, posteriors, start)
    after, _ = literal_objective(pairs, posteriors, tension)
    assert after > before and np.sign(tension - start) == np.sign(gradient) != 0
    epsilon = 1e-5  # the literal gradient is the literal objective's derivative
    above, below = (literal_objective(pairs, posteriors, start + sign * epsilon)[0] for sign in (1, -1))
    assert gradient == pytest.approx((above - below) / (2 * epsilon), rel=1e-6)


def test_viterbi_links_each_target_word_to_its_literal_argmax(block_sizes):
    pairs, theta = random_corpus(6)
    pairs += [([], ["t1", "t2"]), (["s1"], [])]  # nothing to link
    data, theta_array = model_corpus(pairs, theta)
    best = fast_align.viterbi(data, fast_align.Model(theta_array, 3.0, []), P0)
    forward, reverse = (list(fast_align.pharaoh_lines(data, best, reverse)) for reverse in (False, True))
    posteriors, _ = literal_posteriors(pairs[:-2], theta, 3.0)
    chosen = [[row.index(max(row)) for row in rows] for rows in posteriors]  # the first of equal ones, NULL first
    expected = [{(j - 1, i) for i, j in enumerate(sentence) if j > 0} for sentence in chosen] + [set(), set()]
    assert [pharaoh(line) for line in forward] == expected  # "j-i", the source word first
    assert [pharaoh(line) for line in reverse] == [{(i, j) for j, i in links} for links in expected]  # the model's target word first


def pharaoh(line: str) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in (link.split("-") for link in line.split())}


def test_the_first_pass_leaves_the_tension_where_it_is():
    """theta uniform: the posteriors are delta itself, and the model's expected h is the posterior's."""
    pairs, theta = random_corpus(5)
    data, _ = model_corpus(pairs, theta)
    found = fast_align.expectations(data, np.ones(len(data.pair_source)), 4.0, P0)
    assert fast_align.alignment_objective(fast_align.positions(found.shapes), 4.0, P0)[1] == pytest.approx(0.0, abs=1e-9)
    assert fast_align.optimised_tension(found.shapes, 4.0) == pytest.approx(4.0, abs=1e-9)


@pytest.fixture(scope="module")
def hansards() -> dict[str, list[str]]:
    return hansards_pairs()


@pytest.fixture(scope="module")
def gold_corpus(hansards) -> dict[str, list[str]]:
    """{lang: the 2,000 Hansards pairs in the gold's tokenisation, then the gold's 37}, as
    statistical_alignments.py aligns them."""
    gold = statistical_alignments.gold_pairs(GOLD)
    return {lang: [statistical_alignments.normalise(line, lang) for line in hansards[lang]] + gold[lang] for lang in gold}


@pytest.fixture(scope="module")
def fast_align_links(gold_corpus, tmp_path_factory) -> dict[str, list[set[tuple[int, int]]]]:
    """{direction: each pair's links}, English the source, every link checked within its pair."""
    folder, found = tmp_path_factory.mktemp("fast_align"), {}
    for direction in fast_align.DIRECTIONS:
        fast_align.run_fast_align(gold_corpus["en"], gold_corpus["fr"], direction, folder / direction)
        found[direction] = links_of(folder / direction, gold_corpus["en"], gold_corpus["fr"])
    return found


def test_fast_align_links_the_hansards_gold_far_better_than_the_diagonal(fast_align_links, gold_corpus):
    forward, reverse = fast_align_links["forward"], fast_align_links["reverse"]
    assert all(len({j for _, j in links}) == len(links) for links in forward)  # each French word from one English word
    assert all(len({i for i, _ in links}) == len(links) for links in reverse)  # each English word to one French word
    assert sum(map(len, forward)) > 0.7 * sum(len(line.split()) for line in gold_corpus["fr"])  # NULL wins for a few only
    english, french = gold_corpus["en"][PAIRS:], gold_corpus["fr"][PAIRS:]
    gold = read_naacl(GOLD / "dev.wa.nonullalign")
    diagonal = {n: diagonal_links(len(e.split()), len(f.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    predicted = {n: {(i + 1, j + 1) for i, j in f & r} for n, (f, r) in enumerate(zip(forward[PAIRS:], reverse[PAIRS:]), 1)}
    assert alignment_error_rate(predicted, gold)["aer"] < alignment_error_rate(diagonal, gold)["aer"] - 0.15


@pytest.mark.parametrize("no_packages", [False, True], ids=["packages as installed", "no eflomal"])
def test_statistical_alignments_runs_fast_align_end_to_end(no_packages, hansards, fast_align_links, tmp_path, monkeypatch):
    if no_packages:  # as if no package were installed: fast_align must not ask for eflomal

        def version(package: str) -> str:
            raise PackageNotFoundError(package)

        monkeypatch.setattr(statistical_alignments, "version", version)
    prepared = prepared_folder(tmp_path / "fr-en", hansards, ("fr", "en"))  # the gold stays English-French
    run(monkeypatch, "--prepared", prepared, "--aligner", "fast_align", "--gold", GOLD, "--out", tmp_path / "out")
    english, french = read_lines(GOLD / "dev.e"), read_lines(GOLD / "dev.f")
    found = {name: links_of(tmp_path / "out" / f"fast_align.{name}", english, french) for name in statistical_alignments.OUTPUTS}
    assert found["forward"] == fast_align_links["forward"][PAIRS:] and found["reverse"] == fast_align_links["reverse"][PAIRS:]
    for forward, reverse, intersect, union, grown in zip(*found.values()):
        assert intersect == forward & reverse and union == forward | reverse and intersect <= grown <= union
    report = json.loads((tmp_path / "out" / "fast_align.json").read_text())
    assert (report["aligner"], report["training_pairs"], report["gold_pairs"], report["source"]) == ("fast_align", PAIRS, 37, "en")
    assert report["settings"] == json.loads(json.dumps(dataclasses.asdict(fast_align.SETTINGS))) and "eflomal" not in report
    assert set(report["seconds"]) == {"read and normalise", "align forward", "align reverse", "symmetrise"}
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(
        f"fast_align.{name}" for name in (*statistical_alignments.OUTPUTS, "json")
    )
    if no_packages:
        with pytest.raises(SystemExit, match="eflomal is not installed"):
            run(monkeypatch, "--prepared", prepared, "--gold", GOLD, "--out", tmp_path / "eflomal")


def test_training_alignments_with_fast_align_link_each_prepared_pair_in_its_direction(hansards, tmp_path, monkeypatch):
    prepared = prepared_folder(tmp_path / "fr-en", hansards, ("fr", "en"))
    out = tmp_path / "train.align"
    run(monkeypatch, "--prepared", prepared, "--aligner", "fast_align", "--training-alignments", out)
    found = links_of(out, hansards["fr"], hansards["en"])  # line for line, every link within its pair, the French word first
    anchors = [shared_words(source, target) for source, target in zip(hansards["fr"], hansards["en"])]
    kept = sum(len(links & anchor) for links, anchor in zip(found, anchors)) / sum(map(len, anchors))
    assert kept > 0.9  # the words written alike on both sides: a transposed file would miss them
    report = json.loads(out.with_name("train.align.json").read_text())
    assert (report["aligner"], report["training_pairs"], report["source"], report["target"]) == ("fast_align", PAIRS, "fr", "en")
    assert report["links"] == sum(map(len, found)) and report["symmetrisation"] == "grow-diag-final-and"
