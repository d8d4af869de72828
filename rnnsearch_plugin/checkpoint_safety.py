"""Load fairseq checkpoints with torch's weights-only unpickler, whatever the environment says.

A checkpoint is a pickle: a full unpickler runs whatever code a crafted file names. torch's
weights-only unpickler refuses every global not on an allowlist. torch >= 2.6 uses it by
default, but only by default: ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` turns it off in every
``torch.load`` that does not pass ``weights_only`` itself, as fairseq 0.12's
``checkpoint_utils.load_checkpoint_to_cpu`` does not (it predates the option).

Checkpoints of our models need nothing beyond torch's defaults; those of models configured
without a dataclass (fairseq's own ``lstm``, say, in an ensemble or a benchmark) store their
options as an ``argparse.Namespace``. ``install`` allows exactly that class and makes
``checkpoint_utils`` load through ``load``, which passes ``weights_only=True`` explicitly, so
fairseq-train (resuming), fairseq-generate, fairseq-interactive, the Python API and
``rnnsearch-average-checkpoints`` load every fairseq checkpoint while a crafted one is still
refused, with that variable set too. A file torch cannot read at all (truncated, corrupted)
raises ``DamagedCheckpointError`` naming it. Delete the ``checkpoint_utils`` part once fairseq
passes ``weights_only=True`` itself.
"""
import argparse
import pickle
import re
import types
import zipfile
from typing import Any, Optional

import torch
from fairseq import checkpoint_utils

SAFE_GLOBALS = [argparse.Namespace]
# what torch.load raises on a file it cannot parse; a refusal is an UnpicklingError naming a global
UNREADABLE = (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError, IndexError, KeyError,
              zipfile.BadZipFile)
MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


class DamagedCheckpointError(ValueError):
    """A checkpoint file that torch cannot read: truncated or corrupted."""

    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(f"the checkpoint {name} is damaged (truncated or corrupted: {first_words(error)}); "
                         "use an earlier checkpoint, or write this one again")


def first_words(error: BaseException) -> str:
    """The gist of torch's (long) message: its first sentence, or what the unpickler tripped on."""
    text = str(error).split("WeightsUnpickler error:", 1)[-1]
    line = next((line.strip() for line in text.splitlines() if line.strip()), type(error).__name__)
    return line.split(". ")[0][:160].encode("ascii", "backslashreplace").decode()


def refused_global(error: BaseException) -> Optional[str]:
    """The global (module.name) that the weights-only unpickler refused, or None when ``error``
    is no such refusal. A damaged pickle can name a garbled global, which is not a name."""
    named = re.search(r"GLOBAL ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?=[ \n]|$)", str(error))
    return named[1] if isinstance(error, pickle.UnpicklingError) and named else None


def refusal_reason(error: BaseException) -> str:
    """What the weights-only unpickler refused, in a few words (torch's message is long)."""
    return f"it names {refused_global(error)}, which is not allowed"


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``torch.load(file, ..., weights_only=True)``, with ``weights_only`` passed explicitly so that
    no environment variable turns it off. Raises ``pickle.UnpicklingError`` for a refused global,
    ``DamagedCheckpointError`` for a file that cannot be read."""
    kwargs["weights_only"] = True
    try:
        return torch.load(file, *args, **kwargs)
    except MISSING:
        raise
    except UNREADABLE as error:
        if refused_global(error) is not None:
            raise
        raise DamagedCheckpointError(str(getattr(file, "name", file)), error) from error


class _TorchForCheckpoints(types.ModuleType):
    """``torch`` as fairseq's ``checkpoint_utils`` sees it: everything is torch's but ``load``."""

    load = staticmethod(load)

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


def install() -> None:
    torch.serialization.add_safe_globals(SAFE_GLOBALS)
    if not isinstance(checkpoint_utils.torch, _TorchForCheckpoints):
        checkpoint_utils.torch = _TorchForCheckpoints("torch")
