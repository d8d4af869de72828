"""fairseq's ``--amp`` on a CPU, where our models run in bfloat16 (``speed/precision.py``).

fairseq builds its ``AMPOptimizer`` on ``torch.cuda.amp.GradScaler`` and enters
``torch.cuda.amp.autocast`` in ``FairseqTask.train_step``; without CUDA torch disables both, each
with a warning that says so. bfloat16 needs no loss scaling, but a disabled scaler also stops
doing the scaler's other job: its ``step`` applies a non-finite gradient to the weights instead of
skipping it. fairseq's ``clip_grad_norm`` takes a non-finite norm for a loss-scale overflow and asks
the scaler for its backoff factor, which a disabled scaler of torch 2.x never set: the run ends in an
``AttributeError`` traceback at the first non-finite gradient. So here, with a disabled scaler, a
non-finite gradient norm raises ``FloatingPointError`` as in float32 training: fairseq writes
``crash.pt`` and stops, and ``cli_errors`` reports the divergence in one line. The two
"CUDA is not available ... Disabling" warnings and the ``torch.cuda.amp.GradScaler`` deprecation
that fairseq's ``AMPOptimizer`` provokes are ignored (each by its message, category and module) once
bfloat16 is on (``speed/precision.py``), since they would tell the user the opposite of what happens.
GPU runs (an enabled scaler) are unchanged.

Delete when fairseq's AMP autocasts on the CPU (torch.amp with the model's device).
"""

from typing import Any, Callable, Optional

import torch
from fairseq.optim.amp_optimizer import AMPOptimizer

from .patching import KnownWarning, ignore_warnings, wrap_once

DISABLED_CUDA_WARNINGS: tuple[KnownWarning, ...] = (
    (r"torch\.cuda\.amp\.GradScaler is enabled, but CUDA is not available", UserWarning, r"torch\.(cuda\.)?amp\."),
    (r"CUDA is not available or torch_xla is imported\. Disabling autocast", UserWarning, r"torch\.(cuda\.)?amp\."),
    # the deprecation AMPOptimizer provokes; autocast's, AMP or not: log_output
    (r"`torch\.cuda\.amp\.GradScaler\(args\.\.\.\)` is deprecated", FutureWarning, r"fairseq\."),
)


def silence_disabled_cuda_warnings() -> None:
    ignore_warnings(DISABLED_CUDA_WARNINGS)


def stopping_on_non_finite(original: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """``AMPOptimizer.clip_grad_norm``, fairseq's own with an enabled scaler."""

    def clip_grad_norm(self: AMPOptimizer, max_norm: float, aggregate_norm_fn: Optional[Callable[..., Any]] = None) -> torch.Tensor:
        if self.scaler.is_enabled():
            return original(self, max_norm, aggregate_norm_fn)
        grad_norm = self.fp32_optimizer.clip_grad_norm(max_norm, aggregate_norm_fn)  # nothing to unscale
        if not torch.isfinite(grad_norm).all():
            raise FloatingPointError("gradients are Nan/Inf")
        return grad_norm

    return clip_grad_norm


def install() -> None:
    wrap_once(AMPOptimizer, "clip_grad_norm", stopping_on_non_finite)
