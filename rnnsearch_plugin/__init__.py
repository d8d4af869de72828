"""rnnsearch: Bahdanau, Cho & Bengio (2015) RNNsearch and the RNNencdec baseline for fairseq.

Load with ``--user-dir rnnsearch_plugin`` (or import it). Importing registers the models and
architectures (``models/``), the optimizer ``rnnsearch_adadelta`` (``optim/``) and the criterion
``chunked_cross_entropy`` (``criterions/``), and installs the plugin's repairs of fairseq
(``fairseq_fixes/``): it keeps fairseq from dropping sentences at batching time, lets fairseq
checkpoints load with weights-only unpickling, never lets a half-written copy replace a good
checkpoint, makes fairseq-interactive serve every line it is given, gives an empty source the
empty translation, lets torchrun start data-parallel training on CPUs, makes fairseq's commands
report user mistakes in one line and log each ``--log-file`` line once, without hydra's
version_base warning or the two warnings about fairseq's code on a CPU, and makes ``--amp`` on a
CPU stop on a non-finite gradient, and lets ``--bf16`` train without a TPU. The Python API: ``load`` (``hub.py``).

    models/          the paper's model, one module per part (Appendix A, B.1)
    speed/           what makes it fast: tanh, beam-search row layout, per-sequence weight
                     gradients, bfloat16 on the CPU, the analytic FLOP count
    criterions/      chunked_cross_entropy
    optim/           rnnsearch_adadelta (Appendix B.2)
    fairseq_fixes/   each repair of fairseq in its own module
    hub.py           the Python API
    cli/             the rnnsearch-* commands (rnnsearch-serve: serve/)
    analysis/        Section 5's analyses: BLEU, alignments, AER, training statistics
    data/            data pipelines: raw parallel text to fairseq-binarized data
"""
from .criterions.chunked_cross_entropy import ChunkedCrossEntropyCriterion
from .fairseq_fixes import (
    batching,
    bf16_device,
    checkpoint_safety,
    checkpoint_writing,
    cli_errors,
    cpu_amp,
    distributed_launch,
    empty_source,
    interactive_input,
    log_output,
)
from .hub import Alignment, RNNSearchHubInterface, load
from .models.rnnsearch import RNNEncDecModel, RNNSearchModel
from .optim.rnnsearch_adadelta import PaperAdadelta

batching.install()
bf16_device.install()
checkpoint_safety.install()
checkpoint_writing.install()
cli_errors.install()
cpu_amp.install()
interactive_input.install()
empty_source.install()
distributed_launch.install()
log_output.install()

__all__ = ["RNNSearchModel", "RNNEncDecModel", "PaperAdadelta", "ChunkedCrossEntropyCriterion", "load", "RNNSearchHubInterface",
           "Alignment"]
