"""chunked_cross_entropy's --alignment-lambda (guided alignment, not the paper's): on batches that
fairseq's own collater builds from sentences of different lengths, the term equals a literal
computation sentence by sentence and fairseq's label_smoothed_cross_entropy_with_alignment's; at 0
it changes nothing; its gradient reaches the alignment model; a training batch without links adds
0; the log of a bfloat16 or float16 attention is taken in float32; and it refuses what cannot
serve it."""

import math
from types import SimpleNamespace

import pytest
import torch
from conftest import build, toy_dictionary
from fairseq.criterions.label_smoothed_cross_entropy_with_alignment import LabelSmoothedCrossEntropyCriterionWithAlignment
from fairseq.data.language_pair_dataset import collate

from rnnsearch_plugin.criterions import chunked_cross_entropy
from rnnsearch_plugin.criterions.chunked_cross_entropy import ChunkedCrossEntropyCriterion
from rnnsearch_plugin.errors import UserInputError

# (source words, target words, Pharaoh links i-j) for build()'s dictionaries (11 source, 13 target entries)
PAIRS = [
    ([4, 5, 6, 7, 8], [4, 5, 6, 7], "0-0 1-0 2-1 4-3"),  # target word 2 has no link, word 0 two
    ([9, 10], [8, 9, 10], "1-0 0-2"),
    ([4, 6, 8], [11, 12, 4, 5, 6], ""),  # a pair without links
    ([10, 9, 8, 7, 6, 5, 4], [7, 8], "6-1 0-1 3-1 2-0"),
]
LAMBDA = 0.7


def links(text: str) -> list[tuple[int, int]]:
    return [tuple(int(k) for k in link.split("-")) for link in text.split()]


def batch(left_pad_source: bool = True) -> dict:
    """fairseq's LanguagePairDataset batch of PAIRS, with its alignments and weights."""
    samples = [
        {
            "id": index,
            "source": torch.tensor(source + [2]),
            "target": torch.tensor(target + [2]),
            "alignment": torch.tensor(links(text), dtype=torch.int).view(-1),
        }
        for index, (source, target, text) in enumerate(PAIRS)
    ]
    return collate(samples, pad_idx=1, eos_idx=2, left_pad_source=left_pad_source)


def without_alignments(sample: dict) -> dict:
    return {key: value for key, value in sample.items() if key not in ("alignments", "align_weights")}


def task(load_alignments: bool = True, align_dataset: object = None) -> SimpleNamespace:
    return SimpleNamespace(
        target_dictionary=toy_dictionary(13),
        cfg=SimpleNamespace(load_alignments=load_alignments),
        datasets={"train": SimpleNamespace(align_dataset=align_dataset)},
    )


def criterion(alignment_lambda: float = LAMBDA, **task_options) -> ChunkedCrossEntropyCriterion:
    return ChunkedCrossEntropyCriterion(task(**task_options), False, 0.0, 5, alignment_lambda=alignment_lambda)


def literal_alignment_loss(model) -> float:
    """sum over sentences and their linked target words i of -sum_j p_ij log alpha_ij, p_ij = 1 / n_i
    on word i's n_i links, the model run on each sentence alone (no padding)."""
    total = 0.0
    for source, target, text in PAIRS:
        _, extra = model.extract_features(torch.tensor([source + [2]]), None, torch.tensor([[2] + target]))
        alpha = extra["attn"][0][0]  # T x S
        for i in {i for _, i in links(text)}:
            linked = [j for j, k in links(text) if k == i]
            total -= sum(math.log(alpha[i, j].item()) / len(linked) for j in linked)
    return total


@pytest.mark.parametrize("left_pad_source", [True, False])
def test_equals_the_literal_computation_and_fairseqs(left_pad_source):
    model = build("rnnsearch").train()
    sample = batch(left_pad_source)
    assert sample["net_input"]["src_tokens"][:, 0 if left_pad_source else -1].eq(1).any()  # padding on that side
    loss, _, logging_output = criterion()(model, sample)
    expected = literal_alignment_loss(model)
    assert expected > 1.0
    guided = logging_output["alignment_loss"]
    assert guided.dtype == torch.float64
    assert guided.item() == pytest.approx(expected, rel=1e-7)  # fairseq's collater gives the weights 1 / n_i in float32
    fairseqs = LabelSmoothedCrossEntropyCriterionWithAlignment.compute_alignment_loss(None, sample, model(**sample["net_input"]))
    assert guided.item() == pytest.approx(fairseqs.item(), rel=1e-14)
    plain = criterion(0.0)(model, sample)[0]
    torch.testing.assert_close(loss, plain + LAMBDA * guided.to(loss.dtype))
    assert logging_output["nll_loss"] == plain


