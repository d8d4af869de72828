"""Mixed precision. On the CPU, the plugin's --amp (``speed/precision.py``): bfloat16 products, float32
states, attention softmax and loss, in training and in translation; where the processor has no
bfloat16 arithmetic, one line and float32. On the tests' ``--device`` (tests/conftest.py), a model
converted to half precision (what fairseq's --fp16/--bf16 do on GPUs) keeps the attention a
distribution over the real source words, close to the float32 one, and bfloat16 training tracks
float32. Weights are spread out so that the attention is far from uniform (at B.1's start v_a = 0
makes it uniform in any precision)."""

import logging
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch
from conftest import REPO, generate, generate_command, initialized, lines_of, losses_by_update, pad_batch, run, train_command

from rnnsearch_plugin.speed import engines, precision
from rnnsearch_plugin.speed.tricks import Tricks

UPDATES = 200
VOCAB = 40
NO_BFLOAT16 = (
    "cannot run here: this processor has no bfloat16 arithmetic (AVX512-BF16 or AMX), where --amp keeps "
    "float32 (test_without_bfloat16_arithmetic_the_model_keeps_float32 checks that); it runs on one that has"
)
needs_bfloat16 = pytest.mark.skipif(not precision.bfloat16_supported(), reason=NO_BFLOAT16)


def small_model(kind: str, device: str, spread: float = 0.0) -> torch.nn.Module:
    """A float32 model with the paper's initialisation (B.1), seeded; its weights then drawn from
    N(0, spread^2) when ``spread`` is given."""
    sizes = {
        name: 32
        for name in ("encoder_embed_dim", "encoder_hidden_size", "decoder_embed_dim", "decoder_hidden_size", "decoder_out_embed_dim")
    }
    model = initialized(kind, (VOCAB, VOCAB), attention_hidden_size=32, **sizes).to(device)
    if spread:
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.normal_(0.0, spread)
    return model


def reversal_batches(device: str, count: int = 8, longest: int = 9) -> list[tuple[torch.Tensor, ...]]:
    """Batches of 16 pairs: the target is the source reversed; lengths 3 to ``longest``, so both
    sides are padded."""
    generator = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(count):
        lengths = torch.randint(3, longest + 1, (16,), generator=generator, device="cpu").tolist()
        sources = [torch.randint(4, VOCAB + 4, (n,), generator=generator, device="cpu").tolist() + [2] for n in lengths]
        targets = [s[:-1][::-1] + [2] for s in sources]
        src = pad_batch(sources, 1, left=True)
        prev = pad_batch([[2] + t[:-1] for t in targets], 1, left=False)
        tgt = pad_batch(targets, 1, left=False)
        batches.append(tuple(x.to(device) for x in (src, torch.tensor([len(s) for s in sources]), prev, tgt)))
    return batches


def half_precision(model: torch.nn.Module, device: str):
    """Where the model's products run in bfloat16: the plugin's --amp on the CPU, fairseq's
    --amp (CUDA autocast) on a GPU."""
    if device == "cpu":
        engines.set_bfloat16(model, True)
        return torch.autocast("cpu", enabled=False)
    return torch.autocast(device, dtype=torch.bfloat16)


def train_losses(kind: str, device: str, bfloat16: bool) -> list[float]:
    """Per-token losses of UPDATES Adam updates, in float32 or with bfloat16 products."""
    model = small_model(kind, device).train()
    context = half_precision(model, device) if bfloat16 else torch.autocast(device, enabled=False)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches, losses = reversal_batches(device), []
    for update in range(UPDATES):
        src, lengths, prev, tgt = batches[update % len(batches)]
        with context:
            logits = model(src, lengths, prev)[0]
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tgt.flatten(), ignore_index=1)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_bfloat16_training_tracks_float32(kind, device):
    """On the tests' ``--device`` (tests/conftest.py)."""
    device = device.type
    if device == "cpu" and not precision.bfloat16_supported():
        pytest.skip(NO_BFLOAT16)
    full, half = train_losses(kind, device, False), train_losses(kind, device, True)
    assert all(torch.isfinite(torch.tensor(half)))
    windows = [(sum(full[i : i + 25]) / 25, sum(half[i : i + 25]) / 25) for i in range(0, UPDATES, 25)]
    assert windows[-1][0] < 0.9 * windows[0][0]  # it learns, so the losses compared below move
    # Same start, same batches: every 25-update window within 10% of float32's mean loss (the
    # runs drift apart as rounding compounds), the whole run's mean within 2%.
    assert all(abs(h - f) < 0.1 * f for f, h in windows)
    assert abs(sum(half) - sum(full)) < 0.02 * sum(full)


