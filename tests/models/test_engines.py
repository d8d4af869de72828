"""The engines against each other: the CPU engine (``speed/cpu.py``) runs the reference's
parameters (``models/``) to the same numbers in float64, in training and in beam search, with
every trick and with each left out (``--engine-tricks``); ``auto`` is the CPU engine where the model
runs on the CPU; every checkpoint loads into either (``tests/models/test_equations.py`` compares
each with the literal equations)."""

import pytest
import torch
from conftest import SOURCES, TARGETS, build, pad_batch
from fairseq.sequence_generator import SequenceGenerator

from rnnsearch_plugin.models.decoder import ConditionalGRUDecoder
from rnnsearch_plugin.speed import cpu
from rnnsearch_plugin.speed.tricks import Tricks

LEFT_OUT = [*(",".join(other for other in Tricks.names() if other != trick) for trick in Tricks.names()), "none"]


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
@pytest.mark.parametrize("tricks", ["all", *LEFT_OUT])
def test_the_engine_computes_what_the_reference_computes(variant, left_pad, tricks):
    reference, engine = build(**variant, engine="reference"), build(**variant, engine="cpu", engine_tricks=tricks)
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


@pytest.mark.parametrize("tricks", ["all", *LEFT_OUT])
def test_beam_search_finds_the_same_hypotheses_in_either_engine(variant, tricks):
    reference, engine = build(**variant, engine="reference"), build(**variant, engine="cpu", engine_tricks=tricks)
    for found, expected in zip(search(engine, 3), search(reference, 3)):
        assert [h["tokens"].tolist() for h in found] == [h["tokens"].tolist() for h in expected]
        torch.testing.assert_close(
            torch.stack([h["score"] for h in found]), torch.stack([h["score"] for h in expected]), rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("grouped", [True, False])
def test_beam_search_holds_the_source_side_once_per_sentence_with_beam_reordering(variant, grouped):
    """What the trick is for (``speed/beam_reordering.py``): at every step of a beam of 3 the
    decoder reads one row of annotations per sentence, not one per hypothesis as without it."""
    engine = build(**variant, engine="cpu", engine_tricks="all" if grouped else "tanh-route")
    rows, read = [], engine.decoder.extract_features

    def counted(prev_output_tokens, encoder_out, incremental_state=None, **unused):
        rows.append((len(prev_output_tokens), len(encoder_out["padding_mask"])))
        return read(prev_output_tokens, encoder_out, incremental_state)

    engine.decoder.extract_features = counted
    search(engine, 3)
    assert len(rows) > 3 and all(hypotheses == (3 if grouped else 1) * sentences for hypotheses, sentences in rows)


@pytest.mark.parametrize("cuda,cpu_option,engine", [(False, False, "cpu"), (True, False, "reference"), (True, True, "cpu")])
def test_auto_is_the_cpu_engine_where_the_model_runs_on_the_cpu(variant, monkeypatch, cuda, cpu_option, engine):
    """Where fairseq places the model: on the CPU without CUDA or with --cpu, else on the GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    decoder = build(**variant, engine="auto", cpu=cpu_option).decoder
    assert type(decoder) is (cpu.CpuDecoder if engine == "cpu" else ConditionalGRUDecoder)
