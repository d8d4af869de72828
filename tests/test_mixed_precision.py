"""Half precision (issue 6): the models train under bfloat16 autocast as they do in float32, and a
float16 model (what fairseq's --fp16 makes of it) keeps the attention a finite distribution
over the real source words. fairseq's own --fp16/--bf16/--amp need a GPU; these tests run on
every device torch sees, so a GPU machine checks the same properties there."""
import pytest
import torch

from conftest import initialized, pad_batch

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
UPDATES = 200
VOCAB = 40


def small_model(kind: str, device: str) -> torch.nn.Module:
    """A float32 model with the paper's initialisation (B.1), seeded."""
    sizes = {name: 32 for name in ("encoder_embed_dim", "encoder_hidden_size", "decoder_embed_dim",
                                   "decoder_hidden_size", "decoder_out_embed_dim")}
    return initialized(kind, (VOCAB, VOCAB), attention_hidden_size=32, **sizes).to(device)


def reversal_batches(device: str, count: int = 8) -> list[tuple[torch.Tensor, ...]]:
    """Batches of 16 pairs: the target is the source reversed; lengths 3-9, so both sides are padded."""
    generator = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(count):
        lengths = torch.randint(3, 10, (16,), generator=generator).tolist()
        sources = [torch.randint(4, VOCAB + 4, (n,), generator=generator).tolist() + [2] for n in lengths]
        targets = [s[:-1][::-1] + [2] for s in sources]
        src = pad_batch(sources, 1, left=True)
        prev = pad_batch([[2] + t[:-1] for t in targets], 1, left=False)
        tgt = pad_batch(targets, 1, left=False)
        batches.append(tuple(x.to(device) for x in (src, torch.tensor([len(s) for s in sources]), prev, tgt)))
    return batches


def train_losses(kind: str, device: str, dtype: torch.dtype) -> list[float]:
    """Per-token losses of UPDATES Adam updates, the forward pass under autocast to ``dtype``."""
    model = small_model(kind, device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches, losses = reversal_batches(device), []
    for update in range(UPDATES):
        src, lengths, prev, tgt = batches[update % len(batches)]
        with torch.autocast(device, dtype=dtype, enabled=dtype != torch.float32):
            logits = model(src, lengths, prev)[0]
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tgt.flatten(), ignore_index=1)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", DEVICES)
def test_bfloat16_training_tracks_float32(kind, device):
    full, half = train_losses(kind, device, torch.float32), train_losses(kind, device, torch.bfloat16)
    assert all(torch.isfinite(torch.tensor(half)))
    windows = [(sum(full[i:i + 25]) / 25, sum(half[i:i + 25]) / 25) for i in range(0, UPDATES, 25)]
    assert windows[-1][0] < 0.9 * windows[0][0]  # it learns, so the losses compared below move
    # Same start, same batches: every 25-update window within 10% of float32's mean loss (the
    # runs drift apart as rounding compounds), the whole run's mean within 2%.
    assert all(abs(h - f) < 0.1 * f for f, h in windows)
    assert abs(sum(half) - sum(full)) < 0.02 * sum(full)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_model_keeps_attention_a_distribution_over_real_words(device, dtype):
    model = small_model("rnnsearch", device).eval()
    src, lengths, prev, _ = reversal_batches(device, count=1)[0]
    with torch.no_grad():
        reference = model.get_normalized_probs(model(src, lengths, prev), log_probs=True)
        logits, extra = model.to(dtype)(src, lengths, prev)  # fairseq --fp16 / --bf16: the whole model in half
        log_probs = model.get_normalized_probs((logits, extra), log_probs=True)
    alpha, padding = extra["attn"][0].float(), src.eq(1)[:, None, :].expand_as(extra["attn"][0])
    assert torch.isfinite(logits).all() and torch.isfinite(alpha).all()
    assert alpha.masked_select(padding).abs().max() == 0
    assert (alpha.masked_select(~padding) > 0).all()
    torch.testing.assert_close(alpha.sum(-1), torch.ones_like(alpha.sum(-1)), rtol=0, atol=1e-2)
    real = prev.ne(1)
    torch.testing.assert_close(log_probs.float()[real], reference[real], rtol=0, atol=0.1)
