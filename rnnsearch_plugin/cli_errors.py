"""One-line errors, not tracebacks, for user mistakes in fairseq's console commands.

With ``--user-dir rnnsearch_plugin``, fairseq-train/-generate/-interactive/... report these
as ``PROGRAM: error: MESSAGE`` and exit with status 1:

- ``UserInputError``: raised by the plugin for what it can diagnose itself (a dictionary
  that does not match the checkpoint, for instance);
- a missing file or folder (a wrong data directory, checkpoint path or dictionary);
- a checkpoint refused by the weights-only unpickler (it names code to run);
- fairseq's "Size of sample ... is invalid": a sentence longer than the limits;
- fairseq's "Cannot load model parameters from checkpoint": a resumed run whose model options
  (``--arch``, sizes) differ from those the checkpoint was trained with;
- fairseq's ``FloatingPointError``: training diverged (fairseq stops the run, writes the failing
  state to ``crash.pt`` and leaves every earlier checkpoint as it was).

Every other exception keeps its full traceback. Nothing changes for a Python program that
imports the plugin: the hook is installed only in fairseq's console commands.
"""
import os
import pickle
import sys
from types import TracebackType
from typing import Optional

from .checkpoint_safety import refusal_reason


class UserInputError(ValueError):
    """A mistake in what the user gave: reported in one line by fairseq's commands."""


MISSING_PATH = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


def explain(error: BaseException) -> Optional[str]:
    """The one-line message for a user mistake, or None for anything else."""
    if isinstance(error, UserInputError):
        return str(error)
    if isinstance(error, MISSING_PATH):
        return f"{error.strerror}: {error.filename!r} (check the data directory and file paths)"
    if isinstance(error, pickle.UnpicklingError):
        return ("refused to load a checkpoint that is not plain fairseq weights, since unpickling "
                f"it could run code ({refusal_reason(error)}); load only checkpoints you trust")
    if type(error) is Exception and str(error).startswith("Size of sample"):
        return (f"{error}. A sentence is longer than the model accepts: shorten it or raise "
                "--max-source-positions/--max-target-positions")
    if type(error) is Exception and str(error).startswith("Cannot load model parameters"):
        return (f"{error} Resume with the model options (--arch, sizes) the checkpoint was trained with, "
                "or give a new --save-dir to start afresh")
    if isinstance(error, FloatingPointError):
        return (f"{error}: training diverged and stopped; the checkpoints written before are unchanged "
                "(the failing state is in crash.pt): resume from checkpoint_last.pt with a lower --lr "
                "or with --clip-norm")
    return None


def install() -> None:
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not program.startswith("fairseq-") or getattr(sys.excepthook, "reports_user_errors", False):
        return
    previous = sys.excepthook

    def report(kind: type[BaseException], error: BaseException, traceback: Optional[TracebackType]) -> None:
        message = explain(error)
        if message is None:
            previous(kind, error, traceback)
        else:
            print(f"{program}: error: {message}", file=sys.stderr)

    report.reports_user_errors = True  # type: ignore[attr-defined]
    sys.excepthook = report
