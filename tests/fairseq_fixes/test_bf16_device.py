"""``--bf16`` trains on the device it is given, not a TPU fairseq infers (``fairseq_fixes/bf16_device.py``)."""

import importlib.util

import pytest
from fairseq import options
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.distributed import utils as distributed_utils

from rnnsearch_plugin.fairseq_fixes import bf16_device  # the plugin's import registers rnnsearch_small


def parsed_config(*flags: str):
    """fairseq-train's own parsing of a command line, as the config call_main receives."""
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, ["data", "--arch", "rnnsearch_small", "--task", "translation", *flags])
    return convert_namespace_to_omegaconf(args)


@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is not None, reason="torch_xla installed: fairseq's TPU inference holds")
def test_bf16_is_trained_on_the_given_device_without_torch_xla():
    bf16_device.install()
    cfg = parsed_config("--bf16")
    assert cfg.common.bf16 and cfg.common.tpu  # what fairseq infers from --bf16
    seen = []
    distributed_utils.call_main(cfg, lambda cfg: seen.append((cfg.common.bf16, cfg.common.tpu)))
    assert seen == [(True, False)]  # bfloat16 kept, no TPU: the trainer takes CUDA or the CPU


def test_other_runs_reach_main_unchanged():
    bf16_device.install()
    cfg = parsed_config()
    seen = []
    distributed_utils.call_main(cfg, lambda cfg: seen.append((cfg.common.bf16, cfg.common.tpu)))
    assert seen == [(False, False)]