def assert_close_distribution(alpha: torch.Tensor, reference: torch.Tensor, src: torch.Tensor) -> None:
    """alpha: B x T x S from a half-precision run; reference: the float32 run's."""
    padding = src.eq(1)[:, None, :].expand_as(alpha)
    assert alpha.dtype == torch.float32 and torch.isfinite(alpha).all()
    assert alpha.masked_select(padding).abs().max() == 0  # exactly
    torch.testing.assert_close(alpha.sum(-1), torch.ones_like(alpha.sum(-1)), rtol=0, atol=1e-5)
    real = ~padding
    uniform = real.float() / real.sum(-1, keepdim=True)
    assert 0.5 * (reference - uniform).abs().sum(-1).mean() > 0.3  # far from uniform (total variation)
    torch.testing.assert_close(alpha[real], reference[real], rtol=0, atol=0.05)


def spread_model_and_batch(device: str):
    model = small_model("rnnsearch", device, spread=0.3).eval()
    with torch.no_grad():
        model.decoder.attention.score.weight.mul_(3)  # v_a: sharper alignments
    src, lengths, prev, _ = reversal_batches(device, count=1)[0]
    with torch.no_grad():
        logits, extra = model(src, lengths, prev)
    return model, (src, lengths, prev), model.get_normalized_probs((logits, extra), log_probs=True), extra["attn"][0]


@needs_bfloat16
@pytest.mark.parametrize("mode", ["training", "translation"])
def test_cpu_bfloat16_attention_is_the_float32_attention(mode):
    model, (src, lengths, prev), reference_probs, reference_alpha = spread_model_and_batch("cpu")
    if mode == "training":  # fairseq-train --amp: float32 weights, bfloat16 products
        engines.set_bfloat16(model, True)
    else:  # fairseq-generate --amp: the weights stored in bfloat16 once
        model.prepare_for_inference_(SimpleNamespace(common=SimpleNamespace(amp=True), generation=None))
        assert next(model.parameters()).dtype == torch.bfloat16
    with torch.no_grad():
        logits, extra = model(src, lengths, prev)
        log_probs = model.get_normalized_probs((logits, extra), log_probs=True)
    assert logits.dtype == torch.bfloat16
    assert_close_distribution(extra["attn"][0], reference_alpha, src)
    real = prev.ne(1)
    torch.testing.assert_close(log_probs[real], reference_probs[real], rtol=0, atol=0.15)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_model_keeps_attention_close_to_float32(device, dtype):
    model, (src, lengths, prev), _, reference_alpha = spread_model_and_batch(device.type)
    with torch.no_grad():
        _, extra = model.to(dtype)(src, lengths, prev)  # fairseq --fp16 / --bf16: the whole model in half
    assert_close_distribution(extra["attn"][0], reference_alpha, src)


@needs_bfloat16
def test_recurrent_states_stay_float32_over_a_long_sentence():
    """300 source words: the states are float32 and end close to the float32 run's."""
    model = small_model("rnnsearch", "cpu", spread=0.15).eval()
    src = torch.randint(4, VOCAB + 4, (2, 300), generator=torch.Generator().manual_seed(3))
    src[:, -1] = 2
    lengths = torch.tensor([300, 300])
    with torch.no_grad():
        reference = model.encoder(src, lengths)
        engines.set_bfloat16(model, True)
        mixed = model.encoder(src, lengths)
    assert mixed["annotations"].dtype == mixed["summary"].dtype == torch.float32
    torch.testing.assert_close(mixed["annotations"], reference["annotations"], rtol=0, atol=0.05)


def test_without_bfloat16_arithmetic_the_model_keeps_float32(monkeypatch, caplog):
    monkeypatch.setattr(precision, "bfloat16_supported", lambda: False)
    model = small_model("rnnsearch", "cpu")
    src, lengths, prev, _ = reversal_batches("cpu", count=1)[0]
    with caplog.at_level(logging.WARNING):
        assert engines.set_bfloat16(model, True) is False
    assert [r.getMessage() for r in caplog.records] == [
        "--amp: this processor has no bfloat16 arithmetic (no AVX512-BF16 or AMX), so the model runs in float32"
    ]
    assert model(src, lengths, prev)[0].dtype == torch.float32


