"""tanh by the sigmoid identity and in float32 for half inputs (``speed/activations.py``) against torch's tanh."""
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
    torch.testing.assert_close(tanh(x), torch.tanh(x), rtol=0, atol=atol)  # whichever route this CPU takes


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_tanh_is_float32_tanh(dtype):
    """On the CPU a half-precision tanh is taken in float32: float32 under autocast, else cast back."""
    x = torch.linspace(-5, 5, 1001).to(dtype)
    expected = torch.tanh(x.float())
    assert torch.equal(tanh(x), expected.to(dtype))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.equal(tanh(x), expected)
