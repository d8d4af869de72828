"""One-line errors, not tracebacks, for user mistakes in fairseq's console commands.

With ``--user-dir rnnsearch_plugin``, fairseq-train/-generate/-interactive/... report these
as ``PROGRAM: error: MESSAGE`` and exit with status 1:

- ``UserInputError``: raised by the plugin for what it can diagnose itself (a dictionary
  that does not match the checkpoint, for instance);
- a missing file or folder (a wrong data directory, checkpoint path or dictionary), fairseq's
  "Model file not found" (a wrong --path) and its "Dataset not found" (a split the data folder
  lacks, such as a wrong --gen-subset: the message names the splits it has);
- a checkpoint refused by the weights-only unpickler (not plain weights: it could run code), or
  one that is damaged (truncated or corrupted, ``checkpoint_safety``);
- the command's own checks of its options (an ``AssertionError`` raised in ``fairseq_cli``,
  such as "--replace-unk requires a raw text dataset");
- fairseq's "Size of sample ... is invalid": a sentence longer than the limits;
- fairseq's "Cannot load model parameters from checkpoint": a resumed run whose model options
  (``--arch``, sizes) differ from those the checkpoint was trained with;
- fairseq's "gradients are Nan/Inf": training diverged, and its "Minimum loss scale reached":
  float16 training stopped (fairseq stops the run, writes the failing state to ``crash.pt``
  and leaves every earlier checkpoint as it was).

Every other exception keeps its full traceback, and ``HYDRA_FULL_ERROR=1`` (the variable that
fairseq-hydra-train's hydra reads for the same purpose) gives back the full traceback of these
too. Nothing changes for a Python program that imports the plugin: the hook is installed only
in fairseq's console commands. Delete once fairseq's commands report these mistakes in one line
themselves (0.12.x prints a traceback for each).
"""

import os
import re
import sys
import traceback as tracebacks
from pathlib import Path
from types import TracebackType
from typing import Optional

from ..data.manifest import binarized
from ..errors import UserInputError
from .checkpoint_safety import MISSING, DamagedCheckpointError, RefusedCheckpointError

FULL_TRACEBACK = "HYDRA_FULL_ERROR"
MISSING_SPLIT = re.compile(r"Dataset not found: (?P<split>\S+) \((?P<folder>.+)\)")  # fairseq's tasks' load_dataset


def raised_by_a_command(error: BaseException) -> bool:
    """Whether ``error`` was raised by a fairseq command's own code (``fairseq_cli``)."""
    frames = list(tracebacks.walk_tb(error.__traceback__))
    return bool(frames) and f"{os.sep}fairseq_cli{os.sep}" in frames[-1][0].f_code.co_filename


def splits_in(folder: Path) -> list[str]:
    """The splits of a fairseq-binarized folder, from its files' names (``{split}.{src}-{tgt}.{lang}.idx``)."""
    return sorted({split for split, _, _ in binarized(folder)})


def missing_split(split: str, folder: Path) -> str:
    """What to do about a split that ``folder`` lacks."""
    splits = splits_in(folder)
    if not splits:
        return f"{folder} holds no binarized splits (SPLIT.SRC-TGT.LANG.idx): give the folder fairseq-preprocess wrote"
    return (
        f"{folder} holds the splits {', '.join(splits)}: name one of them (--gen-subset, --valid-subset, --train-subset), "
        f"or give the data folder that holds {split}"
    )


def explain(error: BaseException) -> Optional[str]:
    """The one-line message for a user mistake, or None for anything else."""
    message = str(error)
    if isinstance(error, (UserInputError, DamagedCheckpointError, RefusedCheckpointError)):
        return message
    if isinstance(error, MISSING) and error.filename is not None:
        return f"{error.strerror}: {error.filename!r} (check the data directory and file paths)"
    if type(error) is FileNotFoundError and error.filename is None and (missing := MISSING_SPLIT.fullmatch(message)):
        return f"{message}: {missing_split(missing['split'], Path(missing['folder']))}"
    if type(error) is OSError and message.startswith("Model file not found: "):
        return f"{message}: check the checkpoint's path (--path; an ensemble's checkpoints are separated by ':')"
    if isinstance(error, AssertionError) and message and raised_by_a_command(error):
        return message
    if type(error) is Exception and message.startswith("Size of sample"):
        return f"{message}. A sentence is longer than the model accepts: shorten it or raise --max-source-positions/--max-target-positions"
    if type(error) is Exception and message.startswith("Cannot load model parameters"):
        return (
            f"{message} Resume with the model options (--arch, sizes) the checkpoint was trained with, "
            "or give a new --save-dir to start afresh"
        )
    if isinstance(error, FloatingPointError) and message.startswith("gradients are Nan/Inf"):
        return (
            f"{message}: training diverged and stopped; the checkpoints written before are unchanged "
            "(the failing state is in crash.pt): resume from checkpoint_last.pt with a lower --lr "
            "or with --clip-norm"
        )
    if isinstance(error, FloatingPointError) and "Minimum loss scale reached" in message:
        return f"{message.strip()} The run stopped; the checkpoints written before are unchanged (the failing state is in crash.pt)"
    return None


def install() -> None:
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not program.startswith("fairseq-") or getattr(sys.excepthook, "reports_user_errors", False):
        return
    previous = sys.excepthook

    def report(kind: type[BaseException], error: BaseException, traceback: Optional[TracebackType]) -> None:
        message = None if os.environ.get(FULL_TRACEBACK) == "1" else explain(error)
        if message is None:
            previous(kind, error, traceback)
        else:
            print(f"{program}: error: {message}", file=sys.stderr)

    report.reports_user_errors = True  # type: ignore[attr-defined]
    sys.excepthook = report
