"""End to end through fairseq's own console commands on a slice of the real Multi30k data."""
import re
from pathlib import Path

import pytest
import sacrebleu
import torch

from conftest import REPO, TINY, run


def generate(multi30k: Path, checkpoint: Path, *extra: str) -> str:
    return run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en",
               "-t", "fr", "--path", str(checkpoint), "--beam", "4", "--batch-size", "64",
               "--remove-bpe", "sentencepiece", *extra).stdout


def lines_of(output: str, kind: str) -> dict[str, str]:
    return dict(re.findall(rf"^{kind}-(\d+)\t(.*)$", output, flags=re.M))


def texts(scored: dict[str, str]) -> dict[str, str]:
    """Drop the scores, which may differ in the last float digits with the batch shape."""
    return {index: line.split("\t", 1)[1] for index, line in scored.items()}


def test_generate_prints_every_sentence_with_alignments_and_scores(multi30k, checkpoint, tmp_path):
    output = generate(multi30k, checkpoint, "--gen-subset", "valid", "--print-alignment")
    references = (multi30k / "raw" / "valid.fr").read_text().splitlines()
    assert len(references) == 1014 and len(references) % 8 != 0
    hypotheses = re.findall(r"^H-(\d+)\t", output, flags=re.M)
    assert sorted(map(int, hypotheses)) == list(range(1014))  # one hypothesis per source line
    pieces = (multi30k / "spm" / "valid.en").read_text().splitlines()
    for index, alignment in lines_of(output, "A").items():
        links = [tuple(map(int, link.split("-"))) for link in alignment.split()]
        assert links and all(0 <= s < len(pieces[int(index)].split()) for s, _ in links), (index, alignment)
    alone = generate(multi30k, checkpoint, "--gen-subset", "valid", "--print-alignment", "--batch-size", "1")
    assert lines_of(output, "A") == lines_of(alone, "A")  # left padding moves no alignment link
    assert texts(lines_of(output, "H")) == texts(lines_of(alone, "H"))
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
    result = run("fairseq-interactive", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin",
                 "-s", "en", "-t", "fr", "--path", str(checkpoint), "--beam", "3",
                 "--bpe", "sentencepiece", "--sentencepiece-model", str(multi30k / "spm" / "spm.model"),
                 stdin="\n".join(lines) + "\n")
    detokenised = re.findall(r"^D-(\d+)\t\S+\t(.*)$", result.stdout, flags=re.M)
    assert [int(i) for i, _ in detokenised] == [0, 1, 2]
    assert all(text.strip() and "▁" not in text for _, text in detokenised)


def test_python_api_loads_the_checkpoint_and_translates(multi30k, checkpoint):
    from rnnsearch_plugin import RNNSearchModel

    hub = RNNSearchModel.from_pretrained(
        str(checkpoint.parent), checkpoint_file=checkpoint.name, data_name_or_path=str(multi30k / "bin"),
        bpe="sentencepiece", sentencepiece_model=str(multi30k / "spm" / "spm.model"),
        source_lang="en", target_lang="fr",
    )
    sentences = [f"A man with {n} dogs is riding a bike ." for n in range(13)]  # 13 = 8 + 5
    translations = hub.translate(sentences, beam=3)
    assert len(translations) == 13 and all(isinstance(t, str) and t for t in translations)
    assert isinstance(hub.models[0], RNNSearchModel)


def test_hydra_config_trains(multi30k, tmp_path):
    result = run("fairseq-hydra-train", "--config-dir", str(REPO / "configs"),
                 "--config-name", "rnnsearch_small_multi30k", f"task.data={multi30k / 'bin'}",
                 f"common.user_dir={REPO / 'rnnsearch_plugin'}", f"checkpoint.save_dir={tmp_path}",
                 "optimization.max_update=5", "model.encoder_hidden_size=16", "model.decoder_hidden_size=16",
                 cwd=tmp_path)
    assert (tmp_path / "checkpoint_last.pt").exists(), result.stdout[-2000:]


