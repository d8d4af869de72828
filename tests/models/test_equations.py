"""The batched model against a literal transcription of Appendix A.2: one sentence at a time,
one position at a time, one source word at a time, with matrix-vector products only."""

import pytest
import torch
from conftest import SOURCES, TARGETS, build, pad_batch
from torch import Tensor

from rnnsearch_plugin.models.attention import GeneralAttention


def gru(cell, x: Tensor, h: Tensor, c: Tensor | None = None, C: Tensor | None = None) -> Tensor:
    """A.1.1: z, r, h~ and the interpolation, one matrix at a time."""
    W_z, W_r, W = cell.input_projection.weight.chunk(3)
    b_z, b_r, b = cell.input_projection.bias.chunk(3)
    U_z, U_r, U = cell.recurrent_matrices()
    C_z, C_r, C_h = C.chunk(3) if C is not None else (None, None, None)
    context = (lambda M: M @ c) if C is not None else (lambda M: 0.0)
    z = torch.sigmoid(W_z @ x + U_z @ h + context(C_z) + b_z)
    r = torch.sigmoid(W_r @ x + U_r @ h + context(C_r) + b_r)
    h_tilde = torch.tanh(W @ x + U @ (r * h) + context(C_h) + b)
    return (1 - z) * h + z * h_tilde


def run_rnn(cell, embeddings: list[Tensor]) -> list[Tensor]:
    h = torch.zeros(cell.hidden_size, dtype=torch.float64)
    states = []
    for x in embeddings:
        h = gru(cell, x, h)
        states.append(h)
    return states


def score(attention, s: Tensor, h_j: Tensor) -> Tensor:
    """e_ij = a(s_{i-1}, h_j): the paper's (A.1.2), or Luong et al. (2015)'s general score."""
    if isinstance(attention, GeneralAttention):
        return s @ (attention.bilinear.weight @ h_j)
    W_a, U_a, b_a = attention.query_projection.weight, attention.annotation_projection.weight, attention.annotation_projection.bias
    v_a = attention.score.weight[0]
    return v_a @ torch.tanh(W_a @ s + U_a @ h_j + b_a)


def reference_log_probs(model, source: list[int], prev_output: list[int], readout: str) -> Tensor:
    """log p(y_i | y_<i, x) for every i, straight from A.2.1-A.2.2."""
    return literal_decoding(model, source, prev_output, readout)[0]


def literal_decoding(
    model, source: list[int], prev_output: list[int], readout: str = "previous"
) -> tuple[Tensor, list[Tensor], list[Tensor], list[Tensor]]:
    """A.2.1-A.2.2 one position at a time: log p(y_i | y_<i, x) for every i (T x K_y), the states
    s_1 ... s_T, the source embeddings E-bar x_j and the annotations h_j (RNNencdec: fwd h_j)."""
    encoder, decoder = model.encoder, model.decoder
    x = [encoder.embed_tokens.weight[token] for token in source]
    forward = run_rnn(encoder.forward_rnn, x)
    if encoder.backward_rnn is not None:
        backward = run_rnn(encoder.backward_rnn, x[::-1])[::-1]
        annotations = [torch.cat([f, b]) for f, b in zip(forward, backward)]  # h_j
        summary = backward[0]  # bwd h_1
    else:
        annotations, summary = forward, forward[-1]  # c = fwd h_{T_x}
    W_s = decoder.initial_state
    s = torch.tanh(W_s.weight @ summary + W_s.bias)  # s_0
    out = decoder.deep_output
    rows, states = [], []
    for y_prev in prev_output:
        e_y = decoder.embed_tokens.weight[y_prev]
        if decoder.attention is None:
            c = summary
        else:
            energies = torch.stack([score(decoder.attention, s, h_j) for h_j in annotations])
            alpha = torch.exp(energies) / torch.exp(energies).sum()
            c = sum(a * h_j for a, h_j in zip(alpha, annotations))
        s_new = gru(decoder.rnn, e_y, s, c, decoder.context_projection.weight)
        s_read = s if readout == "previous" else s_new
        t_tilde = (
            out.state_projection.weight @ s_read
            + out.state_projection.bias
            + out.embedding_projection.weight @ e_y
            + out.context_projection.weight @ c
        )
        k = out.pool_size
        t = torch.stack([t_tilde[j * k : (j + 1) * k].max() for j in range(len(t_tilde) // k)])
        logits = out.output_projection.weight @ t + out.output_projection.bias
        rows.append(torch.log_softmax(logits, dim=0))
        states.append(s_new)
        s = s_new
    return torch.stack(rows), states, x, annotations


@pytest.mark.parametrize("readout", ["previous", "current"])
@pytest.mark.parametrize("pool", [2, 3])
@pytest.mark.parametrize("left_pad", [True, False])
def test_batched_model_matches_literal_equations(variant, engine, readout, pool, left_pad):
    model = build(**variant, readout_state=readout, pool=pool, engine=engine)
    pad = model.encoder.padding_idx
    src = pad_batch(SOURCES, pad, left=left_pad)
    prev = pad_batch(TARGETS, pad, left=False)
    lengths = torch.tensor([len(s) for s in SOURCES])
    out = model(src, lengths, prev)
    log_probs = model.get_normalized_probs(out, log_probs=True)
    for b, (source, target) in enumerate(zip(SOURCES, TARGETS)):
        expected = reference_log_probs(model, source, target, readout)
        torch.testing.assert_close(log_probs[b, : len(target)].double(), expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("readout", ["previous", "current"])
@pytest.mark.parametrize("left_pad", [True, False])
def test_batched_gradients_match_literal_equations(variant, engine, readout, left_pad):
    """Every parameter's gradient through the batched model (in the CPU engine, the additive score's
    hand-written backward: speed/scores.py) against autograd through the literal transcription, float64."""
    model = build(**variant, readout_state=readout, engine=engine)
    src = pad_batch(SOURCES, model.encoder.padding_idx, left=left_pad)
    prev = pad_batch(TARGETS, model.encoder.padding_idx, left=False)
    logits = model(src, torch.tensor([len(s) for s in SOURCES]), prev)[0]
    log_probs = torch.log_softmax(logits, dim=-1)  # in float64 (fairseq's get_normalized_probs takes float32)
    weights = torch.rand(log_probs.shape, generator=torch.Generator(log_probs.device).manual_seed(0), dtype=torch.float64)
    lengths = [len(t) for t in TARGETS]
    batched = sum((log_probs[b, :n] * weights[b, :n]).sum() for b, n in enumerate(lengths))
    literal = sum(
        (reference_log_probs(model, source, target, readout) * weights[b, : len(target)]).sum()
        for b, (source, target) in enumerate(zip(SOURCES, TARGETS))
    )
    parameters = dict(model.named_parameters())
    for name, ours, reference in zip(
        parameters,
        torch.autograd.grad(batched, list(parameters.values()), allow_unused=True),
        torch.autograd.grad(literal, list(parameters.values()), allow_unused=True),
    ):
        if reference is None:  # a parameter the literal route does not read (the padding rows of E)
            continue
        torch.testing.assert_close(ours, reference, rtol=0, atol=1e-10, msg=name)
