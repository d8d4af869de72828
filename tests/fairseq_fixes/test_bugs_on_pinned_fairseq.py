"""The bug each repair of ``fairseq_fixes/`` is for, shown on the pinned fairseq without the repair:
fairseq's own function (the one ``wrap_once`` keeps as ``__wrapped__``, or fairseq's command without
``--user-dir``). When one of these fails, fairseq fixed that bug itself: delete the repair, its tests
and this test. Each test's docstring opens with its repair's name; two repairs' bugs are shown by a
test of their own file (``SHOWN_ELSEWHERE``)."""

import ast
import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from conftest import run
from fairseq import checkpoint_utils, options
from fairseq.data import data_utils
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.distributed import utils as distributed_utils
from fairseq.optim.amp_optimizer import AMPOptimizer
from fairseq.optim.sgd import SGD
from fairseq.tasks.fairseq_task import FairseqTask
from fairseq_cli import interactive


def fairseqs_own(owner: Any, name: str) -> Any:
    """``owner.name`` as fairseq defines it, whether or not a repair replaced it in this process."""
    current = getattr(owner, name)
    return current.__wrapped__ if hasattr(current, "wrapped_by") else current


def test_batching_drops_the_last_sentences_of_a_dataset():
    """``batching``: 13 sentences at --required-batch-size-multiple 8 come back as one batch of 8."""
    batch_by_size = fairseqs_own(data_utils, "batch_by_size")
    batches = batch_by_size(np.arange(13), lambda index: 5, max_tokens=1000, required_batch_size_multiple=8)
    assert sum(len(batch) for batch in batches) == 8


def test_bf16_asks_for_a_tpu_on_a_machine_without_torch_xla():
    """``bf16_device``: fairseq's option parsing turns --bf16 into --tpu, whose device only torch_xla gives."""
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, ["data", "--arch", "lstm", "--bf16", "--cpu"])
    assert args.tpu and importlib.util.find_spec("torch_xla") is None


def test_copying_a_checkpoint_onto_checkpoint_last_writes_it_in_place(tmp_path):
    """``checkpoint_writing``: fairseq's copy onto checkpoint_last.pt rewrites that very file (same inode),
    so a process killed during the copy leaves it truncated."""
    last, new = tmp_path / "checkpoint_last.pt", tmp_path / "checkpoint_2_100.pt"
    last.write_bytes(b"good checkpoint")
    new.write_bytes(b"newer checkpoint, longer")
    inode = last.stat().st_ino
    fairseqs_own(checkpoint_utils.PathManager, "copy")(str(new), str(last), overwrite=True)
    assert last.read_bytes() == new.read_bytes() and last.stat().st_ino == inode


def test_a_missing_checkpoint_ends_fairseq_generate_in_a_traceback(multi30k):
    """``cli_errors``: without the plugin a wrong --path is a traceback (the plugin's one line:
    test_cli_errors.py)."""
    result = run("fairseq-generate", str(multi30k / "bin"), "-s", "en", "-t", "fr", "--path", "missing.pt", check=False)
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr and "Model file not found: missing.pt" in result.stderr


@pytest.mark.filterwarnings("ignore:`torch.cuda.amp.GradScaler")
def test_amp_on_a_cpu_ends_in_a_traceback_at_a_non_finite_gradient():
    """``cpu_amp``: fairseq's AMPOptimizer over torch's CUDA grad scaler, disabled on a CPU, takes a NaN
    gradient norm for a loss-scale overflow and asks the scaler for a backoff factor it never set; the
    scaler's step would apply the NaN."""
    weight = torch.nn.Parameter(torch.ones(2))
    weight.grad = torch.tensor([float("nan"), 1.0])
    common = SimpleNamespace(fp16_init_scale=128, amp_scale_window=None, min_loss_scale=1e-4)
    sgd = SGD(SimpleNamespace(lr=[0.1], momentum=0.0, weight_decay=0.0), [weight])
    with pytest.warns(UserWarning, match="CUDA is not available"):
        amp = AMPOptimizer(SimpleNamespace(optimizer=None, common=common), [weight], sgd)
    with pytest.raises(AttributeError, match="_backoff_factor"):
        fairseqs_own(AMPOptimizer, "clip_grad_norm")(amp, 0.0)
    amp.step()
    assert torch.isnan(weight).any()


