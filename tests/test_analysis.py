"""The paper's analyses (Table 1, Figure 2, Table 2, Appendix C) and the Python API, on the
session's Multi30k slice and tiny checkpoint."""
import json
import math
import re
import sys
from pathlib import Path

import pytest
import torch
from matplotlib.image import imread
from sacremoses import MosesTokenizer

from conftest import SHARED_DATA, run
from rnnsearch_plugin.analysis import bleu
from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_gold
from rnnsearch_plugin.analysis.alignment import merge_pieces, parse_soft_alignments
from rnnsearch_plugin.analysis.training_log import read_training_log
from rnnsearch_plugin.data.textio import read_lines, write_atomic
from rnnsearch_plugin.hub import load


@pytest.fixture(scope="module")
def hub(multi30k, checkpoint):
    return load(checkpoint, multi30k / "bin")


def sacrebleu_cli(reference, hypotheses, *options: str) -> float:
    result = run("sacrebleu", str(reference), "-i", str(hypotheses), "-b", "-w", "4", *options)
    return float(result.stdout.strip())


def test_bleu_figures_equal_sacrebleus_own_on_the_same_files(evaluation, multi30k, tmp_path):
    out, report = evaluation
    system = report["systems"]["tiny"]
    reference = multi30k / "raw" / "test1.fr"
    assert system["sacrebleu"] == pytest.approx(sacrebleu_cli(reference, out / "translations" / "tiny.txt"), abs=6e-5)
    tokenizer = MosesTokenizer("fr")
    for name, lines in {"hyp": read_lines(out / "translations" / "tiny.txt"), "ref": read_lines(reference)}.items():
        write_atomic(tmp_path / name, [tokenizer.tokenize(line, escape=False, return_str=True) for line in lines])
    multi_bleu = sacrebleu_cli(tmp_path / "ref", tmp_path / "hyp", "--tokenize", "none", "--smooth-method", "none")
    assert system["tokenised_bleu"] == pytest.approx(multi_bleu, abs=6e-5)
    subset = [read_lines(reference)[i] for i in system["no_unk_ids"]]
    write_atomic(tmp_path / "subset", subset)
    no_unk = sacrebleu_cli(tmp_path / "subset", out / "translations" / "tiny.no_unk.txt")
    assert system["no_unk_sacrebleu"] == pytest.approx(no_unk, abs=6e-5)
    assert 0 < system["no_unk_sentences"] < 1000  # the 1,000-word spm vocabulary leaves some <unk>


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


def test_report_files_cover_every_sentence_once(evaluation, multi30k):
    out, report = evaluation
    rows = report["by_length"]["tiny"]
    assert [r["bucket"] for r in rows] == ["0-10", "10-20", "20-30", "30-40", "40-50", "50-60", "60+"]
    assert sum(r["sentences"] for r in rows) == 1000
    assert len((out / "bleu_by_length.csv").read_text().splitlines()) == 1 + len(rows)
    assert (out / "bleu_by_length.png").stat().st_size > 0 and "<svg" in (out / "bleu_by_length.svg").read_text()
    long_rows = [line for line in (out / "long_sentences.md").read_text().splitlines() if line[:3].strip("| ").isdigit()]
    lengths = bleu.source_lengths(read_lines(multi30k / "raw" / "test1.en"))
    expected = [i for i, n in enumerate(lengths) if n >= 15]
    assert [int(line.split(" | ")[0][2:]) for line in long_rows] == expected and len(expected) > 20


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


def test_training_statistics_come_from_the_log(evaluation, checkpoint):
    statistics = read_training_log(checkpoint.parent / "train.log")
    assert statistics["updates"] == 300  # the fixture's --max-update
    assert statistics["device"] == "cpu" and statistics["unit"] == "nats per target token"
    valid = [line for line in (checkpoint.parent / "train.log").read_text().splitlines() if "valid on 'valid'" in line]
    best_bits = min(float(line.split("| loss ")[1].split(" ")[0]) for line in valid)
    assert statistics["dev_nll"] == pytest.approx(best_bits * math.log(2))
    assert evaluation[1]["training"]["tiny"]["updates"] == 300


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
    assert any(max(finished[:r]) > finished[r] < max(finished[r + 1:]) for r in range(1, len(rows) - 1)), finished
    for source, hypos in zip(sources, hypotheses):
        assert len(hypos) == 5
        forced = hub.forced([source] * 5, [h["tokens"] for h in hypos])
        for hypothesis, (scores, _) in zip(hypos, forced):
            torch.testing.assert_close(hypothesis["positional_scores"], scores, rtol=0, atol=2e-5)
            assert hypothesis["score"].item() == pytest.approx(scores.sum().item() / len(scores), abs=2e-5)


def test_ensemble_of_a_checkpoint_with_itself_equals_the_checkpoint_alone(hub, multi30k, checkpoint):
    """--path a.pt:a.pt through fairseq's loader and ensemble: the single model's hypotheses and scores."""
    from rnnsearch_plugin import RNNSearchModel

    twice = RNNSearchModel.from_pretrained(str(checkpoint.parent), f"{checkpoint.name}:{checkpoint.name}",
                                           str(multi30k / "bin"))
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
        for sentence, hypos in zip(sentences, hub.generate([hub.encode(s) for s in sentences], beam=3,
                                                           print_alignment=alignment)):
            (_, weights), = hub.forced([hub.encode(sentence)], [hypos[0]["tokens"]])
            expected = [(int(weights[t, :-1].argmax()), t) for t in range(len(weights) - 1)]  # no </s>
            assert [(int(s), int(t)) for s, t in hypos[0]["alignment"]] == expected
    soft = hub.generate([hub.encode(sentences[0])], beam=3, print_alignment="soft")[0][0]["alignment"]
    assert len(soft) == len(hub.generate([hub.encode(sentences[0])], beam=3)[0][0]["tokens"])
    assert not hub.models[0].decoder.need_attn  # as prepared: the search keeps no attention


