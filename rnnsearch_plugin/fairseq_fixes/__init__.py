"""The plugin's repairs of fairseq (0.12.x), each in its own module that names the fairseq behaviour it
repairs and when it can be deleted; ``rnnsearch_plugin/__init__.py`` installs them on import.

- ``batching``: fairseq's batching drops the last (N mod 8) sentences of every dataset (fairseq issue 5036);
- ``checkpoint_safety``: checkpoints loaded weights-only whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says;
- ``checkpoint_writing``: the copies onto checkpoint_last/_best.pt are atomic, and fsynced;
- ``cli_errors``: user mistakes end fairseq's commands in one line, not a traceback;
- ``alignment_options``: --print-alignment/--replace-unk checked against the model before generating;
- ``interactive_input``: fairseq-interactive serves every line (invalid UTF-8, over-long lines);
- ``empty_source``: an empty source gets the empty translation, not one the model makes up;
- ``distributed_launch``: torchrun's data-parallel training on machines without GPUs;
- ``log_output``: each --log-file line once, no hydra version_base warning, no pin_memory or autocast warning on a CPU;
- ``bf16_device``: --bf16 trains on the GPU or CPU it is given (fairseq infers a TPU from it);
- ``cpu_amp``: --amp on a CPU stops on a non-finite gradient;
- ``patching``: ``wrap_once``, the one way a repair replaces a fairseq function.
"""
