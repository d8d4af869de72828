"""The plugin's repairs of fairseq (0.12.x), each in its own module that names the fairseq behaviour it
repairs and when it can be deleted; tests/fairseq_fixes/test_bugs_on_pinned_fairseq.py shows each bug
on the pinned fairseq, and fails once fairseq has fixed it.

- ``batching``: fairseq's batching drops the last (N mod 8) sentences of every dataset;
- ``checkpoint_safety``: checkpoints loaded weights-only whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says;
- ``checkpoint_writing``: the copies onto checkpoint_last/_best.pt are atomic, and fsynced;
- ``cli_errors``: user mistakes end fairseq's commands in one line, not a traceback;
- ``interactive_input``: fairseq-interactive serves every line (invalid UTF-8, over-long lines);
- ``interactive_alignment``: fairseq-interactive prints --print-alignment soft as fairseq-generate does;
- ``empty_source``: an empty source gets the empty translation, not one the model makes up;
- ``distributed_launch``: torchrun's data-parallel training on machines without GPUs;
- ``log_output``: each --log-file line once, no hydra deprecation warning or DEBUG line, no pin_memory or autocast warning on a CPU;
- ``bf16_device``: --bf16 trains on the GPU or CPU it is given (fairseq infers a TPU from it);
- ``cpu_amp``: --amp on a CPU stops on a non-finite gradient;
- ``patching``: ``wrap_once``, the one way a repair replaces a fairseq function, and ``ignore_warnings``.

Importing the plugin changes nothing in fairseq. ``install`` installs every repair: fairseq's
commands run it when ``--user-dir rnnsearch_plugin`` loads the plugin (``install_in_a_command``),
and ``hub.from_pretrained`` (``load``, and through it rnnsearch-serve, -evaluate, -heatmaps and
-aer) before it loads a checkpoint. A program that drives fairseq itself (its ``Trainer``,
``checkpoint_utils``, ``fairseq_cli``'s ``main``) calls ``rnnsearch_plugin.fairseq_fixes.install()``.
"""

import sys

from . import (
    batching,
    bf16_device,
    checkpoint_safety,
    checkpoint_writing,
    cli_errors,
    cpu_amp,
    distributed_launch,
    empty_source,
    interactive_alignment,
    interactive_input,
    log_output,
)

REPAIRS = (
    batching,
    bf16_device,
    checkpoint_safety,
    checkpoint_writing,
    cli_errors,
    cpu_amp,
    distributed_launch,
    empty_source,
    interactive_alignment,
    interactive_input,
    log_output,
)


def install() -> None:
    """Install every repair; each replaces fairseq's functions at most once (``patching.wrap_once``),
    however often this runs. ``cli_errors`` acts only in fairseq's console commands, ``interactive_input``
    and ``interactive_alignment`` only in fairseq-interactive."""
    for repair in REPAIRS:
        repair.install()


def install_in_a_command() -> None:
    """``install`` when a fairseq command is running: fairseq's commands (``fairseq-train`` and the
    others, ``python -m fairseq_cli.train``, ``fairseq-hydra-train``) are modules of ``fairseq_cli``, which
    is imported before they load ``--user-dir``; a program that imports the plugin does not import it."""
    if "fairseq_cli" in sys.modules:
        install()
        log_output.restore_command_logging()
