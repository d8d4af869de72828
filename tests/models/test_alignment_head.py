"""The alignment head (``models/alignment_head.py``) against its literal equation, one sentence,
one target word and one source word at a time in float64 (its gradients too), in both engines;
and what it must leave alone: translation, the attention, checkpoints without a head."""

import pytest
import torch
from conftest import SOURCES, TARGETS, build, pad_batch
from fairseq.sequence_generator import SequenceGenerator
from test_equations import literal_decoding, run_rnn

from rnnsearch_plugin.errors import UserInputError
from rnnsearch_plugin.models.decoder import emitted_tokens
from rnnsearch_plugin.speed import scores

EOS = 2


def with_head(kind: str, context: str = "causal", engine: str = "reference", **options: object) -> torch.nn.Module:
    return build(kind, engine=engine, alignment_head=True, alignment_head_size=5, alignment_head_context=context, **options)


def literal_head(model, source: list[int], prev_output: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """a_ij and log p_a(y_i) of one sentence pair, as the module's docstring writes them."""
    decoder, head = model.decoder, model.decoder.alignment_head
    _, states, x, h = literal_decoding(model, source, prev_output)
    emitted = prev_output[1:] + [EOS]
    if head.following_words is not None:  # r_{i+1}: a backward GRU over E y_T ... E y_{i+1}
        read_back = run_rnn(head.following_words, [decoder.embed_tokens.weight[y] for y in emitted][::-1])[::-1]
        following = read_back[1:] + [torch.zeros_like(states[0])]
        queries = [torch.cat([s, r]) for s, r in zip(states, following)]
    else:
        queries = states
    W_b, U_b, b_b, v_b = (
        head.query_projection.weight,
        head.annotation_projection.weight,
        head.annotation_projection.bias,
        head.score.weight[0],
    )
    P, b_P, L, b_L = head.source_word.weight, head.source_word.bias, head.lexicon.weight, head.lexicon.bias
    alignments, likelihoods = [], []
    for q, y in zip(queries, emitted):
        energies = torch.stack([v_b @ torch.tanh(W_b @ q + U_b @ h_j + b_b) for h_j in h])
        prior = torch.exp(energies) / torch.exp(energies).sum()  # pi_ij
        lexical = torch.stack([torch.softmax(L @ torch.tanh(P @ x_j + b_P) + b_L, dim=0)[y] for x_j in x])  # p(y_i | x_j)
        joint = prior * lexical
        alignments.append(joint / joint.sum())
        likelihoods.append(torch.log(joint.sum()))
    return torch.stack(alignments), torch.stack(likelihoods)


def batched_head(model, left_pad: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    pad = model.encoder.padding_idx
    src = pad_batch(SOURCES, pad, left=left_pad)
    _, extra = model(src, torch.tensor([len(s) for s in SOURCES]), pad_batch(TARGETS, pad, left=False))
    return extra["attn"][0], extra["alignment_log_likelihood"][0], src.ne(pad)


def weighted(alignment: torch.Tensor, likelihood: torch.Tensor) -> torch.Tensor:
    """A scalar that reads every a_ij and every log p_a(y_i) with weights of their own."""
    generator = torch.Generator(alignment.device).manual_seed(0)
    return (alignment * torch.rand(alignment.shape, generator=generator, dtype=alignment.dtype)).sum() + (
        likelihood * torch.rand(likelihood.shape, generator=generator, dtype=likelihood.dtype)
    ).sum()


@pytest.mark.parametrize("context", ["causal", "full"])
@pytest.mark.parametrize("left_pad", [True, False])
def test_head_matches_its_literal_equation_with_its_gradients(kind, engine, context, left_pad):
    model = with_head(kind, context, engine)
    alignment, likelihood, real = batched_head(model, left_pad)
    batched, literal = 0.0, 0.0
    for b, (source, target) in enumerate(zip(SOURCES, TARGETS)):
        expected_alignment, expected_likelihood = literal_head(model, source, target)
        found = alignment[b, : len(target)][:, real[b]]
        torch.testing.assert_close(found, expected_alignment, rtol=0, atol=1e-10)
        torch.testing.assert_close(likelihood[b, : len(target)], expected_likelihood, rtol=0, atol=1e-10)
        batched = batched + weighted(found, likelihood[b, : len(target)])
        literal = literal + weighted(expected_alignment, expected_likelihood)
    parameters = dict(model.named_parameters())
    for name, ours, reference in zip(
        parameters,
        torch.autograd.grad(batched, list(parameters.values()), allow_unused=True),
        torch.autograd.grad(literal, list(parameters.values()), allow_unused=True),
    ):
        if reference is None:  # what neither route reads (the output layer, the padding rows of E)
            continue
        torch.testing.assert_close(ours, reference, rtol=0, atol=1e-10, msg=name)
    assert any(name.startswith("decoder.alignment_head.") for name in parameters)


def test_the_engines_head_scores_a_few_target_words_at_a_time_as_it_scores_them_all(kind, monkeypatch):
    """In a forced pass the engine sums U_b h_j + W_b q_i for a few of the T queries at a time
    (``scores.ENERGY_VALUES``): one query per chunk gives the a_ij and gradients of all at once."""
    model = with_head(kind, "full", "cpu")
    whole = batched_head(model, left_pad=True)
    monkeypatch.setattr(scores, "ENERGY_VALUES", 1)  # one of the T queries per chunk
    chunked = batched_head(model, left_pad=True)
    for found, expected in zip(chunked, whole):
        torch.testing.assert_close(found, expected, rtol=0, atol=1e-12)
    parameters = list(model.parameters())
    grads = [torch.autograd.grad(weighted(*run[:2]), parameters, allow_unused=True) for run in (chunked, whole)]
    for found, expected in zip(*grads):
        assert (found is None) == (expected is None)
        if found is not None:
            torch.testing.assert_close(found, expected, rtol=0, atol=1e-12)


def test_alignment_is_zero_on_padding_and_each_row_sums_to_one(kind, engine):
    alignment, _, real = batched_head(with_head(kind, engine=engine), left_pad=True)
    assert bool((alignment.masked_select(~real[:, None, :].expand_as(alignment)) == 0).all())
    torch.testing.assert_close(alignment.sum(-1), torch.ones(alignment.shape[:2], dtype=alignment.dtype), rtol=0, atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
def test_emitted_tokens_are_the_targets_fairseq_trains_on(left):
    pad = 1
    prev = pad_batch(TARGETS, pad, left=left)
    expected = pad_batch([t[1:] + [EOS] for t in TARGETS], pad, left=left)
    assert emitted_tokens(prev, pad, EOS).tolist() == expected.tolist()


def search(model) -> list[list[dict]]:
    pad = model.encoder.padding_idx
    sample = {"net_input": {"src_tokens": pad_batch(SOURCES, pad, left=True), "src_lengths": torch.tensor([len(s) for s in SOURCES])}}
    return SequenceGenerator([model], model.decoder.dictionary, beam_size=3, max_len_a=0, max_len_b=8).generate([model], sample)


def test_translation_never_reads_the_head(kind, engine):
    """The same weights with and without a head: the same log-probabilities, the same attention,
    the same beam search, hypotheses and scores."""
    plain, headed = build(kind, engine=engine), with_head(kind, engine=engine)
    headed.load_state_dict(plain.state_dict())  # the head keeps its own initialisation
    pad = plain.encoder.padding_idx
    inputs = (pad_batch(SOURCES, pad, left=True), torch.tensor([len(s) for s in SOURCES]), pad_batch(TARGETS, pad, left=False))
    (expected, expected_extra), (found, extra) = plain(*inputs), headed(*inputs)
    assert torch.equal(found, expected)
    assert (
        extra["attention"][0] is None
        if expected_extra["attn"][0] is None
        else torch.equal(extra["attention"][0], expected_extra["attn"][0])
    )
    assert not torch.equal(extra["attn"][0], extra["attention"][0]) if extra["attention"][0] is not None else extra["attn"][0] is not None
    for with_it, without in zip(search(headed), search(plain)):
        assert [h["tokens"].tolist() for h in with_it] == [h["tokens"].tolist() for h in without]
        assert torch.equal(torch.stack([h["score"] for h in with_it]), torch.stack([h["score"] for h in without]))


def test_head_only_training_leaves_every_other_parameter_frozen(kind):
    model = with_head(kind, train_alignment_head_only=True)
    training = {name for name, parameter in model.named_parameters() if parameter.requires_grad}
    assert training and training == {name for name in dict(model.named_parameters()) if name.startswith("decoder.alignment_head.")}
    with pytest.raises(UserInputError, match="--train-alignment-head-only trains the alignment head: add --alignment-head"):
        build(kind, train_alignment_head_only=True)


def test_a_model_without_a_head_loads_into_one_with_its_head_as_initialised(kind):
    plain, headed = build(kind, seed=1), with_head(kind)
    head = {name: value.clone() for name, value in headed.state_dict().items() if "alignment_head" in name}
    headed.load_state_dict(plain.state_dict())
    for name, value in headed.state_dict().items():
        assert torch.equal(value, head[name] if name in head else plain.state_dict()[name]), name
    with pytest.raises(RuntimeError, match="Unexpected key"):  # the other way round stays an error
        plain.load_state_dict(headed.state_dict())
