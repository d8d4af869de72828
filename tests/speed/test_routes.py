"""Every route of ``speed/`` that was measured on CPUs only is taken for CPU tensors and not for a
tensor on any other device (``speed/routes.py``). Tensors on the 'meta' device (shapes without
values) stand for a GPU's: the routing is what is tested here, not the arithmetic, which the
model tests check on each device (``--device``, tests/conftest.py)."""

from types import SimpleNamespace

import pytest
import torch

from rnnsearch_plugin.speed import activations, beam_reordering, precision, step_products

DEVICES = ["cpu", "meta"]


def forbid(monkeypatch, owner, name: str) -> None:
    """Make ``owner.name`` raise, so that taking that route fails the test."""

    def taken(*args, **kwargs):
        raise AssertionError(f"took the CPU route {name}")

    monkeypatch.setattr(owner, name, taken)


def takes_cpu_route(where: str, monkeypatch, owner, name: str, run) -> bool:
    """Whether ``run()`` calls ``owner.name`` (forbidden here) for tensors on ``where``."""
    with monkeypatch.context() as patch:
        forbid(patch, owner, name)
        try:
            run()
        except AssertionError as error:
            assert "took the CPU route" in str(error)
            return True
    return False


@pytest.mark.parametrize("where", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_tanh(monkeypatch, where, dtype):
    """On the CPU, half precision is upcast to float32, whose route the processor decides (here
    made the sigmoid one); elsewhere ``torch.tanh`` in the input's dtype."""
    monkeypatch.setattr(activations, "sigmoid_route_is_faster", lambda: True)
    x = torch.ones(4, 3, dtype=dtype, device=where)
    assert takes_cpu_route(where, monkeypatch, activations, "sigmoid_route", lambda: activations.tanh(x)) == (where == "cpu")
    if where == "meta":
        assert activations.tanh(x).dtype == dtype


@pytest.mark.parametrize("where", DEVICES)
def test_step_products(monkeypatch, where):
    monkeypatch.setattr(step_products, "product_dtype", lambda like: like.dtype)  # autocast knows no 'meta'
    x = torch.ones(4, 3, device=where, requires_grad=True)
    layer = torch.nn.Linear(3, 5, bias=False, device=where)
    product = step_products.StepProducts(x).multiply(x, layer)
    assert (type(product.grad_fn).__name__ == "_StepProductBackward") == (where == "cpu")


@pytest.mark.parametrize("where", DEVICES)
def test_beam_reordering(where):
    """Two sentences, two hypotheses each; sentence 1 leaves: the source side keeps one row per
    sentence on the CPU, one per hypothesis elsewhere."""
    tensors = {
        beam_reordering.SENTENCE: torch.tensor([0, 0, 1, 1], device=where),
        "state": torch.zeros(4, 3, device=where),
        "projected": torch.zeros(2, 5, 3, device=where),
    }
    if where == "meta":  # the meta device holds no values: the CPU route would need them
        tensors[beam_reordering.SENTENCE] = torch.empty(4, dtype=torch.long, device=where)
    kept = beam_reordering.select_rows(tensors, torch.tensor([0, 1], device=where), per_hypothesis_keys=("state",))
    assert kept["projected"].size(0) == (1 if where == "cpu" else 2)


@pytest.mark.parametrize("where", DEVICES)
def test_cpu_bfloat16_autocast(where):
    with precision.cpu_autocast(True, torch.ones(2, device=where)):
        assert torch.is_autocast_enabled("cpu") == (where == "cpu")


@pytest.mark.parametrize("cuda", [False, True])
def test_amp_asks_for_cpu_bfloat16_only_without_cuda(monkeypatch, cuda):
    """fairseq trains on the GPU where CUDA is available; there --amp is its own autocast."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    assert precision.requested(SimpleNamespace(amp=True)) == (not cuda)
