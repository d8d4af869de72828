"""What runs inside one measurement process (``benchmark.py --worker KIND JOB``): fairseq's
training step on real batches, the paper-size step on random sentence pairs, the peak memory of
one step, and the matmul peaks; and the timing and memory readings they take. Each worker takes
a JSON job and returns a JSON-able record; heavy modules are imported inside the workers, so a
process imports only what its measurement needs."""

import re
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable


def reset_peak_memory(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    else:  # Linux: writing 5 resets the process's peak resident set size (VmHWM)
        Path("/proc/self/clear_refs").write_text("5")


def process_memory_mb(field: str, pid: str = "self") -> float:
    """A memory field of /proc/PID/status (VmRSS: resident now, VmHWM: peak resident) in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", status).group(1)) / 1024


def peak_memory_mb(device: str) -> float:
    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    return process_memory_mb("VmHWM")


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def timed(device: str, steps: list[Callable[[], int]]) -> tuple[float, int]:
    """Run the steps (each returns its target tokens); (seconds, target tokens)."""
    synchronize(device)
    start, tokens = time.perf_counter(), 0
    for step in steps:
        tokens += step()
    synchronize(device)
    return time.perf_counter() - start, tokens


def train_worker(job: dict[str, Any]) -> dict[str, Any]:
    """fairseq's Trainer, as fairseq-train builds it, on the first batches of epoch 1."""
    from fairseq import options, tasks, utils
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.trainer import Trainer

    args = options.parse_args_and_arch(options.get_training_parser(), input_args=job["args"])  # loads --user-dir
    from rnnsearch_plugin import fairseq_fixes

    fairseq_fixes.install()  # the repairs fairseq-train installs (every sentence batched, --amp on a CPU, ...)
    cfg = convert_namespace_to_omegaconf(args)
    utils.import_user_module(cfg.common)
    task = tasks.setup_task(cfg.task)
    trainer = Trainer(cfg, task, task.build_model(cfg.model), task.build_criterion(cfg.criterion))
    batches = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    window: list[dict[str, Any]] = []

    def train(sample: dict[str, Any]) -> int:
        trainer.train_step([sample])
        return int(sample["ntokens"])

    def step() -> int:
        window.append(next(batches))
        return train(window[-1])

    timed(job["device"], [step] * job["warmup"])
    window.clear()
    reset_peak_memory(job["device"])
    seconds, tokens = timed(job["device"], [step] * job["updates"])
    peak_mb = peak_memory_mb(job["device"])
    seen_seconds, _ = timed(job["device"], [partial(train, sample) for sample in window])  # every shape seen
    flops_per_token = counted_flops_per_token(step) if job["count_flops"] else None
    if job.get("save"):
        trainer.consolidate_optimizer()  # as fairseq's checkpoint_utils does before saving
        trainer.save_checkpoint(job["save"], {})
    return {
        "seconds": seconds,
        "tokens": tokens,
        "wps": tokens / seconds,
        "wps_seen": tokens / seen_seconds,
        "peak_mb": peak_mb,
        "flops_per_token": flops_per_token,
    }


def counted_flops_per_token(step: Callable[[], int]) -> float:
    """Floating-point operations of one more training step (forward and backward) per target
    token, as torch's FLOP counter sees the matrix products. oneDNN is off for this step, so
    fairseq's LSTM runs as countable products rather than one fused kernel."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as counter:
        tokens = step()
    return counter.get_total_flops() / tokens


def synthetic_step(
    arch: str,
    vocab: int,
    sentences: int,
    length: int,
    device: str,
    dtype: str = "float32",
    criterion: str = "cross_entropy",
    tricks: str = "all",
) -> tuple[Callable[[], int], Any]:
    """A training step of ``arch`` on random sentence pairs (T_x = T_y = length) with the paper's
    Adadelta and gradient rescaling (B.2: ``--optimizer rnnsearch_adadelta``, as fairseq's trainer
    calls it) and the cost per sentence, the engine's ``tricks`` as --engine-tricks names them;
    returns (step, model). On a CPU bfloat16 is the plugin's --amp; on a GPU, autocast as fairseq's --amp."""
    from argparse import Namespace
    from types import SimpleNamespace

    import torch
    from fairseq.criterions.cross_entropy import CrossEntropyCriterion
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY
    from omegaconf import OmegaConf

    from rnnsearch_plugin.criterions.chunked_cross_entropy import ChunkedCrossEntropyCriterion
    from rnnsearch_plugin.optim.rnnsearch_adadelta import PaperAdadelta, PaperAdadeltaConfig

    dictionary = Dictionary()
    for index in range(vocab):
        dictionary.add_symbol(f"w{index}")
    args = Namespace(arch=arch, amp=device == "cpu" and dtype == "bfloat16", cpu=device == "cpu", engine_tricks=tricks)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task).to(device).train()
    loss_of = {"cross_entropy": CrossEntropyCriterion, "chunked_cross_entropy": ChunkedCrossEntropyCriterion}[criterion](
        task, sentence_avg=True
    )
    appendix_b2 = OmegaConf.structured(PaperAdadeltaConfig(lr=[1.0], clip_norm=1.0))
    optimizer = PaperAdadelta(appendix_b2, model.parameters())
    generator = torch.Generator().manual_seed(0)
    source, target = (torch.randint(4, len(dictionary), (sentences, length), generator=generator).to(device) for _ in range(2))
    previous = torch.cat([torch.full_like(target[:, :1], dictionary.eos()), target[:, :-1]], dim=1)
    sample = {
        "net_input": {"src_tokens": source, "src_lengths": torch.full((sentences,), length, device=device), "prev_output_tokens": previous},
        "target": target,
        "ntokens": target.numel(),
    }
    autocast = torch.autocast(device, dtype=getattr(torch, dtype), enabled=device != "cpu" and dtype != "float32")

    def step() -> int:
        optimizer.zero_grad()  # first, as fairseq's Trainer.train_step: the last step's gradients are freed
        with autocast:
            loss, sample_size, _ = loss_of(model, sample)
        (loss / sample_size).backward()
        optimizer.clip_grad_norm(1.0)
        optimizer.step()
        return target.numel()

    return step, model


def matmul_flops_per_second(device: str, dtype: str = "float32", size: int = 4096, repeats: int = 5) -> float:
    """Best throughput of a size x size x size matrix product in ``dtype``."""
    import torch

    a, b, product = (torch.randn(size, size, device=device).to(getattr(torch, dtype)) for _ in range(3))

    def multiply() -> int:
        torch.mm(a, b, out=product)
        return 0

    timed(device, [multiply])  # warm-up
    return 2 * size**3 / min(timed(device, [multiply])[0] for _ in range(repeats))


def paper_worker(job: dict[str, Any]) -> dict[str, Any]:
    """The paper section's step: seconds per update, target tokens/s, model FLOP/s (A.2's count)
    against the matmul peak of the step's dtype in this process, and peak memory."""
    from .flops import ModelSize, training_flops

    device, length, sentences = job["device"], job["length"], job["sentences"]
    step, model = synthetic_step(
        job["arch"], job["vocab"], sentences, length, device, job["dtype"], job["criterion"], job.get("tricks", "all")
    )
    timed(device, [step] * job["warmup"])
    reset_peak_memory(device)
    seconds, tokens = timed(device, [step] * job["updates"])
    peak_mb = peak_memory_mb(device)
    flops = sentences * training_flops(ModelSize.of(model), length, length) * job["updates"] / seconds
    peak = matmul_flops_per_second(device, job["dtype"], job.get("size", 4096))
    return {
        "seconds_per_update": seconds / job["updates"],
        "wps": tokens / seconds,
        "model_flops_per_second": flops,
        "matmul_flops_per_second": peak,
        "mfu": flops / peak,
        "peak_mb": peak_mb,
    }


def memory_worker(job: dict[str, Any]) -> dict[str, Any]:
    """The process's peak memory over one step, and the step's own (the peak less what the
    process held before it)."""
    step, _ = synthetic_step(
        job["arch"],
        job["vocab"],
        job["sentences"],
        job["length"],
        job["device"],
        job.get("dtype", "float32"),
        job["criterion"],
        job.get("tricks", "all"),
    )
    step()  # allocates the optimizer's state and the criterion's kept buffers
    resident = process_memory_mb("VmRSS") if job["device"] == "cpu" else 0.0
    reset_peak_memory(job["device"])
    step()
    peak = peak_memory_mb(job["device"])
    return {"peak_mb": peak, "step_mb": peak - resident}


def peaks_worker(job: dict[str, Any]) -> dict[str, Any]:
    """The float32 and bfloat16 matmul peaks the report's header names."""
    return {dtype: matmul_flops_per_second(job["device"], dtype, job.get("size", 4096)) for dtype in ("float32", "bfloat16")}


WORKERS = {"train": train_worker, "paper": paper_worker, "memory": memory_worker, "peaks": peaks_worker}
