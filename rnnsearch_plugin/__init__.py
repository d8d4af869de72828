"""rnnsearch: Bahdanau, Cho & Bengio (2015) RNNsearch and the RNNencdec baseline for fairseq.

Load with ``--user-dir rnnsearch_plugin`` (or import it). Importing registers the models,
architectures, optimizer and criterion (``chunked_cross_entropy``, ``criterion.py``), keeps fairseq from dropping sentences at batching time
(``batching.py``), lets fairseq checkpoints load with weights-only unpickling
(``checkpoint_safety.py``), never lets a half-written copy replace a good checkpoint
(``checkpoint_writing.py``), makes fairseq-interactive serve every line it is given
(``interactive_input.py``), lets torchrun start data-parallel training on CPUs
(``distributed_launch.py``), makes fairseq's commands report user mistakes in one line
(``cli_errors.py``) and log each ``--log-file`` line once, without hydra's version_base
warning (``log_output.py``). The Python API: ``load`` (``hub.py``).
"""
from . import (
    batching, checkpoint_safety, checkpoint_writing, cli_errors, cpu_amp, distributed_launch, interactive_input,
    log_output,
)
from .hub import Alignment, RNNSearchHubInterface, load
from .criterion import ChunkedCrossEntropyCriterion
from .model import RNNEncDecModel, RNNSearchModel
from .optim import PaperAdadelta

batching.install()
checkpoint_safety.install()
checkpoint_writing.install()
cli_errors.install()
cpu_amp.install()
interactive_input.install()
distributed_launch.install()
log_output.install()

__all__ = ["RNNSearchModel", "RNNEncDecModel", "PaperAdadelta", "ChunkedCrossEntropyCriterion", "load", "RNNSearchHubInterface", "Alignment"]
