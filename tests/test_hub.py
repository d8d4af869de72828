"""The Python API (``hub.py``) on the session's tiny checkpoint: translations, forced decoding and
alignments, each against another route to the same numbers."""

import itertools
import math
import re
from collections.abc import Iterator

import pytest
import torch
from conftest import fairseq_decode, run
from matplotlib.image import imread

from rnnsearch_plugin import load
from rnnsearch_plugin.analysis.alignment import parse_soft_alignments
from rnnsearch_plugin.analysis.corpus_alignment import align_corpus
from rnnsearch_plugin.data.textio import read_lines
from rnnsearch_plugin.hub import paired


def test_python_api_loads_the_checkpoint_and_translates(multi30k, checkpoint):
    from rnnsearch_plugin import RNNSearchModel

    hub = RNNSearchModel.from_pretrained(
        str(checkpoint.parent),
        checkpoint_file=checkpoint.name,
        data_name_or_path=str(multi30k / "bin"),
        bpe="sentencepiece",
        sentencepiece_model=str(multi30k / "spm" / "spm.model"),
        source_lang="en",
        target_lang="fr",
    )
    sentences = [f"A man with {n} dogs is riding a bike ." for n in range(13)]  # 13 = 8 + 5
    translations = hub.translate(sentences, beam=3)
    assert len(translations) == 13 and all(isinstance(t, str) and t for t in translations)
    assert isinstance(hub.models[0], RNNSearchModel)
    # bad input: one translation per sentence, in order; the over-long one truncated to the limit
    odd = ["", "   ", "中文 zzqqxx ☃", "dog " * 1100, sentences[0]]
    odd_translations = hub.translate(odd, beam=3)
    assert len(odd_translations) == len(odd) and odd_translations[-1] == translations[0]
    assert len(hub.encode(odd[3])) == 1024 and hub.encode(odd[3])[-1] == hub.src_dict.eos()


def test_the_reference_engine_is_one_override_away_and_translates_alike(hub, multi30k, checkpoint):
    """load(..., engine="reference") runs models/ as written (to step through in a debugger): the
    same translations and scores as the CPU engine the default builds here."""
    from rnnsearch_plugin.models.decoder import ConditionalGRUDecoder
    from rnnsearch_plugin.speed.cpu import CpuDecoder

    reference = load(checkpoint, multi30k / "bin", engine="reference")
    assert type(hub.models[0].decoder) is CpuDecoder and type(reference.models[0].decoder) is ConditionalGRUDecoder
    sentences = [f"A man with {n} dogs is riding a bike ." for n in range(5)]
    translations = hub.translate(sentences, beam=3)
    assert reference.translate(sentences, beam=3) == translations
    scores = [result["score"] for result in hub.score(sentences, translations)]
    # float32 sums near 365, whose neighbours lie 3e-5 apart: equal to a few units in the last place
    assert [result["score"] for result in reference.score(sentences, translations)] == pytest.approx(scores, rel=1e-6)


def test_the_no_unk_search_never_emits_unk_even_when_the_model_prefers_it(hub):
    sentences = ["A man in a blue shirt is standing on a ladder.", "Two dogs play in the snow.", "A girl eats."]
    bias = hub.models[0].decoder.deep_output.output_projection.bias
    original = bias.detach().clone()
    unk = hub.tgt_dict.unk()
    try:
        with torch.no_grad():
            bias[unk] += 30.0  # the model now prefers <unk> at every step
        free = hub.generate([hub.encode(s) for s in sentences], beam=4)
        forbidden = hub.generate([hub.encode(s) for s in sentences], beam=4, unkpen=math.inf)
    finally:
        with torch.no_grad():
            bias.copy_(original)
    assert all(unk in hypos[0]["tokens"].tolist() for hypos in free)
    assert all(unk not in h["tokens"].tolist() for hypos in forbidden for h in hypos)


