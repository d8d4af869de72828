"""The training setup of Appendix B.2: Adadelta (Zeiler 2012) with rho = 0.95, eps = 1e-6, and
the L2 norm of the whole gradient rescaled to the threshold (1) whenever it exceeds it
(Pascanu et al. 2013b).

    E[g^2]_t  = rho E[g^2]_{t-1} + (1 - rho) g_t^2
    dx_t      = - sqrt(E[dx^2]_{t-1} + eps) / sqrt(E[g^2]_t + eps) * g_t
    E[dx^2]_t = rho E[dx^2]_{t-1} + (1 - rho) dx_t^2
    x_{t+1}   = x_t + lr * dx_t                (lr = 1.0: plain Adadelta)

``torch.optim.Adadelta`` computes exactly these updates. fairseq's
``--clip-norm`` scales by max_norm / (||g|| + 1e-6), so a clipped gradient ends up slightly below
the threshold; ``clip_grad_norm`` here rescales to exactly max_norm / ||g||, as B.2 says. Use it
as ``--optimizer rnnsearch_adadelta --lr 1.0 --lr-scheduler fixed --clip-norm 1.0``: without the
last two fairseq's defaults apply (``--lr 0.25``, no clipping), which is not B.2, and the
optimizer says so in one warning line at start-up.
"""

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch
from fairseq.dataclass import FairseqDataclass
from fairseq.optim import FairseqOptimizer, register_optimizer
from omegaconf import II

from ..speed.precision import at_least_float32

logger = logging.getLogger(__name__)


@dataclass
class PaperAdadeltaConfig(FairseqDataclass):
    adadelta_rho: float = field(default=0.95, metadata={"help": "decay rate rho (B.2: 0.95)"})
    adadelta_eps: float = field(default=1e-6, metadata={"help": "epsilon (B.2: 1e-6)"})
    weight_decay: float = field(default=0.0, metadata={"help": "weight decay (none in B.2)"})
    lr: list[float] = II("optimization.lr")
    clip_norm: float = II("optimization.clip_norm")


def warn_unless_appendix_b2(cfg: Any) -> None:
    """One warning line when --lr or --clip-norm is not B.2's (1.0 each)."""
    if (cfg.lr[0], cfg.clip_norm) != (1.0, 1.0):
        logger.warning(
            f"rnnsearch_adadelta runs with --lr {cfg.lr[0]} --clip-norm {cfg.clip_norm}, not "
            "Appendix B.2's --lr 1.0 --clip-norm 1.0 (fairseq's defaults are --lr 0.25, no clipping)"
        )


@register_optimizer("rnnsearch_adadelta", dataclass=PaperAdadeltaConfig)
class PaperAdadelta(FairseqOptimizer):
    def __init__(self, cfg: Any, params: Any) -> None:
        super().__init__(cfg)
        warn_unless_appendix_b2(cfg)
        self._optimizer = torch.optim.Adadelta(params, **self.optimizer_config)

    @property
    def optimizer_config(self) -> dict[str, float]:
        return {
            "lr": self.cfg.lr[0],
            "rho": self.cfg.adadelta_rho,
            "eps": self.cfg.adadelta_eps,
            "weight_decay": self.cfg.weight_decay,
        }

    @property
    def supports_flat_params(self) -> bool:
        return True

    def clip_grad_norm(self, max_norm: float, aggregate_norm_fn: Optional[Callable[[torch.Tensor], torch.Tensor]] = None) -> torch.Tensor:
        """Rescale the gradient to norm ``max_norm`` if it is longer (B.2); return its norm."""
        grads = [p.grad.detach() for p in self.params if p.grad is not None]
        total_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, dtype=at_least_float32(g.dtype)) for g in grads]))
        if aggregate_norm_fn is not None:  # distributed training: the norm of the global gradient
            total_norm = aggregate_norm_fn(total_norm)
        if max_norm > 0 and total_norm > max_norm:
            self.multiply_grads(max_norm / total_norm)
        return total_norm
