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
- fairseq composes its configuration through hydra's deprecated API (``hydra.experimental``'s
  ``initialize`` and ``compose``, ``strict=``, ``# @package _group_`` headers, a schema matched by
  name): five more deprecation warnings, 17 lines before every command's first line of output.
  ``install`` ignores exactly those messages, as above. Delete once fairseq uses ``hydra.compose``.
- fairseq-fixed 0.12.3.1's ``models/wav2vec/wav2vec2_classification.py`` calls
  ``logging.basicConfig(level=logging.DEBUG)`` when ``fairseq.models`` is imported, which every
  command that imports fairseq before configuring its own logging does (fairseq-interactive,
  -generate, -eval-lm, -validate): their own ``basicConfig`` is then a no-op, and the whole process
  logs at DEBUG (hydra's ``Setting JobRuntime`` lines among them) in the default format, to stderr.
  ``install_in_a_command`` finds the root logger exactly as that call leaves it (its one handler, the
  default format, DEBUG) and gives it the level and format the command asked for
  (``restore_command_logging``); the log stays on stderr, where the translations are not.
  Delete once fairseq's models configure no logging.
"""

import functools
import logging
import os
from typing import Any, Callable

from fairseq.logging import progress_bar as progress_bars

from .patching import KnownWarning, ignore_warnings, wrap_once

VERSION_BASE_WARNING: KnownWarning = (r"\s*The version_base parameter is not specified", UserWarning, r"hydra\.")
FAIRSEQ_CPU_WARNINGS: tuple[KnownWarning, ...] = (
    (r"'pin_memory' argument is set as true but no accelerator is found", UserWarning, r"torch\.utils\.data\."),
    (r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated", FutureWarning, r"fairseq\."),
)
HYDRA_DEPRECATIONS: tuple[KnownWarning, ...] = (
    (r"hydra\.experimental\.initialize\(\) is no longer experimental", UserWarning, r"hydra\."),
    (r"hydra\.experimental\.compose\(\) is no longer experimental", UserWarning, r"hydra\."),
    (r"In '\w+': Usage of deprecated keyword in package header '# @package _group_'", UserWarning, r"hydra\."),
    # attributed to the frame that started the command: the console script, ``python -m``'s runpy, or ``sys``
    (r"\s*'\w+' is validated against ConfigStore schema with the same name", UserWarning, r"(__main__|runpy|sys)$"),
    (r"\s*The strict flag in the compose API is deprecated", UserWarning, r"hydra\."),
)
FAIRSEQ_LOG_FORMAT, FAIRSEQ_DATE_FORMAT = "%(asctime)s | %(levelname)s | %(name)s | %(message)s", "%Y-%m-%d %H:%M:%S"


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


def configured_by_wav2vec2_classification(root: logging.Logger) -> bool:
    """Whether ``root`` is as ``logging.basicConfig(level=logging.DEBUG)`` left it, and nothing since."""
    handlers = root.handlers
    return (
        root.level == logging.DEBUG
        and len(handlers) == 1
        and type(handlers[0]) is logging.StreamHandler
        and handlers[0].formatter is not None
        and handlers[0].formatter._fmt == logging.BASIC_FORMAT
    )


def restore_command_logging() -> None:
    """Log at the level and in the format fairseq's commands ask for ($LOGLEVEL, else INFO), where
    wav2vec2_classification's configuration made them no-ops; the stream (stderr) stays."""
    root = logging.getLogger()
    if configured_by_wav2vec2_classification(root):
        root.handlers[0].setFormatter(logging.Formatter(FAIRSEQ_LOG_FORMAT, FAIRSEQ_DATE_FORMAT))
        root.setLevel(os.environ.get("LOGLEVEL", "INFO").upper())


def install() -> None:
    """Wrap ``progress_bar.progress_bar``; ignore hydra's version_base warning, its deprecations that
    fairseq's configuration calls raise, and the two CPU ones."""
    wrap_once(progress_bars, "progress_bar", logging_each_line_once)
    ignore_warnings((VERSION_BASE_WARNING, *HYDRA_DEPRECATIONS, *FAIRSEQ_CPU_WARNINGS))