def test_api_score_equals_the_beam_searchs_own_scores(hub):
    sentences = ["A man in a blue shirt is standing on a ladder.", "Two dogs play in the snow."]
    hypotheses = hub.generate([hub.encode(s) for s in sentences], beam=3)
    translations = [hub.decode(h[0]["tokens"]) for h in hypotheses]
    scored = hub.score(sentences, translations)
    for hypos, result in zip(hypotheses, scored):
        assert result["tokens"].tolist() == hypos[0]["tokens"].tolist()
        assert result["positional_scores"] == pytest.approx(hypos[0]["positional_scores"], abs=1e-4)


def sources_of_distinct_lengths(hub, multi30k, count: int) -> list[torch.Tensor]:
    """The first ``count`` validation sources whose token counts all differ (one batch of them
    has a single row order: longest first)."""
    chosen: dict[int, torch.Tensor] = {}
    for sentence in read_lines(multi30k / "raw" / "valid.en"):
        tokens = hub.encode(sentence)
        chosen.setdefault(len(tokens), tokens)
        if len(chosen) == count:
            return list(chosen.values())
    raise AssertionError("too few lengths")


def test_every_nbest_hypothesis_has_its_forced_decoding_score(hub, multi30k):
    """Beam 5, all 5 hypotheses of each of 12 sentences in one batch, in which sentences finish at
    different steps and some leave from the middle of the batch: each hypothesis's per-token
    scores and length-normalised score equal a teacher-forced pass over it (the API's score)."""
    sources = sources_of_distinct_lengths(hub, multi30k, 12)
    hypotheses = hub.generate(sources, beam=5, nbest=5, max_len_b=40)
    rows = sorted(range(len(sources)), key=lambda i: -len(sources[i]))  # the batch's order
    finished = [max(len(h["tokens"]) for h in hypotheses[i]) for i in rows]  # the step each one left
    assert any(max(finished[:r]) > finished[r] < max(finished[r + 1 :]) for r in range(1, len(rows) - 1)), finished
    for source, hypos in zip(sources, hypotheses):
        assert len(hypos) == 5
        forced = hub.forced([source] * 5, [h["tokens"] for h in hypos])
        for hypothesis, (scores, _, _) in zip(hypos, forced):
            torch.testing.assert_close(hypothesis["positional_scores"], scores, rtol=0, atol=2e-5)
            assert hypothesis["score"].item() == pytest.approx(scores.sum().item() / len(scores), abs=2e-5)


def test_ensemble_of_a_checkpoint_with_itself_equals_the_checkpoint_alone(hub, multi30k, checkpoint):
    """--path a.pt:a.pt through fairseq's loader and ensemble: the single model's hypotheses and scores."""
    from rnnsearch_plugin import RNNSearchModel

    twice = RNNSearchModel.from_pretrained(str(checkpoint.parent), f"{checkpoint.name}:{checkpoint.name}", str(multi30k / "bin"))
    assert len(twice.models) == 2 and twice.models[0] is not twice.models[1]
    sources = [hub.encode(s) for s in read_lines(multi30k / "raw" / "test.en")[:24]]
    alone, together = (model.generate(sources, beam=5, nbest=5, max_len_b=40) for model in (hub, twice))
    for single, ensemble in zip(alone, together):
        assert [h["tokens"].tolist() for h in ensemble] == [h["tokens"].tolist() for h in single]
        for a, b in zip(single, ensemble):
            torch.testing.assert_close(b["positional_scores"], a["positional_scores"], rtol=0, atol=1e-5)
            assert b["score"].item() == pytest.approx(a["score"].item(), abs=1e-6)


def test_api_generate_prints_alignments_after_translate(hub):
    """print_alignment asked of generate once translate has prepared the model without it: the
    hard links are each target token's most attended source token in a forced pass."""
    sentences = ["A man in a blue shirt is standing on a ladder.", "Two dogs play in the snow."]
    hub.translate(sentences, beam=3)
    for alignment in ("hard", True):
        for sentence, hypos in zip(sentences, hub.generate([hub.encode(s) for s in sentences], beam=3, print_alignment=alignment)):
            weights = hub.forced([hub.encode(sentence)], [hypos[0]["tokens"]])[0].alignment
            expected = [(int(weights[t, :-1].argmax()), t) for t in range(len(weights) - 1)]  # no </s>
            assert [(int(s), int(t)) for s, t in hypos[0]["alignment"]] == expected
    soft = hub.generate([hub.encode(sentences[0])], beam=3, print_alignment="soft")[0][0]["alignment"]
    assert len(soft) == len(hub.generate([hub.encode(sentences[0])], beam=3)[0][0]["tokens"])
    assert not hub.models[0].decoder.need_attn  # as prepared: the search keeps no attention


