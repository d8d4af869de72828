"""rnnsearch: Bahdanau, Cho & Bengio (2015) RNNsearch and the RNNencdec baseline for fairseq.

Load with ``--user-dir rnnsearch_plugin`` (or import it). Importing registers the models,
architectures and optimizer, keeps fairseq from dropping sentences at batching time
(``batching.py``) and lets fairseq checkpoints load with weights-only unpickling
(``checkpoint_safety.py``).
"""
from . import batching, checkpoint_safety
from .model import RNNEncDecModel, RNNSearchModel
from .optim import PaperAdadelta

batching.install()
checkpoint_safety.install()

__all__ = ["RNNSearchModel", "RNNEncDecModel", "PaperAdadelta"]
