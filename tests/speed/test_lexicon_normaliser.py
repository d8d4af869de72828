"""The engine's alignment head's normaliser (``speed/alignment_head.py``), over several chunks,
against the reference's one line: log Z_n = logsumexp(L w_n + b_L), with its gradients. The whole
head in both engines against the literal equations: ``tests/models/test_alignment_head.py``."""

import pytest
import torch

from rnnsearch_plugin.speed.alignment_head import ROWS, _LogPartition


@pytest.mark.parametrize("rows", [1, ROWS, 2 * ROWS + 7])
def test_chunked_log_partition_is_logsumexp_with_its_gradients(rows):
    generator = torch.Generator().manual_seed(rows)
    shapes = ((rows, 6), (11, 6), (11,))  # words w_n, L, b_L
    words, weight, bias = (torch.randn(*shape, generator=generator, dtype=torch.float64, requires_grad=True) for shape in shapes)
    incoming = torch.randn(rows, generator=generator, dtype=torch.float64)
    chunked = _LogPartition.apply(words, weight, bias)
    reference = (words @ weight.t() + bias).logsumexp(-1)
    torch.testing.assert_close(chunked, reference, rtol=0, atol=1e-12)
    found = torch.autograd.grad((chunked * incoming).sum(), (words, weight, bias))
    expected = torch.autograd.grad((reference * incoming).sum(), (words, weight, bias))
    for ours, theirs in zip(found, expected):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-12)
