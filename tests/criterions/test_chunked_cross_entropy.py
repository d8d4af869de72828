"""chunked_cross_entropy against fairseq's own cross_entropy and label_smoothed_cross_entropy on the
same model and batch: the same loss, sample size, logged fields and gradients, without ever holding
a B x T x vocabulary tensor."""

from argparse import Namespace
from types import SimpleNamespace

import pytest
import torch
from conftest import initialized, pad_batch, toy_dictionary
from fairseq import metrics
from fairseq.criterions.cross_entropy import CrossEntropyCriterion
from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY
from torch.utils._python_dispatch import TorchDispatchMode

from rnnsearch_plugin.criterions import chunked_cross_entropy
from rnnsearch_plugin.criterions.chunked_cross_entropy import ChunkedCrossEntropyCriterion
from rnnsearch_plugin.errors import UserInputError

VOCAB = (30, 200)
SOURCES = [[10, 4, 11, 12, 13, 5, 2], [4, 5, 6, 7, 2], [8, 9, 2], [14, 2]]  # longest first, as fairseq's lstm needs
TARGETS = [[11, 12, 13, 14, 15, 16, 4, 2], [4, 5, 6, 7, 8, 2], [9, 10, 2], [17, 18, 19, 2]]


def sample() -> dict:
    prev = pad_batch([[2] + t[:-1] for t in TARGETS], 1, left=False)
    return {
        "net_input": {
            "src_tokens": pad_batch(SOURCES, 1, left=True),
            "src_lengths": torch.tensor([len(s) for s in SOURCES]),
            "prev_output_tokens": prev,
        },
        "target": pad_batch(TARGETS, 1, left=False),
        "ntokens": sum(len(t) for t in TARGETS),
    }


def spread(model: torch.nn.Module) -> torch.nn.Module:
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.3)
    return model.train()


def model_of(kind: str) -> torch.nn.Module:
    torch.manual_seed(0)
    if kind == "lstm":  # fairseq's own model: the criterion serves any decoder with one output layer
        dictionaries = SimpleNamespace(source_dictionary=toy_dictionary(VOCAB[0]), target_dictionary=toy_dictionary(VOCAB[1]))
        args = Namespace(
            arch="lstm",
            encoder_embed_dim=16,
            encoder_hidden_size=16,
            decoder_embed_dim=16,
            decoder_hidden_size=16,
            decoder_out_embed_dim=16,
            encoder_bidirectional=True,
            dropout=0.0,
            criterion="cross_entropy",
        )
        ARCH_CONFIG_REGISTRY["lstm"](args)
        return spread(ARCH_MODEL_REGISTRY["lstm"].build_model(args, dictionaries))
    sizes = {
        name: 16
        for name in ("encoder_embed_dim", "encoder_hidden_size", "decoder_embed_dim", "decoder_hidden_size", "decoder_out_embed_dim")
    }
    return spread(initialized(kind, VOCAB, attention_hidden_size=16, **sizes))


def task() -> SimpleNamespace:
    return SimpleNamespace(target_dictionary=toy_dictionary(VOCAB[1]))


def loss_and_grads(model, criterion) -> tuple[torch.Tensor, int, dict, dict[str, torch.Tensor]]:
    model.zero_grad()
    loss, sample_size, logging_output = criterion(model, sample())
    loss.backward()
    return loss.detach(), sample_size, logging_output, {n: p.grad.clone() for n, p in model.named_parameters()}


def logged(criterion_class, logging_output: dict) -> dict[str, float]:
    with metrics.aggregate() as aggregated:
        criterion_class.reduce_metrics([logging_output])
    return {key: float(value) for key, value in aggregated.get_smoothed_values().items()}


