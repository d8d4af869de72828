"""``--criterion chunked_cross_entropy``: the output layer, its log-softmax and the negative
log-likelihood (A.2.2: p(y_i | ...) proportional to exp(y_i^T W_o t_i)) and their gradients, a chunk
of target positions at a time, so that no B x T x vocabulary tensor is ever held.

fairseq's ``cross_entropy`` takes the decoder's logits for every position (B x T x K_y), their
log-softmax, and autograd keeps both for the backward pass, with gradients of the same size:
several 100-500 MB buffers per step at the paper's size. Here the decoder returns its features
t_i (``features_only``), padding positions are dropped, and for each chunk of ``--output-chunk-size``
positions the loop computes

    logits = W_o t + b_o      log Z = logsumexp(logits)      loss = log Z - logit_y
    d loss / d logits = softmax(logits) - onehot(y)           (with label smoothing eps, as fairseq's
                                                              label_smoothed_cross_entropy: softmax
                                                              - (1 - eps - eps_i) onehot(y) - eps_i)

and the gradients of W_o, b_o and t, during the forward pass (the loss is a sum, so its gradient
is known before backward is called); backward scales them by the incoming gradient. The products
run in the features' dtype (bfloat16 under ``--amp`` on a CPU, ``speed/precision.py``), the softmax,
the loss and the accumulated W_o gradient in float32, in buffers kept from step to step. The loss, ``--sentence-avg`` and the logged
fields are fairseq's ``cross_entropy``'s (``label_smoothed_cross_entropy``'s with ``--label-smoothing``).
The last chunk's products take its rows rounded up to a multiple of ``ROW_STEP`` (zero rows, which
give no gradient), so that oneDNN compiles them for a few shapes rather than one per batch
(``padded_length``).

Works with any decoder whose ``output_layer`` is one linear map named ``output_projection`` (ours,
fairseq's transformer) or ``fc_out`` (fairseq's lstm).

``--alignment-lambda`` (0, off: the paper's loss, and nothing more is computed) adds guided
alignment, which is not the paper's (Chen et al. 2016, "Guided Alignment Training for
Topic-Aware Neural Machine Translation"; Marian's --guided-alignment, OpenNMT-py's lambda_align):
lambda times the cross-entropy between each linked target word's given links, normalised to sum
to 1, and the model's attention alpha_i over the source words,

    alignment loss = sum over target words i with links  - sum_{j linked to i} (1 / n_i) log alpha_ij

(n_i links of word i; words without links contribute nothing).

What matches fairseq's ``label_smoothed_cross_entropy_with_alignment``, on purpose, so that data
binarised for fairseq's ``transformer_align`` serves here unchanged: the batch fields from
``--load-alignments`` (``sample["alignments"]``: L x 2, the source column, shifted by the
collater past the source's left padding, and row * T + target position, 0-based over the words,
whose eos neither side's links reach; ``sample["align_weights"]``: 1 / n_i, float32), the sum
-sum_links w log alpha, added with weight lambda to the summed loss and so divided by the same
sample size (target tokens, or sentences with ``--sentence-avg``), the ``alignment_loss`` field
(logged in bits per sample-size unit), and the term only in batches that carry alignments (the
training split's; a pair the collater finds a link outside of loses its links there, with a
warning: ``scripts/prepare_data.py --train-alignments`` refuses such a file).
What differs, and why: the attention is the model's one alpha of Eq. 6 (R x T x S, row i the
weights c_i is summed with for target word y_i, in the coordinates of ``src_tokens`` whatever the
padding side, 0 on padding), where fairseq's transformer averages a chosen layer's heads; the log
is taken in float32 at least (alpha in bfloat16 or float16 under ``--amp``, ``--bf16``, ``--fp16``) and of
alpha clamped at float32's smallest normal number, so that a linked word whose weight underflowed
to 0 gives a large finite loss rather than inf and NaN gradients (fairseq takes the log as it is);
a training batch whose pairs have no links logs ``alignment_loss`` 0 rather than nothing, so
that all processes log the same fields (fairseq sums them by the first one's keys); the weight
defaults to 0 (fairseq's, 0.05) so that the paper's loss is the default; and it combines with
the plain or the label-smoothed loss.
With an alignment head (``models/alignment_head.py``, ``--alignment-head``) the alignment that
guided alignment trains is the head's a_ij rather than the attention, and
``--alignment-likelihood-lambda`` (0, off) trains the head without any links: lambda times its
negative log-likelihood of each target word from the source through a_ij alone,
-sum_i log p_a(y_i) (Zenkel et al. 2019), logged as ``alignment_nll`` (bits per sample-size unit).
With ``--train-alignment-head-only`` nothing else trains, so one of the two lambdas must be above
0; the translation's loss, which cannot change, is then not computed in training (``loss`` is the
head's, and ``nll_loss`` is not logged), only in validation.

``--alignment-lambda`` refuses in one line a task without ``--load-alignments``, a model that
returns no attention in training (RNNencdec), and a training batch without alignments when no
dataset the task loaded has any.
"""

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch
from fairseq.criterions import FairseqCriterion, register_criterion
from fairseq.criterions.cross_entropy import CrossEntropyCriterion
from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion
from fairseq.dataclass import FairseqDataclass
from fairseq.logging import metrics
from omegaconf import II
from torch import Tensor, nn

