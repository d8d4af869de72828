"""Model size (A.2.3), its multiply-add count, initialisation (B.1) and the training rule (B.2)."""
from argparse import Namespace
from types import SimpleNamespace

import pytest
import torch
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY
from fairseq.optim import build_optimizer
from omegaconf import OmegaConf
from torch.utils.flop_counter import FlopCounterMode

from conftest import build, toy_dictionary
from rnnsearch_plugin.attention import AdditiveAttention
from rnnsearch_plugin.flops import ModelSize, forward_multiply_adds
from rnnsearch_plugin.gru import GatedRecurrentUnit
from rnnsearch_plugin.optim import PaperAdadeltaConfig


def build_arch(arch: str, vocab: int, **options: object) -> torch.nn.Module:
    args = Namespace(arch=arch, **options)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = SimpleNamespace(source_dictionary=toy_dictionary(vocab), target_dictionary=toy_dictionary(vocab))
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task)


def gru_parameters(m: int, n: int, context: int = 0) -> int:
    """[W_z; W_r; W] (3n x m), [U_z; U_r; U] (3n x n), [C_z; C_r; C] (3n x context), 3n biases."""
    return 3 * n * m + 3 * n * n + 3 * n * context + 3 * n


def test_rnnsearch_wmt14_has_the_paper_size():
    K, m, n, n_a, l = 30_000 + 4, 620, 1000, 1000, 500  # 30k shortlist + <s> <pad> </s> <unk>
    encoder = K * m + 2 * gru_parameters(m, n)  # shared E-bar, forward and backward GRUs
    decoder = (
        K * m + gru_parameters(m, n, context=2 * n)  # E, decoder GRU with C, C_z, C_r
        + n * n + n  # W_s (+ bias) for s_0
        + n_a * n + n_a * 2 * n + n_a + n_a  # W_a, U_a (+ bias b_a), v_a
        + 2 * l * n + 2 * l + 2 * l * m + 2 * l * 2 * n  # U_o (+ bias), V_o, C_o
        + K * l + K  # W_o (+ bias)
    )
    model = build_arch("rnnsearch_wmt14", 30_000)
    count = sum(p.numel() for p in model.parameters())
    assert count == encoder + decoder == 80_449_964  # "about 80.4M"


def test_rnnencdec_wmt14_size():
    K, m, n, l = 30_004, 620, 1000, 500
    expected = (K * m + gru_parameters(m, n)) + (
        K * m + gru_parameters(m, n, context=n) + n * n + n + 2 * l * (n + 1 + m + n) + K * l + K
    )
    model = build_arch("rnnencdec_wmt14", 30_000)
    assert sum(p.numel() for p in model.parameters()) == expected


def test_encoder_dropout_out_drops_annotations_in_training_only():
    """--encoder-dropout-out reaches the annotations h_j and nothing else; --dropout leaves it at 0."""
    assert build_arch("rnnsearch_small", 50, dropout=0.3).encoder.dropout_out.p == 0
    model = build_arch("rnnsearch_small", 50, dropout=0.0, encoder_dropout_out=0.5)
    src = torch.randint(4, 50, (8, 12))
    model.eval()
    kept = model.encoder(src)
    model.train()
    torch.manual_seed(0)
    dropped = model.encoder(src)
    zeros = dropped["annotations"] == 0
    assert 0.4 < zeros.float().mean() < 0.6
    torch.testing.assert_close(dropped["annotations"][~zeros], 2 * kept["annotations"][~zeros])
    torch.testing.assert_close(dropped["summary"], kept["summary"])  # s_0 reads bwd h_1 undropped


def test_initialisation_follows_appendix_b1():
    model = build_arch("rnnsearch_small", 2000)
    recurrent = {id(u) for g in model.modules() if isinstance(g, GatedRecurrentUnit) for u in [g.gate_recurrence.weight, g.candidate_recurrence.weight]}
    for module in model.modules():
        if isinstance(module, GatedRecurrentUnit):
            for matrix in module.recurrent_matrices():
                torch.testing.assert_close(matrix @ matrix.T, torch.eye(matrix.size(0)), atol=1e-5, rtol=0)
        if isinstance(module, AdditiveAttention):
            for weight in (module.query_projection.weight, module.annotation_projection.weight):
                assert weight.std().item() == pytest.approx(0.001, rel=0.05)
            assert module.score.weight.abs().max() == 0
    alignment = {id(p) for a in model.modules() if isinstance(a, AdditiveAttention) for p in a.parameters()}
    for name, parameter in model.named_parameters():
        if name.endswith("bias"):
            assert parameter.abs().max() == 0, name
        elif id(parameter) not in recurrent | alignment:
            assert parameter.std().item() == pytest.approx(0.01, rel=0.05), name


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
    cfg = OmegaConf.structured(PaperAdadeltaConfig(lr=[1.0]))
    cfg._name = "rnnsearch_adadelta"
    optimizer = build_optimizer(cfg, params)
    for grads in steps:
        for p, g in zip(params, grads):
            p.grad = g.clone()
        norm = optimizer.clip_grad_norm(1.0)
        after = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
        assert after.item() == pytest.approx(min(norm.item(), 1.0), rel=1e-12)
        optimizer.step()
    expected = zeiler_adadelta(start, steps, rho=0.95, eps=1e-6, clip=1.0)
    for p, e in zip(params, expected):
        torch.testing.assert_close(p.detach(), e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("source_length,target_length", [(7, 5), (3, 9)])
def test_analytic_multiply_adds_match_torch_flop_counter(kind, source_length, target_length):
    """flops.py's term-by-term count of A.2 = the matrix products torch actually runs."""
    model = build(kind)
    batch = 3
    source = torch.randint(4, 11, (batch, source_length))
    target = torch.randint(4, 13, (batch, target_length))
    with FlopCounterMode(display=False) as counter:
        model(source, torch.full((batch,), source_length), target)
    expected = forward_multiply_adds(ModelSize.of(model), source_length, target_length)
    assert counter.get_total_flops() == 2 * batch * expected
