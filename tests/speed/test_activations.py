"""tanh by the sigmoid identity and in float32 for half inputs (``speed/activations.py``) against torch's tanh in float64."""

from pathlib import Path

import pytest
import torch

from rnnsearch_plugin.speed import activations, routes
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


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_tanh_is_taken_in_float32(dtype):
    """Under autocast, a half-precision input's tanh comes back in float32, as exact as float32's;
    without autocast, in the input's dtype, within its rounding of the exact value."""
    x = torch.linspace(-5, 5, 1001).to(dtype)
    exact = torch.tanh(x.double())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        autocast = tanh(x)
    assert autocast.dtype == torch.float32
    torch.testing.assert_close(autocast.double(), exact, rtol=0, atol=2.5e-7)
    rounded = tanh(x)
    assert rounded.dtype == dtype
    torch.testing.assert_close(rounded.double(), exact, rtol=torch.finfo(dtype).eps, atol=2.5e-7)  # float32 route near 0


def test_cpuinfo_field_is_the_first_processors_bare_value(tmp_path, monkeypatch):
    """The value of the first line that names the key, without its padding or newline; "" for a key
    no line names, and where there is no /proc/cpuinfo."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD \nflags\t\t: fpu avx2\n\nprocessor\t: 1\nvendor_id\t: Other\n")
    monkeypatch.setattr(routes, "Path", lambda path: cpuinfo if path == "/proc/cpuinfo" else Path(path))
    assert (activations.cpuinfo_field("vendor_id"), activations.cpuinfo_field("flags")) == ("AuthenticAMD", "fpu avx2")
    assert activations.cpuinfo_field("no such key") == ""
    cpuinfo.unlink()
    assert activations.cpuinfo_field("vendor_id") == ""


@pytest.mark.skipif(activations.cpuinfo_field("vendor_id") == "", reason="no x86 /proc/cpuinfo here")
def test_cpuinfo_field_matches_the_whole_key():
    """x86's /proc/cpuinfo has "cpu family" and "cpu MHz" but no "cpu"; "model" and "model name"
    are two fields."""
    assert activations.cpuinfo_field("cpu") == ""
    assert activations.cpuinfo_field("model").isdigit() and not activations.cpuinfo_field("model name").isdigit()
