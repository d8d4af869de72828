"""rnnsearch: Bahdanau, Cho & Bengio (2015) RNNsearch and the RNNencdec baseline for fairseq.

Load with ``--user-dir rnnsearch_plugin`` (or import it). Importing registers the models and
architectures (``models/``), the optimizer ``rnnsearch_adadelta`` (``optim/``) and the criterion
``chunked_cross_entropy`` (``criterions/``), and changes nothing else: fairseq's functions and
the warning filters stay as they were. The plugin's repairs of fairseq (``fairseq_fixes/``) are
installed where fairseq runs: by fairseq's commands when ``--user-dir`` loads the plugin, and by
``load`` (the rnnsearch-* commands that load a model included). They keep fairseq from dropping
sentences at batching time, let fairseq checkpoints load with weights-only unpickling, never let
a half-written copy replace a good checkpoint, make fairseq-interactive serve every line it is
given, give an empty source the empty translation, let torchrun start data-parallel training on
CPUs, make fairseq's commands report user mistakes in one line and log each ``--log-file`` line
once, at INFO, without hydra's warnings about fairseq's configuration calls or the two warnings
about fairseq's code on a CPU, make ``--amp`` on a CPU stop on a non-finite gradient, and let ``--bf16`` train without a TPU. A
program that drives fairseq itself (its ``Trainer``, say) installs them with
``rnnsearch_plugin.fairseq_fixes.install()``. The Python API: ``load`` (``hub.py``).

    models/          the paper's model, one module per part (Appendix A, B.1): the reference
    speed/           the engine that runs the same parameters faster (--engine), the FLOP count
    criterions/      chunked_cross_entropy
    optim/           rnnsearch_adadelta (Appendix B.2)
    fairseq_fixes/   each repair of fairseq in its own module
    hub.py           the Python API
    arguments.py     the checks of its arguments, which rnnsearch-serve shares
    errors.py        UserInputError: a user's mistake, one line in every command
    cli/             the rnnsearch-* commands (rnnsearch-serve: serve/)
    analysis/        Section 5's analyses: BLEU, alignments, AER, training statistics
    data/            data pipelines: raw parallel text to fairseq-binarized data
"""

from . import fairseq_fixes
from .criterions.chunked_cross_entropy import ChunkedCrossEntropyCriterion
from .hub import Alignment, RNNSearchHubInterface, load
from .models.rnnsearch import RNNEncDecModel, RNNSearchModel
from .optim.rnnsearch_adadelta import PaperAdadelta

fairseq_fixes.install_in_a_command()

__all__ = [
    "RNNSearchModel",
    "RNNEncDecModel",
    "PaperAdadelta",
    "ChunkedCrossEntropyCriterion",
    "load",
    "RNNSearchHubInterface",
    "Alignment",
]