from ..errors import UserInputError

CHUNK_SIZE = 512  # target positions per chunk, --output-chunk-size's default
ROW_STEP = 256  # the last chunk's products take its rows rounded up to a multiple of this (``padded_length``)


@dataclass
class ChunkedCrossEntropyConfig(FairseqDataclass):
    label_smoothing: float = field(default=0.0, metadata={"help": "epsilon for label smoothing, as label_smoothed_cross_entropy (0: none)"})
    output_chunk_size: int = field(
        default=CHUNK_SIZE,
        metadata={"help": "target positions per chunk of the output layer: its buffers hold this many x vocabulary values"},
    )
    alignment_lambda: float = field(
        default=0.0,
        metadata={
            "help": "weight of guided alignment, not the paper's: a cross-entropy between the attention "
            "and each target word's given links (needs --load-alignments; 0: off)"
        },
    )
    alignment_likelihood_lambda: float = field(
        default=0.0,
        metadata={
            "help": "weight of the alignment head's own objective, not the paper's: its negative log-likelihood "
            "of each target word from the source through its alignment alone (needs --alignment-head; 0: off)"
        },
    )
    sentence_avg: bool = II("optimization.sentence_avg")


@dataclass
class OutputLoss:
    """The summed loss and negative log-likelihood of a set of positions (float32 scalars), and,
    when asked for, the loss's gradients with respect to the features, W_o and b_o."""

    loss: Tensor
    nll: Tensor
    grads: Optional[tuple[Tensor, Tensor, Optional[Tensor]]] = None


class Workspace:
    """A chunk's buffers, kept from step to step. A buffer handed out afresh is paid for in page
    faults on first touch, which can cost more than the softmax written into it; a reused one
    is not (``benchmarks/changes.md``). Every buffer is overwritten before it is read."""

    def __init__(self) -> None:
        self.buffers: dict[str, Tensor] = {}

    def get(self, name: str, shape: tuple[int, int], like: Tensor, dtype: torch.dtype) -> Tensor:
        size = shape[0] * shape[1]
        buffer = self.buffers.get(name)
        if buffer is None or buffer.numel() < size or buffer.dtype != dtype or buffer.device != like.device:
            buffer = self.buffers[name] = torch.empty(size, dtype=dtype, device=like.device)
        return buffer[:size].view(shape)


