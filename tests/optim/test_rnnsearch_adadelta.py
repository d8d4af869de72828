"""The training rule of Appendix B.2 (``rnnsearch_adadelta``) against Zeiler's Adadelta written out."""

import pytest
import torch
from fairseq.optim import build_optimizer
from omegaconf import OmegaConf

from rnnsearch_plugin.optim.rnnsearch_adadelta import PaperAdadeltaConfig


def zeiler_adadelta(params, grads_per_step, rho, eps, clip):
    """Adadelta (Zeiler 2012, Algorithm 1) after rescaling the whole gradient to norm `clip`."""
    x = [p.clone() for p in params]
    square_grad = [torch.zeros_like(p) for p in params]
    square_delta = [torch.zeros_like(p) for p in params]
    for grads in grads_per_step:
        norm = torch.sqrt(sum((g * g).sum() for g in grads))
        if norm > clip:
            grads = [g * clip / norm for g in grads]
        for k, g in enumerate(grads):
            square_grad[k] = rho * square_grad[k] + (1 - rho) * g * g
            delta = -torch.sqrt(square_delta[k] + eps) / torch.sqrt(square_grad[k] + eps) * g
            square_delta[k] = rho * square_delta[k] + (1 - rho) * delta * delta
            x[k] = x[k] + delta
    return x


def test_optimizer_computes_appendix_b2():
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(5, 3, dtype=torch.float64)), torch.nn.Parameter(torch.randn(4, dtype=torch.float64))]
    start = [p.detach().clone() for p in params]
    steps = [[torch.randn_like(p) * scale for p in params] for scale in (3.0, 0.01, 2.0, 0.2, 5.0)]
    cfg = OmegaConf.structured(PaperAdadeltaConfig(lr=[1.0], clip_norm=1.0))
    cfg._name = "rnnsearch_adadelta"
    optimizer = build_optimizer(cfg, params)
    for grads in steps:
        for p, g in zip(params, grads):
            p.grad = g.clone()
        norm = optimizer.clip_grad_norm(1.0)
        after = torch.sqrt(sum((p.grad**2).sum() for p in params))
        assert after.item() == pytest.approx(min(norm.item(), 1.0), rel=1e-12)
        optimizer.step()
    expected = zeiler_adadelta(start, steps, rho=0.95, eps=1e-6, clip=1.0)
    for p, e in zip(params, expected):
        torch.testing.assert_close(p.detach(), e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lr,clip_norm,warned", [(1.0, 1.0, False), (0.25, 0.0, True), (1.0, 0.0, True), (0.5, 1.0, True)])
def test_adadelta_warns_once_when_not_run_as_appendix_b2(caplog, lr, clip_norm, warned):
    """Without --lr 1.0 --clip-norm 1.0, fairseq's defaults (0.25, no clipping) would run silently."""
    cfg = OmegaConf.structured(PaperAdadeltaConfig(lr=[lr], clip_norm=clip_norm))
    cfg._name = "rnnsearch_adadelta"
    with caplog.at_level("WARNING", logger="rnnsearch_plugin.optim.rnnsearch_adadelta"):
        build_optimizer(cfg, [torch.nn.Parameter(torch.zeros(2))])
    warnings = [record.getMessage() for record in caplog.records if record.name == "rnnsearch_plugin.optim.rnnsearch_adadelta"]
    assert len(warnings) == int(warned)
    assert all(f"--lr {lr} --clip-norm {clip_norm}, not Appendix B.2's --lr 1.0 --clip-norm 1.0" in w for w in warnings)