def test_torchrun_on_a_machine_without_gpus_divides_by_zero(monkeypatch):
    """``distributed_launch``: fairseq reads torchrun's environment and takes its rank modulo the GPUs."""
    for name, value in {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "localhost", "MASTER_PORT": "1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    cfg = SimpleNamespace(distributed_port=-1, pipeline_model_parallel=False)
    with pytest.raises(ZeroDivisionError):
        fairseqs_own(distributed_utils, "_infer_torch_distributed_launch_init")(cfg)


def test_an_empty_source_gets_a_made_up_translation(hub):
    """``empty_source``: fairseq's search translates a source of </s> alone into a sentence."""
    generator = hub.task.build_generator(hub.models, hub.cfg.generation)
    batch = next(hub._build_batches([hub.encode(""), hub.encode("A dog runs .")], skip_invalid_size_inputs=False))
    hypotheses = fairseqs_own(FairseqTask, "inference_step")(hub.task, generator, hub.models, batch)
    empty = batch["id"].tolist().index(0)
    assert len(hypotheses[empty][0]["tokens"]) > 1


def test_interactive_ends_on_a_line_that_is_not_utf8_or_too_long(hub, tmp_path):
    """``interactive_input``: fairseq-interactive's reader decodes the whole input at once, and its
    batching stops the process at a line over --max-source-positions."""
    lines = tmp_path / "input.txt"
    lines.write_bytes(b"A dog .\nA \xff cat .\n")
    with pytest.raises(UnicodeDecodeError):
        list(fairseqs_own(interactive, "buffered_read")(str(lines), 10))
    make_batches = fairseqs_own(interactive, "make_batches")
    with pytest.raises(Exception, match="Size of sample #0 is invalid"):
        list(make_batches(["a " * 20], hub.cfg, hub.task, (5, 5), lambda line: line))


def test_interactive_ends_at_a_soft_alignment(multi30k, checkpoint, tmp_path):
    """``interactive_alignment``: fairseq-interactive unpacks each row of a soft alignment as a hard
    alignment's (source, target) pair."""
    lines = tmp_path / "input.txt"
    lines.write_text("A dog runs .\n", encoding="utf-8")
    parser = options.get_interactive_generation_parser()
    decode = ["-s", "en", "-t", "fr", "--path", str(checkpoint), "--input", str(lines), "--print-alignment", "soft"]
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(parser, [str(multi30k / "bin"), *decode]))
    with pytest.raises(ValueError, match="too many values to unpack"):
        fairseqs_own(interactive, "main")(cfg)


SHOWN_ELSEWHERE = {  # repair: the test file and test that show its bug
    "checkpoint_safety": ("test_checkpoint_safety.py", "test_fairseq_alone_with_weights_only_turned_off_runs_the_payload"),
    "log_output": ("test_log_output.py", "test_pinned_fairseq_asks_for_debug_logging_when_its_models_are_imported"),
}


def docstrings_by_test(path: Path) -> dict[str, str]:
    """Each test function of the file ``path``, by name: its docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name: ast.get_docstring(node) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def test_the_bugs_are_shown_for_every_repair():
    """Each repair module has a test here whose docstring opens with its name, or one in
    ``SHOWN_ELSEWHERE`` that exists."""
    from rnnsearch_plugin.fairseq_fixes import REPAIRS

    here = Path(__file__)
    shown = {docstring.split(":", 1)[0] for docstring in docstrings_by_test(here).values()}
    elsewhere = {name for name, (file, test) in SHOWN_ELSEWHERE.items() if test in docstrings_by_test(here.parent / file)}
    names = [repair.__name__.rsplit(".", 1)[1] for repair in REPAIRS]
    assert [name for name in names if f"``{name}``" not in shown and name not in elsewhere] == []
