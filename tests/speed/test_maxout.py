"""speed/maxout.py against the definition of A.2.2 (the maximum of each pool of k consecutive
units), written as ``amax`` over the pools, forward and backward."""
import pytest
import torch

from rnnsearch_plugin.speed.maxout import maxout


@pytest.mark.parametrize("pool", [2, 3])
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_maxout_and_its_gradient_match_the_maximum_of_each_pool(pool, dtype):
    generator = torch.Generator().manual_seed(0)
    pre_maxout = torch.randn(3, 5, 4 * pool, generator=generator, dtype=torch.float64).to(dtype).requires_grad_()
    incoming = torch.randn(3, 5, 4, generator=generator, dtype=torch.float64).to(dtype)
    expected = pre_maxout.unflatten(-1, (-1, pool)).amax(-1)
    (expected_grad,) = torch.autograd.grad(expected, pre_maxout, incoming)
    ties = (pre_maxout.unflatten(-1, (-1, pool)) == expected[..., None]).sum(-1) > 1
    assert not ties.any()  # amax shares a tie's gradient: the comparison below assumes none
    ours = maxout(pre_maxout, pool)
    (ours_grad,) = torch.autograd.grad(ours, pre_maxout, incoming)
    assert torch.equal(ours, expected) and torch.equal(ours_grad, expected_grad)
    with torch.no_grad():
        assert torch.equal(maxout(pre_maxout, pool), expected)


def test_a_tied_pool_gives_its_whole_gradient_to_its_first_maximal_unit():
    pre_maxout = torch.tensor([[1.0, 3.0, 3.0, 2.0, 5.0, 5.0]], requires_grad=True)
    ours = maxout(pre_maxout, 3)
    (grad,) = torch.autograd.grad(ours, pre_maxout, torch.tensor([[10.0, 20.0]]))
    assert ours.tolist() == [[3.0, 5.0]]
    assert grad.tolist() == [[0.0, 10.0, 0.0, 0.0, 20.0, 0.0]]


def test_pool_size_one_is_the_identity():
    pre_maxout = torch.randn(2, 3, requires_grad=True)
    ours = maxout(pre_maxout, 1)
    (grad,) = torch.autograd.grad(ours, pre_maxout, torch.ones(2, 3))
    assert torch.equal(ours, pre_maxout) and torch.equal(grad, torch.ones(2, 3))
