"""The analytic multiply-add count of A.2 (``tooling/benchmarking/flops.py``) against torch's FLOP counter."""

import sys

import pytest
import torch
from conftest import REPO, build
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(REPO / "tooling"))
from benchmarking.flops import MULTIPLY_ADDS, ModelSize, forward_multiply_adds, measured_multiply_adds  # noqa: E402


@pytest.mark.parametrize("source_length,target_length", [(7, 5), (3, 9)])
def test_analytic_multiply_adds_match_torch_flop_counter(variant, source_length, target_length):
    """The term-by-term count of A.2 = the matrix products torch actually runs in the CPU engine
    (the benchmark's model; the reference takes RNNencdec's C c and C_o c at every step)."""
    model = build(**variant, engine="cpu")
    batch = 3
    source = torch.randint(4, 11, (batch, source_length))
    target = torch.randint(4, 13, (batch, target_length))
    with FlopCounterMode(display=False) as counter:
        model(source, torch.full((batch,), source_length), target)
    expected = forward_multiply_adds(ModelSize.of(model), source_length, target_length)
    assert counter.get_total_flops() == 2 * batch * expected


@pytest.mark.parametrize("score", ["additive", "general"])
def test_a_score_without_a_count_is_counted_by_torch(score):
    """What a new score gets without an entry in MULTIPLY_ADDS: the same as the entries written out."""
    attention = build("rnnsearch", attention=score).decoder.attention
    query_size, annotation_size = 7, 12  # build's decoder_hidden_size and 2 encoder_hidden_size
    assert measured_multiply_adds(attention, query_size, annotation_size, 7, 5) == MULTIPLY_ADDS[type(attention)](attention, 7, 5)
