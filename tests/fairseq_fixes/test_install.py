"""The repairs of fairseq are installed where fairseq runs (its commands with ``--user-dir``, ``load``),
never by importing the plugin (``fairseq_fixes/__init__.py``), each through ``patching.wrap_once``."""

import json
import subprocess
import sys

from conftest import REPO

# run in a fresh interpreter: exec(argv[1]), then what exec(argv[2]) changes in fairseq, the warning
# filters and torch's weights-only allowlist (JSON on stdout)
PROBE = '''
import inspect, json, sys, warnings
import torch

def fairseq_attributes():
    """Every attribute of every loaded fairseq module, and of every class such a module defines."""
    modules = {module.__name__: module for name, module in list(sys.modules.items())
               if module is not None and name.split(".")[0] in ("fairseq", "fairseq_cli")}
    found = {}
    for name, module in modules.items():
        for attribute, value in list(vars(module).items()):
            found[f"{name}.{attribute}"] = value
            if inspect.isclass(value) and value.__module__ == name:
                found.update({f"{name}.{attribute}.{member}": item for member, item in vars(value).items()})
    return found

def described(filter):
    action, message, category, module, line = filter
    return [action, getattr(message, "pattern", message), category.__name__, getattr(module, "pattern", module), line]

exec(sys.argv[1])
attributes, filters, allowed = fairseq_attributes(), list(warnings.filters), set(torch.serialization.get_safe_globals())
exec(sys.argv[2])
replaced = {name: value for name, value in fairseq_attributes().items() if name in attributes and value is not attributes[name]}
print(json.dumps({
    "replaced": sorted(replaced),
    "not_by_wrap_once": sorted(name for name, value in replaced.items()
                               if not getattr(getattr(value, "__func__", value), "wrapped_by", None)),
    "filters_before": [described(filter) for filter in filters],
    "filters_after": [described(filter) for filter in warnings.filters],
    "allowed": sorted(f"{kind.__module__}.{kind.__qualname__}" for kind in set(torch.serialization.get_safe_globals()) - allowed),
}))
'''
# what every repair replaces: fairseq's commands and ``load`` replace exactly these
REPLACED = [
    "fairseq.checkpoint_utils.load_checkpoint",  # checkpoint_writing
    "fairseq.checkpoint_utils.torch",  # checkpoint_safety
    "fairseq.data.data_utils.batch_by_size",  # batching
    "fairseq.distributed.utils._infer_torch_distributed_launch_init",  # distributed_launch
    "fairseq.distributed.utils.call_main",  # bf16_device
    "fairseq.file_io.PathManager.copy",  # checkpoint_writing
    "fairseq.file_io.PathManager.rename",  # checkpoint_writing
    "fairseq.logging.progress_bar.progress_bar",  # log_output
    "fairseq.optim.amp_optimizer.AMPOptimizer.clip_grad_norm",  # cpu_amp
    "fairseq.tasks.fairseq_task.FairseqTask.inference_step",  # empty_source
]


def changes(setup: str, statement: str) -> dict:
    result = subprocess.run([sys.executable, "-c", PROBE, setup, statement], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def assert_every_repair_installed(changed: dict, *also: str) -> None:
    assert changed["replaced"] == sorted([*REPLACED, *also])
    assert changed["not_by_wrap_once"] == []
    assert changed["allowed"] == ["argparse.Namespace"]
    before, after = changed["filters_before"], changed["filters_after"]
    added = after[len(before) :]
    assert after[: len(before)] == before and added  # after the user's own filters, which still decide
    assert all(action == "ignore" and message and category != "Warning" and module for action, message, category, module, _ in added)


def test_importing_the_plugin_changes_nothing_in_fairseq():
    """Importing a module of the plugin, the package itself included, replaces no attribute of
    fairseq and adds no warning filter."""
    changed = changes("import fairseq", "import rnnsearch_plugin.data.corpora; import rnnsearch_plugin")
    assert changed["replaced"] == [] and changed["allowed"] == []
    assert changed["filters_after"] == changed["filters_before"]


def test_a_fairseq_command_installs_every_repair():
    """fairseq-interactive (its module imported first, as its console command does) loading the
    plugin: every repair, fairseq-interactive's own reading, batching and printing among them."""
    changed = changes("import fairseq_cli.interactive", "import rnnsearch_plugin")
    interactive = ("buffered_read", "main", "make_batches")
    assert_every_repair_installed(changed, *(f"fairseq_cli.interactive.{name}" for name in interactive))


def test_load_installs_every_repair(multi30k, checkpoint):
    changed = changes("import rnnsearch_plugin", f"rnnsearch_plugin.load({str(checkpoint)!r}, {str(multi30k / 'bin')!r})")
    assert_every_repair_installed(changed)
