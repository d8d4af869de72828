"""Adadelta a block at a time (``speed/adadelta.py``) against ``torch.optim.Adadelta``: the same
parameters after every step, the same state, and checkpoints that load into either."""
import pytest
import torch

from rnnsearch_plugin.speed import adadelta
from rnnsearch_plugin.speed.adadelta import BlockwiseAdadelta

SETTINGS = {"lr": 1.0, "rho": 0.95, "eps": 1e-6}


def parameters(seed: int) -> list[torch.nn.Parameter]:
    """Shapes whose sizes are not multiples of the block, one under a block, and a transposed
    (non-contiguous) one; float64, so that the comparison is not about rounding."""
    generator = torch.Generator().manual_seed(seed)
    shapes = [(23, 5), (3,), (4, 6)]
    params = [torch.nn.Parameter(torch.randn(shape, generator=generator, dtype=torch.float64)) for shape in shapes]
    params.append(torch.nn.Parameter(torch.randn(6, 9, generator=generator, dtype=torch.float64).t()))
    return params


def run(optimizer: torch.optim.Optimizer, params: list[torch.nn.Parameter], steps: range) -> None:
    for step in steps:
        generator = torch.Generator().manual_seed(100 + step)
        for p in params:
            p.grad = torch.randn(p.shape, generator=generator, dtype=p.dtype) * (step + 1)
        optimizer.step()


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adadelta, "BLOCK", 16)  # (23, 5) -> 8 blocks, the last of 3 values


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_blockwise_adadelta_takes_torchs_steps(small_blocks: None, weight_decay: float) -> None:
    ours, torchs = parameters(0), parameters(0)
    assert not ours[-1].is_contiguous()
    run(BlockwiseAdadelta(ours, weight_decay=weight_decay, **SETTINGS), ours, range(6))
    run(torch.optim.Adadelta(torchs, weight_decay=weight_decay, **SETTINGS), torchs, range(6))
    for p, q, start in zip(ours, torchs, parameters(0)):
        torch.testing.assert_close(p, q, rtol=1e-14, atol=0)
        assert not torch.equal(p, start)


def test_optimizer_checkpoints_interchange_with_torchs_adadelta(small_blocks: None) -> None:
    """Three steps by one, three more by the other from its state_dict, either way round."""
    reference = parameters(1)
    run(torch.optim.Adadelta(reference, **SETTINGS), reference, range(6))
    for first, second in ((BlockwiseAdadelta, torch.optim.Adadelta), (torch.optim.Adadelta, BlockwiseAdadelta)):
        params = parameters(1)
        before = first(params, **SETTINGS)
        run(before, params, range(3))
        after = second(params, **SETTINGS)
        after.load_state_dict(before.state_dict())
        run(after, params, range(3, 6))
        for p, q in zip(params, reference):
            torch.testing.assert_close(p, q, rtol=1e-14, atol=0)
        assert after.state_dict()["state"][0]["step"].item() == 6


def test_sparse_gradients_are_refused() -> None:
    param = torch.nn.Parameter(torch.zeros(4, 2))
    param.grad = torch.zeros(4, 2).to_sparse()
    with pytest.raises(RuntimeError, match="dense gradients"):
        BlockwiseAdadelta([param], **SETTINGS).step()