def test_api_alignment_equals_fairseq_generates_soft_alignment(hub, multi30k, checkpoint, tmp_path):
    """Two routes to alpha_ij: the weights beam search recorded (fairseq-generate
    --print-alignment soft) and a teacher-forced pass over the same hypothesis (the API)."""
    output = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", checkpoint),
        "--beam",
        "3",
        "--gen-subset",
        "test",
        "--batch-size",
        "64",
        "--max-len-b",
        "30",
        "--print-alignment",
        "soft",
    ).stdout
    (tmp_path / "gen.out").write_text(output)
    matrices = parse_soft_alignments(output.splitlines())
    hypotheses = dict(re.findall(r"^H-(\d+)\t\S+\t(.*)$", output, flags=re.M))
    sources = read_lines(multi30k / "raw" / "test.en")
    assert sorted(matrices) == list(range(1000))
    checked = list(range(0, 1000, 25))
    targets = [hub.tgt_dict.encode_line(hypotheses[str(i)], add_if_not_exist=False).long() for i in checked]
    forced = hub.forced([hub.encode(sources[i]) for i in checked], targets)  # one padded batch of 40
    for index, (_, weights, _) in zip(checked, forced):
        assert weights.shape == matrices[index].shape
        assert weights.numpy() == pytest.approx(matrices[index], abs=2e-6)
    ids = ",".join(str(i) for i in sorted(matrices)[:2])
    run(
        "rnnsearch-heatmaps",
        "--generate-output",
        str(tmp_path / "gen.out"),
        "--scheme",
        "spm",
        "--ids",
        ids,
        "--out",
        str(tmp_path / "from_generate"),
    )
    assert len(list((tmp_path / "from_generate").glob("alignment_*.png"))) == 2


def test_api_plot_alignment_writes_figure_3_in_one_call(hub, tmp_path):
    alignment = hub.plot_alignment("A dog runs on the beach.", path=tmp_path / "dog.png")
    assert alignment.weights.shape == (len(alignment.target_tokens), len(alignment.source_tokens))
    assert alignment.weights.sum(axis=1) == pytest.approx(1.0, abs=1e-5)
    assert imread(tmp_path / "dog.png").shape[2] in (3, 4)


def test_score_and_align_corpus_lose_no_pair_to_sides_of_different_lengths(hub):
    """A zip would drop the pairs left over without a word: refused before any work where both
    sides have a length, and where a streamed side ends first."""
    with pytest.raises(ValueError, match="^sources has 3 sentences and targets 1: give one target per source$"):
        hub.align_corpus(["A .", "B .", "C ."], ["Un ."])
    with pytest.raises(ValueError, match="^targets ended after 1 sentences, but sources goes on"):
        list(hub.align_corpus(iter(["A .", "B ."]), iter(["Un ."])))
    with pytest.raises(ValueError, match="^sources has 2 sentences and targets 1"):
        hub.score(["A dog .", "A cat ."], ["Un chien ."])
    with pytest.raises(TypeError, match="^sources and targets must both be strings"):
        hub.score("A dog .", ["Un chien ."])


