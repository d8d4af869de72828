"""Two routes to the same numbers: incremental decoding vs the teacher-forced forward, one
sentence alone vs inside a padded batch, beam search of width 1 vs a greedy loop."""

import pytest
import torch
from conftest import SOURCES, TARGETS, build, pad_batch
from fairseq.sequence_generator import SequenceGenerator

from rnnsearch_plugin.models.attention import ATTENTIONS, Attention


def forward_log_probs(model, sources, targets, left_pad=True):
    pad = model.encoder.padding_idx
    src = pad_batch(sources, pad, left=left_pad)
    lengths = torch.tensor([len(s) for s in sources])
    out = model(src, lengths, pad_batch(targets, pad, left=False))
    return model.get_normalized_probs(out, log_probs=True), out[1]["attn"][0]


def across_sentences(rows: int, step: int, generator: torch.Generator) -> torch.Tensor:
    """Any permutation of the rows: every source-side tensor must move."""
    return torch.randperm(rows, generator=generator, device=generator.device)


def within_beams(rows: int, step: int, generator: torch.Generator) -> torch.Tensor:
    """What fairseq's beam search does: rows 2b, 2b+1 hold sentence b; hypotheses are shuffled
    (or one is copied over its sibling) inside each sentence's pair, so the source-side tensors
    stay where they are; at step 3 the last sentence finishes and leaves the batch."""
    pairs = torch.randint(0, 2, (rows // 2, 2), generator=generator, device=generator.device) + torch.arange(0, rows, 2)[:, None]
    return (pairs[:-1] if step == 3 else pairs).flatten()


@pytest.mark.parametrize("reordering", [across_sentences, within_beams])
def test_incremental_decoding_with_beam_reordering_equals_full_forward(variant, engine, reordering):
    model = build(**variant, engine=engine)
    pad = model.encoder.padding_idx
    sources = [s for s in SOURCES for _ in range(2)]  # two hypotheses per sentence
    targets = [TARGETS[(b + k) % len(TARGETS)] for b in range(len(SOURCES)) for k in range(2)]
    full, _ = forward_log_probs(model, sources, targets)
    prev = pad_batch(targets, pad, left=False)
    src = pad_batch(SOURCES, pad, left=True)
    encoder_out = model.encoder(src, torch.tensor([len(s) for s in SOURCES]))
    expand = torch.arange(len(SOURCES)).repeat_interleave(2)  # as fairseq's generator does
    encoder_out = model.encoder.reorder_encoder_out(encoder_out, expand)
    state: dict = {}
    order = torch.arange(len(sources))  # row r holds the hypothesis (prefix) order[r]
    generator = torch.Generator(torch.get_default_device()).manual_seed(0)
    for step in range(prev.size(1)):
        if step > 0:
            new_order = reordering(len(order), step, generator)
            order = order[new_order]
            model.decoder.reorder_incremental_state_scripting(state, new_order)
            encoder_out = model.encoder.reorder_encoder_out(encoder_out, new_order)
        out = model.decoder(prev[order, : step + 1], encoder_out, incremental_state=state)
        step_log_probs = model.get_normalized_probs(out, log_probs=True)[:, -1]
        torch.testing.assert_close(step_log_probs, full[order, step], rtol=0, atol=1e-6)
        if reordering is within_beams and engine == "cpu":  # the engine holds the source side once per live sentence
            assert encoder_out["padding_mask"].size(0) == len(order) // 2


@pytest.mark.parametrize("left_pad", [True, False])
def test_sentence_scores_do_not_depend_on_batch_or_padding(variant, engine, left_pad):
    model = build(**variant, engine=engine)
    batched, batched_attn = forward_log_probs(model, SOURCES, TARGETS, left_pad=left_pad)
    pad = model.encoder.padding_idx
    for b, (source, target) in enumerate(zip(SOURCES, TARGETS)):
        alone, alone_attn = forward_log_probs(model, [source], [target])
        torch.testing.assert_close(batched[b, : len(target)], alone[0], rtol=0, atol=1e-6)
        if batched_attn is not None:  # same weights on the same words, wherever the padding is
            real = pad_batch(SOURCES, pad, left=left_pad)[b].ne(pad)
            torch.testing.assert_close(batched_attn[b, : len(target)][:, real], alone_attn[0], rtol=0, atol=1e-9)


def test_attention_is_a_distribution_over_real_source_words(engine):
    model = build("rnnsearch", engine=engine)
    _, attn = forward_log_probs(model, SOURCES, TARGETS)  # B x T x S, left padded
    src = pad_batch(SOURCES, model.encoder.padding_idx, left=True)
    padding = src.eq(model.encoder.padding_idx)
    assert attn.shape == (len(SOURCES), max(map(len, TARGETS)), src.size(1))
    torch.testing.assert_close(attn.sum(-1), torch.ones(attn.shape[:2], dtype=attn.dtype))
    assert attn.masked_select(padding[:, None, :].expand_as(attn)).abs().max() == 0
    assert (attn.masked_select(~padding[:, None, :].expand_as(attn)) > 0).all()


def test_every_parameter_receives_a_gradient(variant, engine):
    model = build(**variant, engine=engine).train()
    log_probs, _ = forward_log_probs(model, SOURCES, TARGETS)
    targets = pad_batch([t[1:] + [2] for t in TARGETS], model.encoder.padding_idx, left=False)
    loss = torch.nn.functional.nll_loss(log_probs.flatten(0, 1), targets.flatten(), ignore_index=model.encoder.padding_idx)
    loss.backward()
    missing = [name for name, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
    assert missing == []


def test_rnnencdec_never_computes_attention(monkeypatch, engine):
    model = build("rnnencdec", engine=engine)

    def forbidden(*args, **kwargs):
        raise AssertionError("RNNencdec called the alignment model")

    monkeypatch.setattr(Attention, "forward", forbidden)
    for score in ATTENTIONS.values():
        monkeypatch.setattr(score, "prepare", forbidden)
    _, attn = forward_log_probs(model, SOURCES, TARGETS)
    assert attn is None
    assert not any(isinstance(m, Attention) for m in model.modules())
    # its forward states, which only an alignment head reads
    assert model.encoder(torch.tensor([SOURCES[0]]), None)["annotations"].shape == (1, len(SOURCES[0]), model.encoder.hidden_size)


def beam_search(model, beam: int) -> list[list[dict]]:
    generator = SequenceGenerator([model], model.decoder.dictionary, beam_size=beam, max_len_a=0, max_len_b=8)
    pad = model.encoder.padding_idx
    sample = {
        "net_input": {
            "src_tokens": pad_batch(SOURCES, pad, left=True),
            "src_lengths": torch.tensor([len(s) for s in SOURCES]),
        }
    }
    return generator.generate([model], sample)


def test_beam_search_without_attention_finds_the_same_hypotheses(engine):
    """fairseq's generators ask for the attention only with --print-alignment (need_attn)."""
    model = build("rnnsearch", engine=engine)
    with_attention = beam_search(model, beam=3)
    model.make_generation_fast_(need_attn=False)  # what prepare_for_inference_ does without it
    without = beam_search(model, beam=3)
    for found, expected in zip(without, with_attention):
        assert [h["tokens"].tolist() for h in found] == [h["tokens"].tolist() for h in expected]
        torch.testing.assert_close(torch.stack([h["score"] for h in found]), torch.stack([h["score"] for h in expected]))
        assert found[0]["attention"].numel() == 0 and expected[0]["attention"].numel() > 0
    _, attn = forward_log_probs(model, SOURCES, TARGETS)  # a full forward (alignments) still has it
    assert attn is not None


def greedy(model, source: list[int], max_len: int) -> list[int]:
    """Greedy search through full forwards over the growing prefix (no incremental state)."""
    eos, pad = model.decoder.dictionary.eos(), model.decoder.dictionary.pad()
    prefix = [eos]
    for _ in range(max_len):
        log_probs, _ = forward_log_probs(model, [source], [prefix])
        step = log_probs[0, -1].clone()
        step[pad] = float("-inf")
        token = int(step.argmax())
        prefix.append(token)
        if token == eos:
            break
    else:
        prefix.append(eos)
    return prefix[1:]


def test_beam_search_scores_equal_a_teacher_forced_pass(variant, engine):
    """Every hypothesis's per-token scores from beam search are the log-probabilities a full
    forward over that hypothesis gives its tokens."""
    model = build(**variant, engine=engine)
    eos = model.decoder.dictionary.eos()
    for source, hypotheses in zip(SOURCES, beam_search(model, beam=3)):
        for hypothesis in hypotheses:
            tokens = hypothesis["tokens"]
            log_probs, _ = forward_log_probs(model, [source], [[eos] + tokens[:-1].tolist()])
            forced = log_probs[0].gather(-1, tokens[:, None]).squeeze(-1)
            torch.testing.assert_close(hypothesis["positional_scores"], forced.to(hypothesis["positional_scores"].dtype), rtol=0, atol=1e-5)


def test_beam_size_one_equals_greedy_search(variant, engine):
    model = build(**variant, engine=engine)
    for source, hypothesis in zip(SOURCES, beam_search(model, beam=1)):
        assert hypothesis[0]["tokens"].tolist() == greedy(model, source, max_len=8)