def test_paper_config_matches_the_documented_command_line(multi30k, tmp_path):
    """configs/rnnsearch_wmt14_50.yaml trains (tiny sizes) with Adadelta and exact clipping."""
    result = run("fairseq-hydra-train", "--config-dir", str(REPO / "configs"), "--config-name",
                 "rnnsearch_wmt14_50", f"task.data={multi30k / 'bin'}",
                 f"common.user_dir={REPO / 'rnnsearch_plugin'}", f"checkpoint.save_dir={tmp_path}",
                 "optimization.max_update=3", "model.encoder_embed_dim=8", "model.decoder_embed_dim=8",
                 "model.encoder_hidden_size=8", "model.decoder_hidden_size=8",
                 "model.attention_hidden_size=8", "model.decoder_out_embed_dim=8", cwd=tmp_path)
    state = torch.load(tmp_path / "checkpoint_last.pt", weights_only=True)
    assert state["cfg"]["optimizer"]["_name"] == "rnnsearch_adadelta"
    assert state["cfg"]["optimizer"]["adadelta_rho"] == 0.95
    assert state["cfg"]["optimization"]["clip_norm"] == 1.0 and state["cfg"]["dataset"]["batch_size"] == 80
    assert "num_updates 3" in result.stdout + result.stderr


def test_user_dir_works_outside_the_repository(multi30k, checkpoint, tmp_path):
    """After pip install, --user-dir rnnsearch_plugin resolves next to the installed fairseq."""
    result = run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en",
                 "-t", "fr", "--path", str(checkpoint), "--beam", "2", "--gen-subset", "test1",
                 "--max-sentences", "100", "--remove-bpe", "sentencepiece", cwd=tmp_path)
    assert len(re.findall(r"^H-", result.stdout, flags=re.M)) == 1000


INTERACTIVE_LINES = "A man is riding a bike .\nTwo dogs play in the snow .\n"


@pytest.mark.parametrize("options", [
    ["--beam", "4", "--nbest", "3", "--lenpen", "0.6", "--unkpen", "2"],
    ["--sampling", "--sampling-topk", "5", "--beam", "2", "--nbest", "2", "--seed", "1"],
    ["--beam", "3", "--print-alignment", "--replace-unk", ""],  # bare --replace-unk: see README
    ["--beam", "3", "--ensemble"],
])
def test_generation_options(multi30k, checkpoint, options):
    path = f"{checkpoint}:{checkpoint}" if "--ensemble" in options else str(checkpoint)
    options = [o for o in options if o != "--ensemble"]
    result = run("fairseq-interactive", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en",
                 "-t", "fr", "--path", path, "--bpe", "sentencepiece",
                 "--sentencepiece-model", str(multi30k / "spm" / "spm.model"), *options, stdin=INTERACTIVE_LINES)
    nbest = int(options[options.index("--nbest") + 1]) if "--nbest" in options else 1
    assert len(re.findall(r"^H-\d+\t", result.stdout, flags=re.M)) == 2 * nbest
    if "--print-alignment" in options:
        assert len(re.findall(r"^A-\d+\t\d+-\d+", result.stdout, flags=re.M)) == 2


def test_score_reference_scores_every_reference(multi30k, checkpoint):
    output = generate(multi30k, checkpoint, "--gen-subset", "valid", "--score-reference")
    scores = [float(s) for s in re.findall(r"^H-\d+\t(\S+)\t", output, flags=re.M)]
    assert len(scores) == 1014 and all(s < 0 for s in scores)


def test_training_companions(multi30k, checkpoint, tmp_path):
    """--eval-bleu with detokenisation, tensorboard, tqdm, best checkpoint by BLEU, patience."""
    result = run("fairseq-train", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "--task",
                 "translation", "-s", "en", "-t", "fr", "--arch", "rnnsearch_small", *TINY,
                 "--finetune-from-model", str(checkpoint), "--optimizer", "rnnsearch_adadelta", "--lr", "1.0",
                 "--clip-norm", "1.0", "--batch-size", "80", "--max-update", "20", "--validate-interval-updates", "10", "--eval-bleu",
                 "--eval-bleu-detok", "moses", "--eval-bleu-remove-bpe", "sentencepiece",
                 "--eval-bleu-args", '{"beam": 2, "max_len_b": 20}', "--best-checkpoint-metric", "bleu",
                 "--maximize-best-checkpoint-metric", "--patience", "5", "--tensorboard-logdir",
                 str(tmp_path / "tb"), "--log-format", "tqdm", "--save-dir", str(tmp_path / "ck"),
                 "--no-epoch-checkpoints", "--num-workers", "0")
    log = result.stdout + result.stderr
    assert re.search(r"valid on 'valid' subset.*\| bleu [\d.]+", log), log[-2000:]
    assert (tmp_path / "ck" / "checkpoint_best.pt").exists()
    assert list((tmp_path / "tb").rglob("events.out.tfevents.*"))
