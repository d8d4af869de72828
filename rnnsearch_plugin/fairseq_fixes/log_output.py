"""What fairseq's commands log and print: each ``--log-file`` line once, no hydra
``version_base`` warning, and neither of the two warnings that every fairseq command printed on a CPU.

- ``fairseq.logging.progress_bar.progress_bar`` (fairseq 0.12.x) adds a ``logging.FileHandler``
  for ``--log-file`` to its module's logger every time it is called with one, and fairseq-train
  does so at the start of every epoch: epoch k's progress lines appear k times in the file
  (the quickstart's 15-epoch ``train.log`` held up to 15 copies; validation's lines go
  through the same logger). ``install`` wraps it so that the logger keeps one handler per
  file, the first. Delete once fairseq adds it once.
- hydra >= 1.2 warns, in a three-line block, each time fairseq composes its configuration
  (``convert_namespace_to_omegaconf``) without a ``version_base``, which fairseq 0.12 cannot
  pass; hydra then assumes version 1.1, the behaviour fairseq was written for. ``install``
  ignores that one warning (its message, ``UserWarning``, from hydra), with a filter placed after
  the user's own ``-W`` and ``PYTHONWARNINGS`` filters, which still decide; every other warning
  shows as before.
  fairseq-hydra-train's first block comes from ``hydra.main``, before the plugin is loaded, and
  stays. Delete the filter once fairseq passes ``version_base`` to hydra.
- On a machine without an accelerator, every fairseq command printed two warnings about fairseq's
  own code that a user can do nothing about: torch's ``'pin_memory' argument is set as true but no
  accelerator is found`` (fairseq's ``EpochBatchIterator`` always asks its ``DataLoader`` to pin)
  and the ``FutureWarning`` that ``torch.cuda.amp.autocast(args...)`` is deprecated (fairseq's
  ``FairseqTask.train_step`` enters it for every update, AMP or not). ``install`` ignores exactly
  those two messages, each with its category and the module it comes from (torch's data loader,
  fairseq's code), after the user's own filters, as for hydra's. Delete each once fairseq pins
  memory only on an accelerator, and calls ``torch.amp.autocast``.
"""

import functools
import logging
from typing import Any, Callable

from fairseq.logging import progress_bar as progress_bars

from .patching import KnownWarning, ignore_warnings, wrap_once

VERSION_BASE_WARNING: KnownWarning = (r"\s*The version_base parameter is not specified", UserWarning, r"hydra\.")
FAIRSEQ_CPU_WARNINGS: tuple[KnownWarning, ...] = (
    (r"'pin_memory' argument is set as true but no accelerator is found", UserWarning, r"torch\.utils\.data\."),
    (r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated", FutureWarning, r"fairseq\."),
)


def drop_repeated_file_handlers(logger: logging.Logger) -> None:
    """Keep the first ``FileHandler`` of each file on ``logger``; close and remove the others."""
    files = set()
    for handler in list(logger.handlers):
        if isinstance(handler, logging.FileHandler):
            if handler.baseFilename in files:
                logger.removeHandler(handler)
                handler.close()
            files.add(handler.baseFilename)


def logging_each_line_once(progress_bar: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap fairseq's ``progress_bar`` factory so that ``--log-file`` gets each line once."""

    @functools.wraps(progress_bar)
    def progress_bar_with_one_file_handler(*args: Any, **kwargs: Any) -> Any:
        bar = progress_bar(*args, **kwargs)
        drop_repeated_file_handlers(progress_bars.logger)
        return bar

    return progress_bar_with_one_file_handler


def install() -> None:
    """Wrap ``progress_bar.progress_bar``; ignore hydra's version_base warning and the two CPU ones."""
    wrap_once(progress_bars, "progress_bar", logging_each_line_once)
    ignore_warnings((VERSION_BASE_WARNING, *FAIRSEQ_CPU_WARNINGS))
