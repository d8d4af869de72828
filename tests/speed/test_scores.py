"""The engine's attention (``speed/scores.py``) for a score it has no faster route for: that
score's own ``energies``, on keys repeated per hypothesis, give alpha as ``Attention.forward`` does."""

import pytest
import torch

from rnnsearch_plugin.models.attention import GeneralAttention
from rnnsearch_plugin.speed import scores
from rnnsearch_plugin.speed.tricks import Tricks


class UnregisteredScore(GeneralAttention):
    """Luong's general score under a class of its own, which ``FAST_ENERGIES`` does not know."""


@pytest.mark.parametrize("hypotheses", [1, 3])
def test_a_score_without_a_fast_route_runs_its_own_energies_per_hypothesis(hypotheses):
    generator = torch.Generator().manual_seed(0)
    registered, unregistered = GeneralAttention(4, 6, 5).double(), UnregisteredScore(4, 6, 5).double()
    with torch.no_grad():
        registered.bilinear.weight.normal_(generator=generator)
    unregistered.load_state_dict(registered.state_dict())
    assert type(unregistered) not in scores.FAST_ENERGIES and type(registered) in scores.FAST_ENERGIES
    groups, length = 2, 5
    annotations = torch.randn(groups, length, 6, dtype=torch.float64, generator=generator)
    padding = torch.zeros(groups, length, dtype=torch.bool)
    padding[1, :2] = True  # a shorter sentence, padded on the left
    query = torch.randn(groups * hypotheses, 4, dtype=torch.float64, generator=generator)  # s_{i-1} of each hypothesis
    rows = registered(query, registered.prepare(annotations).repeat_interleave(hypotheses, 0), padding.repeat_interleave(hypotheses, 0))
    expected = rows.view(groups, hypotheses, length)  # Attention.forward, one row per hypothesis
    fallback = scores.attend(unregistered, query, scores.prepare(unregistered, annotations), padding, Tricks())
    fast = scores.attend(registered, query, scores.prepare(registered, annotations), padding, Tricks())
    torch.testing.assert_close(fallback, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(fast, expected, rtol=0, atol=1e-12)
    assert bool((fallback[1, :, :2] == 0).all())
