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
refused (``RefusedCheckpointError``), with that variable set too. A file torch cannot read at
all (truncated, corrupted) raises ``DamagedCheckpointError`` naming it. Delete the ``checkpoint_utils`` part once fairseq
passes ``weights_only=True`` itself.
"""

import argparse
import pickle
import pickletools
import re
import types
import zipfile
from typing import Any, Optional

import torch
from fairseq import checkpoint_utils

from .patching import wrap_once

SAFE_GLOBALS = [argparse.Namespace]
# what torch.load raises on a file it cannot parse
UNREADABLE = (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError, IndexError, KeyError, zipfile.BadZipFile)
MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


class RefusedCheckpointError(pickle.UnpicklingError):
    """A whole checkpoint that the weights-only unpickler refuses: it is not plain weights."""

    def __init__(self, error: BaseException) -> None:
        named = refused_global(error)
        self.reason = (
            f"it names {named}, which is not allowed"
            if named
            else f"it holds what the weights-only unpickler does not read: {first_words(error)}"
        )
        super().__init__(
            "refused to load a checkpoint that is not plain fairseq weights, since unpickling it "
            f"could run code ({self.reason}); load only checkpoints you trust"
        )


class DamagedCheckpointError(ValueError):
    """A checkpoint file that torch cannot read: truncated or corrupted."""

    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(
            f"the checkpoint {name} is damaged (truncated or corrupted: {first_words(error)}); "
            "use an earlier checkpoint, or write this one again"
        )


def first_words(error: BaseException) -> str:
    """The gist of torch's (long) message: its first sentence, or what the unpickler tripped on."""
    text = str(error).split("WeightsUnpickler error:", 1)[-1]
    line = next((line.strip() for line in text.splitlines() if line.strip()), type(error).__name__)
    return line.split(". ")[0][:160].encode("ascii", "backslashreplace").decode()


def refused_global(error: BaseException) -> Optional[str]:
    """The global (module.name) that the weights-only unpickler refused, if ``error`` names one;
    a damaged pickle can name a garbled global, which is not a name."""
    named = re.search(r"GLOBAL ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?=[ \n]|$)", str(error))
    return named[1] if named else None


def pickle_is_whole(file: Any) -> bool:
    """Whether the pickle of a checkpoint in torch's zip format (its ``data.pkl``) decodes opcode
    by opcode, which ``pickletools`` does without running anything, and its CRC holds: then a
    refusal (a newer pickle protocol, say) is not damage."""
    try:
        if hasattr(file, "seek"):
            file.seek(0)
        with zipfile.ZipFile(file) as archive:
            name = next(name for name in archive.namelist() if name.endswith("data.pkl"))
            for _ in pickletools.genops(archive.read(name)):
                pass
        return True
    except Exception:  # any failure to read it back is damage
        return False


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``torch.load(file, ..., weights_only=True)``, with ``weights_only`` passed explicitly so that
    no environment variable turns it off. Raises ``RefusedCheckpointError`` for a checkpoint that
    is not plain weights, ``DamagedCheckpointError`` for a file that cannot be read."""
    kwargs["weights_only"] = True
    try:
        return torch.load(file, *args, **kwargs)
    except MISSING:
        raise
    except UNREADABLE as error:
        if isinstance(error, pickle.UnpicklingError) and (refused_global(error) or pickle_is_whole(file)):
            raise RefusedCheckpointError(error) from error
        raise DamagedCheckpointError(str(getattr(file, "name", file)), error) from error


class _TorchForCheckpoints(types.ModuleType):
    """``torch`` as fairseq's ``checkpoint_utils`` sees it: everything is torch's but ``load``."""

    load = staticmethod(load)

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


def loading_weights_only(module: types.ModuleType) -> types.ModuleType:
    """``torch`` for ``checkpoint_utils``: torch (``module``) but ``load``."""
    return _TorchForCheckpoints(module.__name__)


def install() -> None:
    torch.serialization.add_safe_globals(SAFE_GLOBALS)
    wrap_once(checkpoint_utils, "torch", loading_weights_only)
