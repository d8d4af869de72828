"""The engines against each other: the CPU engine (``speed/cpu.py``) runs the reference's
parameters (``models/``) to the same numbers in float64, in training and in beam search, and
hands over to the reference on a device it was not measured on; every checkpoint loads into
either (``tests/models/test_equations.py`` compares each with the literal equations)."""

import pytest
import torch
from conftest import SOURCES, TARGETS, build, pad_batch
from fairseq.sequence_generator import SequenceGenerator

from rnnsearch_plugin.speed import cpu
from rnnsearch_plugin.speed.beam_reordering import SENTENCE


def loss_and_gradients(model, left_pad: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    pad = model.encoder.padding_idx
    logits, extra = model(
        pad_batch(SOURCES, pad, left=left_pad), torch.tensor([len(s) for s in SOURCES]), pad_batch(TARGETS, pad, left=False)
    )
    log_probs = torch.log_softmax(logits, dim=-1)
    weights = torch.rand(log_probs.shape, generator=torch.Generator(log_probs.device).manual_seed(0), dtype=torch.float64)
    real = pad_batch(TARGETS, pad, left=False).ne(pad)[..., None]
    (log_probs * weights * real).sum().backward()
    gradients = {name: parameter.grad for name, parameter in model.named_parameters()}
    return log_probs.detach() * real, gradients, extra["attn"][0]


@pytest.mark.parametrize("left_pad", [True, False])
def test_the_engine_computes_what_the_reference_computes(variant, left_pad):
    reference, engine = build(**variant, engine="reference"), build(**variant, engine="cpu")
    assert engine.state_dict().keys() == reference.state_dict().keys()
    engine.load_state_dict(reference.state_dict())
    expected, expected_gradients, expected_attn = loss_and_gradients(reference, left_pad)
    found, gradients, attn = loss_and_gradients(engine, left_pad)
    torch.testing.assert_close(found, expected, rtol=0, atol=1e-12)
    if expected_attn is not None:
        torch.testing.assert_close(attn, expected_attn, rtol=0, atol=1e-12)
    for name, gradient in gradients.items():
        torch.testing.assert_close(gradient, expected_gradients[name], rtol=0, atol=1e-12, msg=name)


def search(model, beam: int) -> list[list[dict]]:
    pad = model.encoder.padding_idx
    sample = {"net_input": {"src_tokens": pad_batch(SOURCES, pad, left=True), "src_lengths": torch.tensor([len(s) for s in SOURCES])}}
    return SequenceGenerator([model], model.decoder.dictionary, beam_size=beam, max_len_a=0, max_len_b=8).generate([model], sample)


def test_beam_search_finds_the_same_hypotheses_in_either_engine(variant):
    reference, engine = build(**variant, engine="reference"), build(**variant, engine="cpu")
    for found, expected in zip(search(engine, 3), search(reference, 3)):
        assert [h["tokens"].tolist() for h in found] == [h["tokens"].tolist() for h in expected]
        torch.testing.assert_close(
            torch.stack([h["score"] for h in found]), torch.stack([h["score"] for h in expected]), rtol=0, atol=1e-12
        )


def test_auto_hands_over_to_the_reference_where_the_engine_was_not_measured(variant, monkeypatch):
    """--engine auto on another device (here: the CPU engine told it was not measured on the CPU)
    runs the reference's route, to the same numbers."""
    reference, auto = build(**variant, engine="reference"), build(**variant, engine="auto")
    assert type(auto.decoder) is cpu.CpuDecoder
    src = pad_batch(SOURCES, auto.encoder.padding_idx, left=True)
    assert SENTENCE in auto.encoder(src)
    monkeypatch.setattr(cpu, "measured_on", lambda device: False)
    assert SENTENCE not in auto.encoder(src)
    for found, expected in zip(search(auto, 3), search(reference, 3)):
        assert [h["tokens"].tolist() for h in found] == [h["tokens"].tolist() for h in expected]
