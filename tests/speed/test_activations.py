"""tanh by the sigmoid identity and in float32 for half inputs (``speed/activations.py``) against torch's tanh in float64."""

import pytest
import torch

from rnnsearch_plugin.speed.activations import sigmoid_route, tanh


@pytest.mark.parametrize("dtype,atol", [(torch.float64, 1e-15), (torch.float32, 2.5e-7)])
def test_sigmoid_route_to_tanh_matches_torch_tanh_and_its_gradient(dtype, atol):
    """2 sigmoid(2x) - 1 (the model's tanh where torch's CPU kernels are AVX2 ones) against
    torch.tanh, values and gradients, from 0 through saturation to values where 2x overflows a
    sigmoid's exp."""
    x = torch.cat([torch.linspace(-30, 30, 20_001), torch.tensor([0.0, 1e-6, -1e-6, 200.0, -200.0])]).to(dtype)
    ours, reference = x.clone().requires_grad_(), x.clone().requires_grad_()
    grad = torch.rand_like(x)
    trained = sigmoid_route(ours)  # training: through the autograd.Function
    trained.backward(grad)
    torch.tanh(reference).backward(grad)
    torch.testing.assert_close(trained.detach(), torch.tanh(x), rtol=0, atol=atol)
    torch.testing.assert_close(ours.grad, reference.grad, rtol=0, atol=2 * atol)
    with torch.no_grad():  # decoding: the route without an autograd.Function
        torch.testing.assert_close(sigmoid_route(ours), torch.tanh(x), rtol=0, atol=atol)


@pytest.mark.parametrize("by_sigmoid", [False, True])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_tanh_is_taken_in_float32(dtype, by_sigmoid):
    """Under autocast, a half-precision input's tanh comes back in float32, as exact as float32's;
    without autocast, in the input's dtype, within its rounding of the exact value; by either float32 route."""
    x = torch.linspace(-5, 5, 1001).to(dtype)
    exact = torch.tanh(x.double())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        autocast = tanh(x, by_sigmoid)
    assert autocast.dtype == torch.float32
    torch.testing.assert_close(autocast.double(), exact, rtol=0, atol=2.5e-7)
    rounded = tanh(x, by_sigmoid)
    assert rounded.dtype == dtype
    torch.testing.assert_close(rounded.double(), exact, rtol=torch.finfo(dtype).eps, atol=2.5e-7)  # float32 route near 0
