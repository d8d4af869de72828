"""Load fairseq checkpoints with torch's weights-only unpickler (the torch >= 2.6 default).

A checkpoint is a pickle: a full unpickler runs whatever code a crafted file names. torch's
weights-only unpickler refuses every global not on an allowlist. Checkpoints of our models
need nothing beyond torch's defaults; those of models configured without a dataclass
(fairseq's own ``lstm``, say, in an ensemble or a benchmark) store their options as an
``argparse.Namespace``. ``install`` allows exactly that class, so fairseq-generate,
fairseq-interactive, the Python API and ``rnnsearch-average-checkpoints`` load every
fairseq checkpoint while a crafted one is still refused.
"""
import argparse
import re

import torch

SAFE_GLOBALS = [argparse.Namespace]


def install() -> None:
    torch.serialization.add_safe_globals(SAFE_GLOBALS)


def refusal_reason(error: Exception) -> str:
    """What the weights-only unpickler refused, in a few words (torch's message is long)."""
    message = str(error)
    named = re.search(r"GLOBAL ([\w.]+)", message)
    if named:
        return f"it names {named[1]}, which is not allowed"
    detail = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", message)
    return detail[1] if detail else message.strip().splitlines()[0]