def test_align_corpus_yields_every_pair_read_before_its_input_fails(hub):
    """Pairs are read a chunk of 1,000 at a time: an input that fails within the first chunk (a
    source stream that raises after 300 pairs, targets that end after 250) still gets its pairs
    read before the failure aligned, as aligning those pairs alone aligns them, then the error; so
    it does in chunks of 100 (the failure at the end of a chunk, and within one)."""
    sources = [f"A dog runs {'very ' * (n % 7)}fast ." for n in range(400)]
    targets = [f"Un chien court {'très ' * (n % 5)}vite ." for n in range(400)]

    def failing_sources() -> Iterator[str]:
        yield from sources[:300]
        raise OSError("the disk went away")

    routes = [hub.align_corpus, lambda s, t: align_corpus(hub, *paired(s, t)[:2], chunk=100)]  # the API; chunks of 100
    failures = [
        (failing_sources, lambda: iter(targets), 300, "the disk went away"),
        (lambda: iter(sources), lambda: iter(targets[:250]), 250, "targets ended after 250 sentences, but sources goes on"),
    ]
    for route, (given_sources, given_targets, read, error) in itertools.product(routes, failures):
        delivered = []
        with pytest.raises((OSError, ValueError), match=error):
            for pair in route(given_sources(), given_targets()):
                delivered.append(pair)
        alone = list(hub.align_corpus(sources[:read], targets[:read]))
        assert [(pair.line, pair.links) for pair in delivered] == [(pair.line, pair.links) for pair in alone]
        assert [pair.line for pair in delivered] == list(range(1, read + 1))


def test_one_pair_of_strings_is_one_pair(hub):
    """Not one sentence per character."""
    (pair,) = hub.score(["A dog runs ."], ["Un chien court ."])
    alone = hub.score("A dog runs .", "Un chien court .")
    assert alone["score"] == pair["score"] and alone["tokens"].tolist() == pair["tokens"].tolist()
    (links,) = [aligned.links for aligned in hub.align_corpus(["A dog runs ."], ["Un chien court ."])]
    assert [aligned.links for aligned in hub.align_corpus("A dog runs .", "Un chien court .")] == [links]
    assert hub.translate("A dog runs .", beam=2) == hub.translate(["A dog runs ."], beam=2)[0]


@pytest.mark.parametrize("beam", [5.5, "5", True, None])
def test_a_beam_of_the_wrong_type_gets_the_servers_message(hub, beam):
    from rnnsearch_plugin.serve.requests import RequestError, integer

    with pytest.raises(RequestError) as served:
        integer({"beam": beam}, "beam", 5, 1, 12)
    for call in (lambda: hub.translate(["A dog ."], beam=beam), lambda: hub.align("A dog .", beam=beam)):
        with pytest.raises(TypeError) as refused:
            call()
        assert str(refused.value) == str(served.value) and str(refused.value).startswith("'beam' must be an integer, got ")


def test_values_the_model_cannot_serve_are_refused_in_one_line(hub, multi30k, checkpoint, tmp_path):
    for beam in (0, -1):
        with pytest.raises(ValueError, match=rf"^'beam' is {beam}: it must be at least 1$"):
            hub.translate(["A dog ."], beam=beam)
    with pytest.raises(ValueError, match="^'nbest' is 3: it must be between 1 and 2$"):
        hub.generate([hub.encode("A dog .")], beam=2, nbest=3)
    surrogate = r" holds a lone surrogate \(\\ud800-\\udfff\): send valid Unicode$"
    with pytest.raises(ValueError, match="^sentences" + surrogate):
        hub.translate("A \ud800 dog")
    with pytest.raises(ValueError, match=r"^sentences\[1\]" + surrogate):
        hub.translate(["A dog .", "A \ud800 dog"])
    with pytest.raises(ValueError, match=r"^targets\[0\]" + surrogate):
        list(hub.align_corpus(["A dog ."], ["Un \udcff chien ."]))
    with pytest.raises(TypeError, match=r"^sentences\[0\] must be a string, got 5$"):
        hub.translate([5])
    with pytest.raises(FileNotFoundError, match=re.escape(f"checkpoint {tmp_path / 'none.pt'}: no such file")):
        load(tmp_path / "none.pt", multi30k / "bin")
    with pytest.raises(FileNotFoundError, match=re.escape(f"data {tmp_path / 'bin'}: no such folder")):
        load(checkpoint, tmp_path / "bin")
