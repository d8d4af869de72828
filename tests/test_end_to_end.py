"""End to end through fairseq's own console commands on a slice of the real Multi30k data."""

import math
import re

import pytest
import sacrebleu
import torch
from conftest import REPO, TINY, fairseq_decode, fairseq_train, generate, lines_of, run, sentencepiece


def texts(scored: dict[str, str]) -> dict[str, str]:
    """Drop the scores, which may differ in the last float digits with the batch shape."""
    return {index: line.split("\t", 1)[1] for index, line in scored.items()}


def test_generate_prints_every_sentence_with_alignments_and_scores(multi30k, checkpoint, tmp_path):
    # hypotheses of at most 50 tokens (a bound that does not depend on the batch, unlike --max-len-a's): the
    # tiny model loops on many sentences up to fairseq's default 200, which made this the suite's slowest
    # test; every check below is about completeness and links
    bounded = ("--gen-subset", "valid", "--print-alignment", "--max-len-b", "50")
    output = generate(multi30k, checkpoint, *bounded)
    references = (multi30k / "raw" / "valid.fr").read_text().splitlines()
    assert len(references) == 1014 and len(references) % 8 != 0
    hypotheses = re.findall(r"^H-(\d+)\t", output, flags=re.M)
    assert sorted(map(int, hypotheses)) == list(range(1014))  # one hypothesis per source line
    pieces = (multi30k / "spm" / "valid.en").read_text().splitlines()
    for index, alignment in lines_of(output, "A").items():
        links = [tuple(map(int, link.split("-"))) for link in alignment.split()]
        assert links and all(0 <= s < len(pieces[int(index)].split()) for s, _ in links), (index, alignment)
    regrouped = generate(multi30k, checkpoint, *bounded, "--batch-size", "13")
    assert lines_of(output, "A") == lines_of(regrouped, "A")  # other neighbours and padding, same links
    assert texts(lines_of(output, "H")) == texts(lines_of(regrouped, "H"))
    generated = tmp_path / "valid.out"
    generated.write_text(output)
    score = run("rnnsearch-score", str(generated), "--reference", str(multi30k / "raw" / "valid.fr")).stdout
    bleu = re.search(r"sacreBLEU = ([\d.]+)", score).group(1)
    in_order = [text for _, text in sorted((int(i), t) for i, t in texts(lines_of(output, "D")).items())]
    assert bleu == f"{sacrebleu.corpus_bleu(in_order, [references]).score:.2f}" and "nrefs:1" in score
    short = tmp_path / "short.fr"
    short.write_text("\n".join(references[:-3]) + "\n")
    refused = run("rnnsearch-score", str(generated), "--reference", str(short), check=False)
    assert refused.returncode != 0 and "1014 hypotheses for 1011 reference lines" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_interactive_translates_every_line_of_standard_input(multi30k, checkpoint):
    lines = ["A man is riding a bike .", "Two dogs play in the snow .", "A woman sings ."]
    result = run(
        *fairseq_decode("fairseq-interactive", multi30k / "bin", checkpoint, "--beam", "3", *sentencepiece(multi30k)),
        stdin="\n".join(lines) + "\n",
    )
    detokenised = re.findall(r"^D-(\d+)\t\S+\t(.*)$", result.stdout, flags=re.M)
    assert [int(i) for i, _ in detokenised] == [0, 1, 2]
    assert all(text.strip() and "▁" not in text for _, text in detokenised)


def test_hydra_config_trains(multi30k, tmp_path):
    result = run(
        "fairseq-hydra-train",
        "--config-dir",
        str(REPO / "configs"),
        "--config-name",
        "quickstart",
        f"task.data={multi30k / 'bin'}",
        f"common.user_dir={REPO / 'rnnsearch_plugin'}",
        f"checkpoint.save_dir={tmp_path}",
        "optimization.max_update=5",
        "model.encoder_hidden_size=16",
        "model.decoder_hidden_size=16",
        cwd=tmp_path,
    )
    assert (tmp_path / "checkpoint_last.pt").exists(), result.stdout[-2000:]


PAPER_CLI = (  # the README's fairseq-train line for RNNsearch-50 (Appendix B.2)
    "--arch rnnsearch_wmt14 --optimizer rnnsearch_adadelta --adadelta-rho 0.95 --adadelta-eps 1e-6 "
    "--lr 1.0 --lr-scheduler fixed --clip-norm 1.0 --criterion chunked_cross_entropy --sentence-avg "
    "--batch-size 80 --max-source-positions 51 --max-target-positions 51 "
    "--skip-invalid-size-inputs-valid-test"
).split()


TINY_PAPER = [
    "encoder_embed_dim",
    "decoder_embed_dim",
    "encoder_hidden_size",
    "decoder_hidden_size",
    "attention_hidden_size",
    "decoder_out_embed_dim",
]