@needs_bfloat16
def test_fairseq_generate_with_amp_translates_every_sentence(multi30k, checkpoint):
    """The tiny checkpoint's beams are full of near-ties, which rounding breaks either way: the
    translations' quality is compared in docs/training.md on a real model; here every sentence is
    translated and scored about as float32 scores its own translations."""
    full = lines_of(generate(multi30k, checkpoint, "--gen-subset", "valid"), "H")
    output = run(*generate_command(multi30k, checkpoint, "--gen-subset", "valid", "--amp"))
    half = lines_of(output.stdout, "H")
    assert "translating with bfloat16 products on the CPU (--amp)" in output.stdout + output.stderr
    assert full.keys() == half.keys() and len(half) == 1014

    def mean_score(lines: dict[str, str]) -> float:
        return sum(float(line.split("\t")[0]) for line in lines.values()) / len(lines)

    assert mean_score(half) == pytest.approx(mean_score(full), rel=0.02)


@needs_bfloat16
def test_amp_training_runs_in_bfloat16_and_stops_on_divergence_in_one_line(multi30k, tmp_path):
    """fairseq-train --amp on a CPU: bfloat16 products (the model summary says so), losses close to
    float32's, no warning that CUDA autocast is disabled; an absurd learning rate stops the run at
    the first non-finite gradient, as in float32, instead of fairseq's AMP retrying the batch on
    weights that a disabled GradScaler let the step ruin."""
    command = train_command(multi30k, tmp_path) + ["--criterion", "chunked_cross_entropy"]
    full = losses_by_update(run(*command).stdout)
    command += ["--amp", "--save-dir", str(tmp_path / "amp")]
    trained = run(*command)
    half = losses_by_update(trained.stdout)
    assert Tricks(bfloat16=True).summary() in trained.stdout + trained.stderr  # the model summary
    assert "Disabling" not in trained.stderr
    assert half.keys() == full.keys()
    assert all(abs(float(half[u]) - float(full[u])) < 0.02 * float(full[u]) for u in full)
    diverging = run(*command, "--optimizer", "sgd", "--lr", "1e30", "--save-dir", str(tmp_path / "diverging"), check=False)
    assert diverging.returncode == 1
    assert diverging.stderr.strip().splitlines()[-1].startswith("fairseq-train: error: gradients are Nan/Inf: training diverged"), (
        diverging.stderr[-2000:]
    )
    assert not re.search("AMP: (overflow|skipping)", diverging.stdout + diverging.stderr)


@needs_bfloat16
def test_python_api_translates_in_bfloat16_only_when_asked(multi30k, checkpoint):
    """load(..., amp=True) stores the weights in bfloat16 and translates; load() stays float32,
    whatever the checkpoint was trained with."""
    from rnnsearch_plugin import load

    full, half = load(checkpoint, multi30k / "bin"), load(checkpoint, multi30k / "bin", amp=True)
    assert next(full.models[0].parameters()).dtype == torch.float32
    assert next(half.models[0].parameters()).dtype == torch.bfloat16
    sentences = ["A man is riding a bike .", "Two dogs play in the snow ."]
    assert all(half.translate(sentences, beam=3))
    scores = [result["score"] for result in full.score(sentences, full.translate(sentences, beam=3))]
    half_scores = [result["score"] for result in half.score(sentences, full.translate(sentences, beam=3))]
    assert half_scores == pytest.approx(scores, rel=0.05)


COMPILE_PROBE = """
import torch
from rnnsearch_plugin.speed import precision
assert precision.cpu_bfloat16_available(True)
weight = torch.ones(64, 64, dtype=torch.bfloat16)
for rows in [*range(2, 1102), 2]:  # 1,100 shapes, then the first again (one row takes no oneDNN product)
    torch.ones(rows, 64, dtype=torch.bfloat16) @ weight
"""


@needs_bfloat16
@pytest.mark.parametrize("user_setting", [None, "2"])
def test_amp_keeps_more_compiled_products_unless_the_user_set_it(user_setting):
    """oneDNN's log of its cache (ONEDNN_VERBOSE=profile_create): after 1,100 other shapes the first
    product's shape is still compiled (the default keeps 1,024); a capacity the user set wins."""
    env = {key: value for key, value in os.environ.items() if key != precision.PRIMITIVE_CACHE}
    env["ONEDNN_VERBOSE"] = "profile_create"
    if user_setting:
        env[precision.PRIMITIVE_CACHE] = user_setting
    output = subprocess.run([sys.executable, "-c", COMPILE_PROBE], env=env, cwd=REPO, capture_output=True, text=True, check=True).stdout
    first_shape = [line.split(",")[3] for line in output.splitlines() if ",2x64:64x64," in line]
    assert first_shape == ["create:cache_miss", "create:cache_hit" if user_setting is None else "create:cache_miss"]