def chunked_output_loss(
    features: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    target: Tensor,
    chunk_size: int,
    smoothing: float,
    with_grads: bool,
    workspace: Workspace,
) -> OutputLoss:
    """features: N x d (real target positions only), weight W_o: K x d, bias: K, target: N."""
    dtype, (vocab, width) = features.dtype, weight.shape
    compute_weight = weight.to(dtype)  # K x d, for d loss / d t = (d loss / d logits) W_o
    columns = compute_weight.t().contiguous()  # d x K, for t W_o^T (a transposed view is slower: benchmarks/changes.md)
    compute_bias = bias.to(dtype) if bias is not None else None
    smooth_each = smoothing / (vocab - 1)  # fairseq's eps_i
    on_target = 1.0 - smoothing - smooth_each
    nll, smooth = features.new_zeros((), dtype=torch.float32), features.new_zeros((), dtype=torch.float32)
    count = len(features)
    features = pad_rows(features, padded_length(count, chunk_size))  # zero rows after the last chunk's real ones
    if with_grads:  # [W_o ; b_o]'s gradient, transposed: [t ; 1]^T d loss / d logits, summed over chunks
        grad_features = torch.empty_like(features)
        grad_parameters = features.new_zeros(width + (bias is not None), vocab, dtype=torch.float32)
    for start in range(0, len(features), chunk_size):
        rows, labels = features[start : start + chunk_size], target[start : start + chunk_size, None]
        real = len(labels)  # the products take every row of the chunk, the rest of the loop the real ones
        products = workspace.get("logits", (len(rows), vocab), rows, dtype)
        if compute_bias is None:
            torch.mm(rows, columns, out=products)
        else:
            torch.addmm(compute_bias, rows, columns, out=products)
        logits, shape = products[:real], (real, vocab)
        nll -= logits.gather(1, labels).sum(dtype=torch.float32)
        if smoothing:
            smooth -= logits.sum(dtype=torch.float32)
        scores = logits if dtype == torch.float32 else workspace.get("scores", shape, rows, torch.float32).copy_(logits)
        log_partition, total = exponentiate_(scores)  # scores = exp(logit - max)
        nll += log_partition.sum()  # -log p(y) = log Z - logit_y
        if smoothing:  # -sum_k log p(k) = K log Z - sum_k logit_k
            smooth += vocab * log_partition.sum()
        if not with_grads:
            continue
        grad_logits = scores.div_(total)  # the softmax, then d loss / d logits
        if smoothing:
            grad_logits.sub_(smooth_each)
        grad_logits.scatter_add_(1, labels, grad_logits.new_full(labels.shape, -on_target))
        if dtype != torch.float32:  # (in float32 grad_logits are the products' first rows already)
            logits.copy_(grad_logits)
        products[real:].zero_()  # the padding rows: no gradient
        torch.mm(products, compute_weight, out=grad_features[start : start + chunk_size])
        if bias is not None:
            rows = torch.cat([rows, rows.new_ones(len(rows), 1)], dim=1)
        rows = rows.t().contiguous()  # (likewise faster than a transposed view)
        if dtype == torch.float32:
            grad_parameters.addmm_(rows, products)
        else:
            grad_parameters += torch.mm(rows, products, out=workspace.get("parameters", grad_parameters.shape, rows, dtype))
    loss = on_target * nll + smooth_each * smooth  # = nll, exactly, without smoothing
    if not with_grads:
        return OutputLoss(loss, nll)
    grad_weight = grad_parameters[:width].t().to(weight.dtype)
    grad_bias = grad_parameters[width].to(bias.dtype) if bias is not None else None
    return OutputLoss(loss, nll, (grad_features[:count], grad_weight, grad_bias))