@pytest.mark.parametrize("kind", ["rnnsearch", "rnnencdec", "lstm"])
@pytest.mark.parametrize("sentence_avg", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_equals_fairseq_criterion(kind, sentence_avg, smoothing):
    model = model_of(kind)
    if smoothing:
        reference = LabelSmoothedCrossEntropyCriterion(task(), sentence_avg, smoothing)
    else:
        reference = CrossEntropyCriterion(task(), sentence_avg)
    chunked = ChunkedCrossEntropyCriterion(task(), sentence_avg, smoothing, output_chunk_size=5)  # several chunks
    expected, chunked_result = loss_and_grads(model, reference), loss_and_grads(model, chunked)
    torch.testing.assert_close(chunked_result[0], expected[0], rtol=1e-5, atol=1e-5)
    assert chunked_result[1] == expected[1]
    for name, grad in expected[3].items():
        torch.testing.assert_close(chunked_result[3][name], grad, rtol=1e-5, atol=1e-5, msg=name)
    expected_log, chunked_log = logged(type(reference), expected[2]), logged(type(chunked), chunked_result[2])
    assert expected_log.keys() == chunked_log.keys()
    for key, value in expected_log.items():
        assert chunked_log[key] == pytest.approx(value, rel=1e-5), key


def test_validation_loss_equals_training_loss():
    model, criterion = model_of("rnnsearch"), ChunkedCrossEntropyCriterion(task(), False, 0.0, 3)
    trained = criterion(model, sample())[0]
    with torch.no_grad():
        validated = criterion(model, sample())[0]
    torch.testing.assert_close(validated, trained.detach())


class LargestTensor(TorchDispatchMode):
    """Records the most elements any operator returns."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for tensor in result if isinstance(result, (tuple, list)) else [result]:
            if isinstance(tensor, torch.Tensor):
                self.largest = max(self.largest, tensor.numel())
        return result


def test_never_holds_a_batch_by_vocabulary_tensor():
    model = model_of("rnnsearch")
    output_layer = model.decoder.output_projection
    largest_parameter = output_layer.weight.numel() + output_layer.bias.numel()  # [W_o ; b_o]: K_y x 17
    assert largest_parameter >= max(p.numel() for p in model.parameters())
    logits = sample()["target"].numel() * len(model.decoder.dictionary)  # B x T x K_y
    assert logits > largest_parameter
    largest = {}
    for criterion in (CrossEntropyCriterion(task(), False), ChunkedCrossEntropyCriterion(task(), False, 0.0, 4)):
        with LargestTensor() as mode:
            criterion(model, sample())[0].backward()
        largest[type(criterion)] = mode.largest
    assert largest[CrossEntropyCriterion] >= logits
    assert largest[ChunkedCrossEntropyCriterion] <= largest_parameter  # a gradient, never all the logits


class ProductShapes(TorchDispatchMode):
    """Records the operand shapes of every matrix product."""

    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[tuple[tuple[int, ...], ...]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket in (torch.ops.aten.mm, torch.ops.aten.addmm, torch.ops.aten.addmm_):
            self.shapes.append(tuple(tuple(a.shape) for a in args if isinstance(a, torch.Tensor) and a.dim() == 2))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("chunk", [14, 32])
def test_the_last_chunk_takes_its_rows_rounded_up(monkeypatch, chunk):
    """21 target positions, ROW_STEP 4: in chunks of 14, a last chunk of 7 rows whose products take 8;
    in one chunk of 32, 24 rows. The loss and gradients are still cross_entropy's."""
    monkeypatch.setattr(chunked_cross_entropy, "ROW_STEP", 4)
    model = model_of("rnnsearch")
    expected = loss_and_grads(model, CrossEntropyCriterion(task(), False))
    with ProductShapes() as mode:
        result = loss_and_grads(model, ChunkedCrossEntropyCriterion(task(), False, 0.0, chunk))
    torch.testing.assert_close(result[0], expected[0], rtol=1e-5, atol=1e-5)
    for name, grad in expected[3].items():
        torch.testing.assert_close(result[3][name], grad, rtol=1e-5, atol=1e-5, msg=name)
    vocab, width = model.decoder.output_projection.weight.shape  # K_y; d, and d + 1 with the bias's row
    rows = {size for shapes in mode.shapes if any(vocab in shape for shape in shapes) for shape in shapes for size in shape} - {
        vocab,
        width,
        width + 1,
    }
    assert rows == ({14, 8} if chunk == 14 else {24})


def test_refuses_a_decoder_without_one_output_layer():
    model = model_of("lstm")
    model.decoder.fc_out = None  # as with --share-decoder-input-output-embed
    with pytest.raises(UserInputError, match="cross_entropy"):
        ChunkedCrossEntropyCriterion(task(), False)(model, sample())


@pytest.mark.parametrize("size", [0, -1])
def test_a_chunk_without_positions_is_refused_in_one_line(size):
    """0 would divide by zero in padded_length, a negative size would make no chunk at all."""
    with pytest.raises(UserInputError, match=rf"^--output-chunk-size {size}: .* default \(512\)$"):
        ChunkedCrossEntropyCriterion(task(), False, 0.0, size)
