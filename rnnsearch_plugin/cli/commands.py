"""The entry points of the plugin's commands that load models (rnnsearch-evaluate,
rnnsearch-heatmaps, rnnsearch-aer, rnnsearch-serve): logging set up as fairseq's own commands
set theirs (INFO, or $LOGLEVEL, to stderr), then the command's module imported and run.

Importing fairseq's models runs fairseq's ``wav2vec2_classification.py``, which calls
``logging.basicConfig(level=logging.DEBUG)`` (fairseq-fixed 0.12.3.1), so without this every
library logs at DEBUG: matplotlib alone wrote about 80 lines per evaluation, most of them as it
was imported, which is why the command's module is imported only after logging is set up.
"""

import importlib
import logging
import os
import sys
from typing import Callable


def configure_logging() -> None:
    from ..fairseq_fixes.log_output import FAIRSEQ_DATE_FORMAT, FAIRSEQ_LOG_FORMAT  # imports fairseq, which asks for DEBUG

    logging.basicConfig(
        format=FAIRSEQ_LOG_FORMAT,
        datefmt=FAIRSEQ_DATE_FORMAT,
        level=os.environ.get("LOGLEVEL", "INFO").upper(),
        stream=sys.stderr,
        force=True,
    )


def command(module: str, function: str) -> Callable[[], None]:
    def run() -> None:
        configure_logging()
        getattr(importlib.import_module(module, __package__), function)()

    return run


evaluate = command(".evaluate", "main")
heatmaps = command(".heatmaps", "main")
aer = command(".aer", "main")
align = command(".align", "main")
serve = command("..serve.cli", "main")
