"""speed/dropout.py against what torch.nn.Dropout does: in training each unit is zeroed with
probability p and the rest scaled by 1 / (1 - p), the gradient goes through the same mask;
outside training the input passes unchanged."""
import pytest
import torch

from rnnsearch_plugin.speed.dropout import Dropout


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_units_are_dropped_with_probability_p_and_the_rest_scaled(dtype):
    torch.manual_seed(0)
    p, units = 0.3, 400_000
    x = torch.rand(units, dtype=torch.float64).add_(0.5).to(dtype).requires_grad_()
    dropout = Dropout(p).train()
    y = dropout(x)
    (grad,) = torch.autograd.grad(y, x, torch.ones_like(y))
    dropped = y == 0
    scale = torch.tensor(1 / (1 - p), dtype=dtype)
    assert y.dtype == dtype
    assert abs(dropped.double().mean().item() - p) < 4 * (p * (1 - p) / units) ** 0.5  # 4 standard errors
    assert torch.equal(y[~dropped], x.detach()[~dropped] * scale)
    assert torch.equal(grad, torch.where(dropped, 0.0, scale).to(dtype))


def test_outside_training_and_at_zero_the_input_passes_unchanged():
    x = torch.randn(5, 7)
    assert Dropout(0.5).eval()(x) is x
    assert Dropout(0.0).train()(x) is x


def test_one_drops_everything_and_the_mask_follows_the_seed():
    x = torch.randn(50, 40)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))
    masks = []
    for _ in range(2):
        torch.manual_seed(7)
        masks.append(Dropout(0.5).train()(x) == 0)
    assert torch.equal(masks[0], masks[1]) and 0 < masks[0].sum() < x.numel()


def test_a_probability_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        Dropout(1.5)