def padded_length(count: int, chunk_size: int) -> int:
    """``count`` positions rounded up so that the last chunk's rows are a multiple of ``ROW_STEP`` (or
    a whole chunk). oneDNN compiles a primitive for every new shape of a bfloat16 product: with the
    last chunk's rows any number, each batch paid for three; rounded, a run meets a few row counts.
    The loss reads the real rows only and the padding rows' gradient is zeroed, so neither the loss
    nor any gradient changes (``benchmarks/changes.md``)."""
    last = count % chunk_size
    return count if last == 0 else count - last + min(chunk_size, -(-last // ROW_STEP) * ROW_STEP)


def pad_rows(features: Tensor, length: int) -> Tensor:
    """features: N x d -> length x d, zero rows after the N given ones."""
    return torch.nn.functional.pad(features, (0, 0, 0, length - len(features))) if length > len(features) else features


def exponentiate_(scores: Tensor) -> tuple[Tensor, Tensor]:
    """scores (n x K, float32) -> exp(scores - max) in place, and per row log Z = logsumexp and
    Z' = sum_k exp(score_k - max): four passes, no buffer."""
    top = scores.amax(dim=-1, keepdim=True)
    total = scores.sub_(top).exp_().sum(dim=-1, keepdim=True)
    return top + total.log(), total


class _ChunkedOutputLoss(torch.autograd.Function):
    """The loss as a function of (features, W_o, b_o), its gradients computed in the forward pass
    by ``compute`` (``chunked_output_loss`` with the criterion's settings)."""

    @staticmethod
    def forward(
        ctx: Any, features: Tensor, weight: Tensor, bias: Optional[Tensor], target: Tensor, compute: Callable[..., OutputLoss]
    ) -> tuple[Tensor, Tensor]:
        result = compute(features, weight, bias, target, with_grads=True)
        ctx.grads = result.grads
        ctx.mark_non_differentiable(result.nll)
        return result.loss, result.nll

    @staticmethod
    def backward(ctx: Any, grad_loss: Tensor, _grad_nll: Tensor) -> tuple[Optional[Tensor], ...]:
        grad_features, grad_weight, grad_bias = ctx.grads
        del ctx.grads
        scaled = [g * grad_loss.to(g.dtype) if g is not None else None for g in (grad_features, grad_weight, grad_bias)]
        return (*scaled, None, None)


def alignment_loss(attention: Tensor, alignments: Tensor, weights: Tensor) -> Tensor:
    """-sum_links w log alpha (fairseq's ``compute_alignment_loss``): attention B x T x S; alignments
    L x 2, (source column, row * T + target position) as fairseq's collater gives them; weights L
    (1 / links of the link's target word) -> a scalar in float32 (float64 for a float64 attention)."""
    linked = attention.flatten(0, 1)[alignments[:, 1], alignments[:, 0]]
    linked = linked.to(torch.promote_types(linked.dtype, torch.float32))  # bfloat16 and float16 alpha: log in float32
    return -(linked.clamp_min(torch.finfo(linked.dtype).tiny).log() * weights.to(linked.dtype)).sum()


def head_log_likelihood(model: nn.Module, extra: dict[str, Any]) -> Tensor:
    """log p_a(y_i) of the alignment head, B x T; a one-line error for a model without one."""
    found = extra.get("alignment_log_likelihood")
    if not found or found[0] is None:
        raise UserInputError(
            f"--alignment-likelihood-lambda trains an alignment head, and {type(model).__name__} has none: "
            "add --alignment-head, or leave --alignment-likelihood-lambda out"
        )
    return found[0]


def output_projection(decoder: nn.Module) -> nn.Linear:
    """The decoder's output layer as one linear map (W_o, b_o)."""
    for name in ("output_projection", "fc_out"):
        layer = getattr(decoder, name, None)
        if isinstance(layer, nn.Linear) and getattr(decoder, "adaptive_softmax", None) is None:
            return layer
    raise UserInputError(
        f"--criterion chunked_cross_entropy needs a decoder whose output layer is one linear map "
        f"({type(decoder).__name__} has none, or uses an adaptive softmax): use --criterion cross_entropy"
    )


def check_alignment_lambda(alignment_lambda: float, task: Any) -> None:
    """Refuse a negative weight, or guided alignment without fairseq's --load-alignments."""
    if alignment_lambda < 0:
        raise UserInputError(f"--alignment-lambda {alignment_lambda}: the weight of guided alignment is 0 (off) or more")
    if alignment_lambda and not getattr(getattr(task, "cfg", None), "load_alignments", False):
        raise UserInputError(
            "--alignment-lambda needs the training alignments: add --load-alignments, with "
            "train.align.SRC-TGT binarised in the data folder (scripts/prepare_data.py --train-alignments FILE)"
        )


@register_criterion("chunked_cross_entropy", dataclass=ChunkedCrossEntropyConfig)
class ChunkedCrossEntropyCriterion(FairseqCriterion):
    def __init__(
        self,
        task: Any,
        sentence_avg: bool,
        label_smoothing: float = 0.0,
        output_chunk_size: int = CHUNK_SIZE,
        alignment_lambda: float = 0.0,
        alignment_likelihood_lambda: float = 0.0,
    ) -> None:
        super().__init__(task)
        if output_chunk_size < 1:
            raise UserInputError(
                f"--output-chunk-size {output_chunk_size}: a chunk needs at least one target position; "
                f"leave it out for the default ({CHUNK_SIZE})"
            )
        check_alignment_lambda(alignment_lambda, task)
        self.sentence_avg = sentence_avg
        self.smoothing = label_smoothing
        self.alignment_lambda = alignment_lambda
        if alignment_likelihood_lambda < 0:
            raise UserInputError(
                f"--alignment-likelihood-lambda {alignment_likelihood_lambda}: the weight of the head's objective is 0 (off) or more"
            )
        self.likelihood_lambda = alignment_likelihood_lambda
        self.compute = functools.partial(
            chunked_output_loss, chunk_size=output_chunk_size, smoothing=label_smoothing, workspace=Workspace()
        )

    def forward(self, model: nn.Module, sample: dict[str, Any], reduce: bool = True) -> tuple[Tensor, int, dict[str, Any]]:
        if not reduce:
            raise ValueError("chunked_cross_entropy only sums over positions: use --criterion cross_entropy for per-token losses")
        features, extra = model.extract_features(**sample["net_input"])  # B x T x d
        target = model.get_targets(sample, (features, extra))  # B x T
        real = target.ne(self.padding_idx)
        layer = output_projection(model.decoder)
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {"ntokens": sample["ntokens"], "nsentences": sample["target"].size(0), "sample_size": sample_size}
        if self.translation_is_fixed(model, features, layer):
            loss = features.new_zeros((), dtype=torch.float32)
        else:
            loss, nll = self.output_loss(layer, features[real], target[real])
            if self.smoothing or self.alignment_lambda or self.likelihood_lambda:
                logging_output["nll_loss"] = nll.data
        logging_output["loss"] = loss.data
        if self.alignment_lambda:
            guided = self.guided_alignment(model, sample, extra["attn"][0])
            if guided is not None:
                loss = loss + self.alignment_lambda * guided.to(loss.dtype)
                logging_output |= {"loss": loss.data, "alignment_loss": guided.data}
        if self.likelihood_lambda:
            head_nll = -head_log_likelihood(model, extra)[real].sum()
            loss = loss + self.likelihood_lambda * head_nll.to(loss.dtype)
            logging_output |= {"loss": loss.data, "alignment_nll": head_nll.data}
        if model.training and torch.is_grad_enabled() and not loss.requires_grad:
            raise UserInputError(
                "nothing trains: the model's parameters are frozen (--train-alignment-head-only) and no loss "
                "reaches the alignment head; add --alignment-lambda (with links) or --alignment-likelihood-lambda"
            )
        return loss, sample_size, logging_output

    def translation_is_fixed(self, model: nn.Module, features: Tensor, layer: nn.Linear) -> bool:
        """Whether this is a training step in which only the alignment head trains
        (--train-alignment-head-only): the translation's loss then cannot change, and is not computed."""
        head_trains = bool(self.alignment_lambda or self.likelihood_lambda)
        return model.training and head_trains and not (features.requires_grad or layer.weight.requires_grad)

    def guided_alignment(self, model: nn.Module, sample: dict[str, Any], attention: Optional[Tensor]) -> Optional[Tensor]:
        """The alignment loss of a batch with alignments; 0 for a training batch whose pairs have no
        links, so that every training batch logs the same fields (fairseq sums them across
        processes by the first one's keys); None for a validation batch without alignments."""
        if attention is None:
            raise UserInputError(
                f"--alignment-lambda trains the attention or the alignment head, and {type(model).__name__} returns "
                "neither in training (RNNencdec has no attention): use an rnnsearch model, add --alignment-head, "
                "or leave --alignment-lambda out"
            )
        if sample.get("alignments") is not None:
            return alignment_loss(attention, sample["alignments"], sample["align_weights"])
        if not model.training:
            return None
        if not any(getattr(data, "align_dataset", None) is not None for data in self.task.datasets.values()):
            raise UserInputError(
                "--alignment-lambda: the training data has no alignments; binarise them into the "
                "data folder as train.align.SRC-TGT (scripts/prepare_data.py --train-alignments FILE, "
                "or fairseq-preprocess --align-suffix)"
            )
        return attention.new_zeros((), dtype=torch.promote_types(attention.dtype, torch.float32))

    def output_loss(self, layer: nn.Linear, features: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
        if torch.is_grad_enabled() and (features.requires_grad or layer.weight.requires_grad):
            return _ChunkedOutputLoss.apply(features, layer.weight, layer.bias, target, self.compute)
        result = self.compute(features, layer.weight, layer.bias, target, with_grads=False)
        return result.loss, result.nll

    @staticmethod
    def reduce_metrics(logging_outputs: list[dict[str, Any]]) -> None:
        """The fields fairseq's cross_entropy logs, or label_smoothed_cross_entropy's with smoothing
        or guided alignment, and then label_smoothed_cross_entropy_with_alignment's alignment_loss."""
        if any("nll_loss" in log for log in logging_outputs):
            LabelSmoothedCrossEntropyCriterion.reduce_metrics(logging_outputs)
        else:
            CrossEntropyCriterion.reduce_metrics(logging_outputs)
        for name in ("alignment_loss", "alignment_nll"):
            if any(name in log for log in logging_outputs):
                total = sum(float(log.get(name, 0)) for log in logging_outputs)
                sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
                metrics.log_scalar(name, total / sample_size / math.log(2), sample_size, round=3)

    @staticmethod
    def logging_outputs_can_be_summed() -> bool:
        return True
