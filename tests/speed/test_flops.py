"""The analytic multiply-add count of A.2 (``speed/flops.py``) against torch's FLOP counter."""

import pytest
import torch
from conftest import build
from torch.utils.flop_counter import FlopCounterMode

from rnnsearch_plugin.speed.flops import ModelSize, forward_multiply_adds


@pytest.mark.parametrize("source_length,target_length", [(7, 5), (3, 9)])
def test_analytic_multiply_adds_match_torch_flop_counter(variant, source_length, target_length):
    """The term-by-term count of A.2 = the matrix products torch actually runs."""
    model = build(**variant)
    batch = 3
    source = torch.randint(4, 11, (batch, source_length))
    target = torch.randint(4, 13, (batch, target_length))
    with FlopCounterMode(display=False) as counter:
        model(source, torch.full((batch,), source_length), target)
    expected = forward_multiply_adds(ModelSize.of(model), source_length, target_length)
    assert counter.get_total_flops() == 2 * batch * expected