def test_paper_config_and_command_line_set_up_the_same_training(multi30k, tmp_path):
    """configs/rnnsearch_wmt14_50.yaml and the README's command line: same B.2 set-up."""
    readme = (REPO / "README.md").read_text()
    assert " ".join(PAPER_CLI) in " ".join(readme.replace("\\\n", " ").split())
    run(
        "fairseq-hydra-train",
        "--config-dir",
        str(REPO / "configs"),
        "--config-name",
        "rnnsearch_wmt14_50",
        f"task.data={multi30k / 'bin'}",
        f"common.user_dir={REPO / 'rnnsearch_plugin'}",
        f"checkpoint.save_dir={tmp_path / 'hydra'}",
        "optimization.max_update=3",
        *[f"model.{name}=8" for name in TINY_PAPER],
        cwd=tmp_path,
    )
    run(
        *fairseq_train(multi30k / "bin"),
        *PAPER_CLI,
        *[f"--{n.replace('_', '-')}=8" for n in TINY_PAPER],
        "--max-update",
        "3",
        "--save-dir",
        str(tmp_path / "cli"),
    )
    hydra, cli = (torch.load(tmp_path / d / "checkpoint_last.pt", weights_only=True)["cfg"] for d in ("hydra", "cli"))
    for group, keys in {
        "optimizer": ["_name", "adadelta_rho", "adadelta_eps", "weight_decay"],
        "optimization": ["lr", "clip_norm", "sentence_avg"],
        "dataset": ["batch_size", "skip_invalid_size_inputs_valid_test"],
        "task": ["max_source_positions", "max_target_positions"],
        "criterion": ["_name"],
        "model": ["_name", *TINY_PAPER, "maxout_pool_size", "readout_state", "dropout"],
    }.items():
        for key in keys:
            assert hydra[group][key] == cli[group][key], (group, key)
    assert hydra["optimizer"]["adadelta_rho"] == 0.95 and hydra["optimization"]["clip_norm"] == 1.0
    assert hydra["dataset"]["batch_size"] == 80 and hydra["task"]["max_source_positions"] == 51
    assert hydra["optimization"]["sentence_avg"] and hydra["model"]["dropout"] == 0.0


def test_user_dir_works_outside_the_repository(multi30k, checkpoint, tmp_path):
    """After pip install, --user-dir rnnsearch_plugin resolves next to the installed fairseq."""
    result = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", checkpoint),
        "--beam",
        "2",
        "--gen-subset",
        "test1",
        "--max-sentences",
        "100",
        "--remove-bpe",
        "sentencepiece",
        cwd=tmp_path,
    )
    assert len(re.findall(r"^H-", result.stdout, flags=re.M)) == 1000


INTERACTIVE_LINES = "A man is riding a bike .\nTwo dogs play in the snow .\n"


@pytest.mark.parametrize(
    "options",
    [
        ["--beam", "4", "--nbest", "3", "--lenpen", "0.6", "--unkpen", "2"],
        ["--sampling", "--sampling-topk", "5", "--beam", "2", "--nbest", "2", "--seed", "1"],
        ["--beam", "3", "--print-alignment", "--replace-unk", ""],  # bare --replace-unk: see README
        ["--beam", "3", "--ensemble"],
    ],
)
def test_generation_options(multi30k, checkpoint, options):
    path = f"{checkpoint}:{checkpoint}" if "--ensemble" in options else str(checkpoint)
    options = [o for o in options if o != "--ensemble"]
    result = run(
        *fairseq_decode("fairseq-interactive", multi30k / "bin", path, *sentencepiece(multi30k), *options),
        stdin=INTERACTIVE_LINES,
    )
    nbest = int(options[options.index("--nbest") + 1]) if "--nbest" in options else 1
    assert len(re.findall(r"^H-\d+\t", result.stdout, flags=re.M)) == 2 * nbest
    if "--print-alignment" in options:
        assert len(re.findall(r"^A-\d+\t\d+-\d+", result.stdout, flags=re.M)) == 2


def test_score_reference_equals_the_python_apis_score(multi30k, checkpoint):
    """fairseq-generate --score-reference (bits per token) and the API's forced decoding of the
    raw sentence pairs (nats per sentence): the same log-probability of every reference."""
    from rnnsearch_plugin.hub import load

    output = generate(multi30k, checkpoint, "--gen-subset", "valid", "--score-reference")
    scores = {int(i): float(s) for i, s in re.findall(r"^H-(\d+)\t(\S+)\t", output, flags=re.M)}
    assert sorted(scores) == list(range(1014))
    sources, references = ((multi30k / "raw" / f"valid.{lang}").read_text().splitlines() for lang in ("en", "fr"))
    for index, scored in enumerate(load(checkpoint, multi30k / "bin").score(sources, references)):
        assert scores[index] * math.log(2) * len(scored["tokens"]) == pytest.approx(scored["score"], abs=2e-4)


def test_training_companions(multi30k, checkpoint, tmp_path):
    """--eval-bleu with detokenisation, tensorboard, tqdm, best checkpoint by BLEU, patience."""
    result = run(
        *fairseq_train(multi30k / "bin"),
        "--arch",
        "rnnsearch_small",
        *TINY,
        "--finetune-from-model",
        str(checkpoint),
        "--optimizer",
        "rnnsearch_adadelta",
        "--lr",
        "1.0",
        "--clip-norm",
        "1.0",
        "--batch-size",
        "80",
        "--max-update",
        "20",
        "--validate-interval-updates",
        "10",
        "--eval-bleu",
        "--eval-bleu-detok",
        "moses",
        "--eval-bleu-remove-bpe",
        "sentencepiece",
        "--eval-bleu-args",
        '{"beam": 2, "max_len_b": 20}',
        "--best-checkpoint-metric",
        "bleu",
        "--maximize-best-checkpoint-metric",
        "--patience",
        "5",
        "--tensorboard-logdir",
        str(tmp_path / "tb"),
        "--log-format",
        "tqdm",
        "--save-dir",
        str(tmp_path / "ck"),
        "--no-epoch-checkpoints",
        "--num-workers",
        "0",
    )
    log = result.stdout + result.stderr
    assert re.search(r"valid on 'valid' subset.*\| bleu [\d.]+", log), log[-2000:]
    assert (tmp_path / "ck" / "checkpoint_best.pt").exists()
    assert list((tmp_path / "tb").rglob("events.out.tfevents.*"))
