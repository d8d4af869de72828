"""Model size (A.2.3) and initialisation (B.1)."""

import math
from argparse import Namespace
from types import SimpleNamespace

import pytest
import torch
from conftest import toy_dictionary
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

from rnnsearch_plugin.models.attention import AdditiveAttention
from rnnsearch_plugin.models.gru import GatedRecurrentUnit


def build_arch(arch: str, vocab: int, target_vocab: int | None = None, **options: object) -> torch.nn.Module:
    args = Namespace(arch=arch, **options)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = SimpleNamespace(source_dictionary=toy_dictionary(vocab), target_dictionary=toy_dictionary(target_vocab or vocab))
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task)


def appendix_a2_weight_matrices(K_x: int, K_y: int, m: int, n: int, n_a: int, l: int, attention: bool) -> dict:
    """Every weight matrix Appendix A.2 lists, with its shape, from the paper alone: A.2.1's
    encoder, A.2.2's decoder, alignment model and deep output. RNNencdec (A.2.2's closing note):
    one forward RNN whose c = fwd h_{T_x} (size n) replaces the annotations (2n), no alignment."""
    context = 2 * n if attention else n
    matrices = {"E-bar": (m, K_x), "E": (m, K_y), "W_s": (n, n)}
    for rnn in ["fwd ", "bwd ", ""] if attention else ["fwd ", ""]:
        matrices |= {rnn + name: (n, m) for name in ("W", "W_z", "W_r")}
        matrices |= {rnn + name: (n, n) for name in ("U", "U_z", "U_r")}
    matrices |= {name: (n, context) for name in ("C", "C_z", "C_r")}
    if attention:
        matrices |= {"v_a": (n_a,), "W_a": (n_a, n), "U_a": (n_a, 2 * n)}
    return matrices | {"W_o": (K_y, l), "U_o": (2 * l, n), "V_o": (2 * l, m), "C_o": (2 * l, context)}


def implementation_biases(K_y: int, n: int, n_a: int, l: int, attention: bool) -> dict:
    """A.2 omits every bias; the implementation's documented choice (docs/paper.md, models/initialization.py):
    b_z, b_r, b on the inputs of each GRU, and biases on W_s, U_a (b_a), U_o and W_o."""
    grus = ["fwd ", "bwd ", ""] if attention else ["fwd ", ""]
    biases = {rnn + "b_z, b_r, b": 3 * n for rnn in grus} | {"W_s": n, "U_o": 2 * l, "W_o": K_y}
    return biases | ({"b_a": n_a} if attention else {})


@pytest.mark.parametrize("kind,total", [("rnnsearch", 80_449_964), ("rnnencdec", 68_584_964)])
@pytest.mark.parametrize(
    "sizes",
    [
        {},  # the paper's (A.2.3): m = 620, n = n' = 1000, l = 500, 30k vocabularies
        {
            "encoder_embed_dim": 7,
            "decoder_embed_dim": 7,
            "encoder_hidden_size": 11,
            "decoder_hidden_size": 11,
            "attention_hidden_size": 13,
            "decoder_out_embed_dim": 5,
        },  # every size different: no term hides another
    ],
)
def test_weights_are_appendix_a2s_matrices_and_biases_the_documented_ones(kind, total, sizes):
    K_x, K_y = (30_000, 30_000) if not sizes else (50, 70)
    model = build_arch(f"{kind}_wmt14", K_x, K_y, **sizes)
    m, n, l = sizes.get("encoder_embed_dim", 620), sizes.get("encoder_hidden_size", 1000), sizes.get("decoder_out_embed_dim", 500)
    n_a, attention = sizes.get("attention_hidden_size", 1000), kind == "rnnsearch"
    special = 4  # fairseq's <s> <pad> </s> <unk>
    matrices = appendix_a2_weight_matrices(K_x + special, K_y + special, m, n, n_a, l, attention)
    biases = implementation_biases(K_y + special, n, n_a, l, attention)
    parameters = dict(model.named_parameters())
    counted = {
        group: sum(p.numel() for name, p in parameters.items() if name.endswith(".bias") == (group == "bias"))
        for group in ("weight", "bias")
    }
    assert counted == {"weight": sum(math.prod(shape) for shape in matrices.values()), "bias": sum(biases.values())}
    if not sizes:  # the README's table
        assert counted["weight"] + counted["bias"] == total


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
    recurrent = {
        id(u)
        for g in model.modules()
        if isinstance(g, GatedRecurrentUnit)
        for u in [g.gate_recurrence.weight, g.candidate_recurrence.weight]
    }
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


def test_general_attention_is_one_matrix_initialised_as_b1_initialises_the_papers():
    """--attention general (not the paper's): W_a, n x 2n, no bias, N(0, 0.001^2) as B.1's W_a;
    everything else as the paper's model has it."""
    general, additive = (build_arch("rnnsearch_small", 2000, attention=name) for name in ("general", "additive"))
    ((name, weight),) = general.decoder.attention.named_parameters()
    assert name == "bilinear.weight" and weight.shape == (256, 512)
    assert weight.std().item() == pytest.approx(0.001, rel=0.05)
    others = {name: p.shape for name, p in general.named_parameters() if ".attention." not in name}
    assert others == {name: p.shape for name, p in additive.named_parameters() if ".attention." not in name}