def test_api_alignment_equals_fairseq_generates_soft_alignment(hub, multi30k, checkpoint, tmp_path):
    """Two routes to alpha_ij: the weights beam search recorded (fairseq-generate
    --print-alignment soft) and a teacher-forced pass over the same hypothesis (the API)."""
    output = run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en", "-t", "fr",
                 "--path", str(checkpoint), "--beam", "3", "--gen-subset", "test", "--batch-size", "64", "--max-len-b", "30",
                 "--print-alignment", "soft").stdout
    (tmp_path / "gen.out").write_text(output)
    matrices = parse_soft_alignments(output.splitlines())
    hypotheses = dict(re.findall(r"^H-(\d+)\t\S+\t(.*)$", output, flags=re.M))
    sources = read_lines(multi30k / "raw" / "test.en")
    assert sorted(matrices) == list(range(1000))
    checked = list(range(0, 1000, 25))
    targets = [hub.tgt_dict.encode_line(hypotheses[str(i)], add_if_not_exist=False).long() for i in checked]
    forced = hub.forced([hub.encode(sources[i]) for i in checked], targets)  # one padded batch of 40
    for index, (_, weights) in zip(checked, forced):
        assert weights.shape == matrices[index].shape
        assert weights.numpy() == pytest.approx(matrices[index], abs=2e-6)
    ids = ",".join(str(i) for i in sorted(matrices)[:2])
    run("rnnsearch-heatmaps", "--generate-output", str(tmp_path / "gen.out"), "--scheme", "spm", "--ids", ids,
        "--out", str(tmp_path / "from_generate"))
    assert len(list((tmp_path / "from_generate").glob("alignment_*.png"))) == 2


def test_heatmaps_from_a_model_have_one_cell_per_word(hub, multi30k, checkpoint, tmp_path):
    single = run("rnnsearch-heatmaps", "--path", str(checkpoint), "--data", str(multi30k / "bin"),
                 "--input", str(multi30k / "raw" / "test.en"), "--ids", "0,4", "--out", str(tmp_path / "single"))
    assert "| INFO |" in single.stderr and "DEBUG" not in single.stderr  # fairseq's import asks for DEBUG
    run("rnnsearch-heatmaps", "--path", str(checkpoint), "--data", str(multi30k / "bin"),
        "--input", str(multi30k / "raw" / "test.en"), "--ids", "0,4", "--grid", "--format", "svg", "--out", str(tmp_path / "grid"))
    alignment = hub.align(read_lines(multi30k / "raw" / "test.en")[4])
    weights, source, target = merge_pieces(alignment.weights, alignment.source_tokens, alignment.target_tokens, "spm")
    height, width = imread(tmp_path / "single" / "alignment_4.png").shape[:2]
    assert (width, height) == (round(100 * (1.7 + 0.3 * len(source))), round(100 * (2.1 + 0.3 * len(target))))
    assert "<svg" in (tmp_path / "grid" / "alignments.svg").read_text()
    refused = run("rnnsearch-heatmaps", "--path", str(checkpoint), "--data", str(multi30k / "bin"),
                  "--input", str(multi30k / "raw" / "test.en"), "--ids", "5000", "--out", str(tmp_path / "x"), check=False)
    assert refused.returncode != 0 and "--ids 5000" in refused.stderr and "Traceback" not in refused.stderr


def test_aer_command_scores_the_model_and_the_diagonal_against_the_gold(multi30k, checkpoint, tmp_path):
    gold_dir = Path(SHARED_DATA) / "alignment-gold"
    run("rnnsearch-aer", "--path", str(checkpoint), "--data", str(multi30k / "bin"), "--gold", str(gold_dir),
        "--out", str(tmp_path))
    scores = json.loads((tmp_path / "aer.json").read_text())
    french = read_lines(gold_dir / "dev.f")
    assert scores["argmax"]["links"] == sum(len(line.split()) for line in french)  # one link per French word
    assert scores["threshold 0.3"]["links"] >= scores["argmax"]["links"]
    english = read_lines(gold_dir / "dev.e")
    diagonal = {n: diagonal_links(len(e.split()), len(f.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    assert scores["diagonal"] == pytest.approx(alignment_error_rate(diagonal, read_gold(gold_dir / "dev.wa.nonullalign")))
    assert 0 <= scores["argmax"]["aer"] <= 1 and "| diagonal |" in (tmp_path / "aer.md").read_text()


def test_api_plot_alignment_writes_figure_3_in_one_call(hub, tmp_path):
    alignment = hub.plot_alignment("A dog runs on the beach.", path=tmp_path / "dog.png")
    assert alignment.weights.shape == (len(alignment.target_tokens), len(alignment.source_tokens))
    assert alignment.weights.sum(axis=1) == pytest.approx(1.0, abs=1e-5)
    assert imread(tmp_path / "dog.png").shape[2] in (3, 4)
