"""Which devices the routes of this package serve. Each was chosen by measurements on CPUs only
(``benchmarks/changes.md``), so a tensor on any other device takes torch's own route (``torch.tanh``,
``F.dropout``, ``amax``, autograd's per-step weight gradients, one encoder row per hypothesis,
``torch.optim.Adadelta``, fairseq's own --amp) until a route has been measured there (issue 42:
``scripts/gpu_check.sh``)."""
import torch


def measured_on(device: torch.device) -> bool:
    """Whether the routes of ``speed/`` were measured on ``device``'s kind: the CPU only."""
    return device.type == "cpu"