def gradients(model, loss: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad()
    loss.backward()
    return [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in model.parameters()]


def test_lambda_zero_is_the_plain_loss_and_does_no_extra_work(monkeypatch):
    model = build("rnnsearch").train()
    monkeypatch.setattr(chunked_cross_entropy, "alignment_loss", None)  # called, it would fail
    results = []
    for sample in (batch(), without_alignments(batch())):
        loss, sample_size, logging_output = criterion(0.0, load_alignments=False)(model, sample)
        results.append((loss, sample_size, logging_output, gradients(model, loss)))
    (loss, size, log, grads), (plain_loss, plain_size, plain_log, plain_grads) = results
    assert torch.equal(loss, plain_loss) and size == plain_size and log == plain_log
    assert "alignment_loss" not in log and "nll_loss" not in log
    assert all(torch.equal(g, h) for g, h in zip(grads, plain_grads))


def test_the_gradient_reaches_the_alignment_model():
    """The criterion's gradient is the plain one plus lambda times the alignment term's; the term's,
    by backward, matches a central difference along a random direction in every parameter
    (float64) and is nonzero on W_a, U_a, b_a and v_a."""
    model = build("rnnsearch").train()
    sample = batch()

    def term() -> torch.Tensor:
        attention = model.extract_features(**sample["net_input"])[1]["attn"][0]
        return chunked_cross_entropy.alignment_loss(attention, sample["alignments"], sample["align_weights"])

    guided, plain, alone = (gradients(model, loss) for loss in (criterion()(model, sample)[0], criterion(0.0)(model, sample)[0], term()))
    for g, p, a in zip(guided, plain, alone):
        torch.testing.assert_close(g, p + LAMBDA * a, rtol=1e-5, atol=1e-6)
    attention = dict(model.decoder.attention.named_parameters())
    assert len(attention) == 4 and all(p.grad.abs().sum() > 0 for p in attention.values())
    torch.manual_seed(1)
    direction = [torch.randn_like(p) for p in model.parameters()]
    analytic = sum((a * d).sum() for a, d in zip(alone, direction))
    step, values = 1e-6, []
    with torch.no_grad():
        for sign in (1, -2, 1):
            for parameter, d in zip(model.parameters(), direction):
                parameter.add_(sign * step * d)
            values.append(term())
    numeric = (values[0] - values[1]) / (2 * step)
    assert analytic.item() == pytest.approx(numeric.item(), rel=1e-6)


def test_refusals():
    model = build("rnnsearch").train()
    with pytest.raises(UserInputError, match="the weight of guided alignment is 0"):
        criterion(-0.1)
    with pytest.raises(UserInputError, match="add --load-alignments"):
        criterion(load_alignments=False)
    with pytest.raises(UserInputError, match="RNNencdec has no attention"):
        criterion()(build("rnnencdec").train(), batch())
    without = without_alignments(batch())
    with pytest.raises(UserInputError, match="the training data has no alignments"):
        criterion()(model, without)
    validating = criterion()  # a validation batch: the training split alone has alignments
    assert "alignment_loss" not in validating(model.eval(), without)[2]


def test_a_training_batch_without_links_adds_nothing_and_logs_zero():
    """A batch whose pairs happen to have no links (the collater then gives no alignments): the
    plain loss, and alignment_loss 0 so that every process logs the same fields."""
    model = build("rnnsearch").train()
    without = without_alignments(batch())
    loss, _, logging_output = criterion(align_dataset=object())(model, without)
    assert logging_output["alignment_loss"] == 0 and torch.equal(loss, criterion(0.0)(model, without)[0])


def test_low_precision_attention_is_logged_in_float32_and_an_underflowed_link_stays_finite():
    """alpha in bfloat16 (--amp) or float16 (--fp16): the log in float32, a weight of exactly 0
    clamped at float32's smallest normal number (-log of it, 87.3, times the link's weight) with a
    zero gradient rather than inf and NaN."""
    attention = torch.tensor([[[0.25, 0.75, 0.0], [0.5, 0.0, 0.5]]])  # 1 x T=2 x S=3
    alignments = torch.tensor([[1, 0], [2, 0], [0, 1]])  # target word 0: source words 1 and 2 (alpha 0)
    weights = torch.tensor([0.5, 0.5, 1.0])
    expected = -(0.5 * math.log(0.75) + 0.5 * math.log(torch.finfo(torch.float32).tiny) + math.log(0.5))
    for dtype in (torch.bfloat16, torch.float16):
        alpha = attention.to(dtype).requires_grad_()
        loss = chunked_cross_entropy.alignment_loss(alpha, alignments, weights)
        loss.backward()
        assert loss.dtype == torch.float32 and loss.item() == pytest.approx(expected, rel=1e-6)
        assert torch.isfinite(alpha.grad).all() and alpha.grad[0, 0, 2] == 0
        assert alpha.grad[0, 0, 1].item() == pytest.approx(-0.5 / 0.75, rel=1e-2)
