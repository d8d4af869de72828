"""Speed and memory of rnnsearch_small / rnnencdec_small against fairseq's own ``lstm`` (matched
sizes, float32 and fairseq's cross_entropy: what fairseq gives a CPU user), in float32 and in
bfloat16 (``--amp`` on a CPU, ``rnnsearch_plugin/speed/precision.py``), with fairseq's cross_entropy and
with the plugin's chunked_cross_entropy; the model-FLOP utilisation of the paper's size against
the matmul peak of the dtype its step used; and peak memory. Writes ``OUT/results.json`` and
``OUT/results.md``; every ratio compares runs of the same invocation. Each measurement runs in its
own process (peak memory is per process). The report names the processor and the ISA flags that
matter (avx2, avx512f, avx512_bf16, amx_bf16) and measures the float32 and bfloat16 matmul peaks.

    python scripts/benchmark.py --data work/quickstart/data/bin --out benchmarks

Sections (``--sections``, default train,decode,paper,memory):
  train   fairseq's Trainer on the binarized training set, --max-tokens, ``--warmup`` updates
          then ``--updates`` timed ones; target tokens/s (fairseq's wps) and peak memory; every
          variant alternated (A B C A B C ...) ``--repeats`` times; median ratio (min-max) against
          the lstm. The timed batches come for the first time, as in a first epoch; then the same
          batches are timed again ("seen before"), as in every later epoch: with --amp, oneDNN
          compiles each bfloat16 product for its exact shape, once. The work per target token
          (forward + backward FLOPs of one more step, torch's FLOP counter) shows how much of a
          ratio comes from doing less and how much from speed.
  decode  fairseq-generate on the test set with the float32-trained checkpoints of the last
          training run, in float32 and with --amp, beam 5 and 12, ``--gen-batch-size``
          sentences per batch. Every hypothesis has exactly ``--decode-length`` tokens (--min-len
          = --max-len-b, --max-len-a 0), so every model does the same work whatever its weights;
          sentences/s as fairseq-generate reports it.
  paper   rnnsearch_wmt14 / rnnencdec_wmt14 with 30,000-word vocabularies on minibatches of 80
          pairs of length 50, Adadelta + clipping (B.2): seconds per update, target tokens/s,
          FLOP/s from ``rnnsearch_plugin/speed/flops.py`` (A.2 term by term, x3 for the backward
          pass) against the best large matmul of the step's dtype in the same process; float32
          with cross_entropy (the plugin before chunked_cross_entropy and --amp),
          then with chunked_cross_entropy, in float32 and bfloat16; every variant alternated
          ``--paper-repeats`` times, medians.
  memory  peak memory of one training step (glibc with MALLOC_MMAP_THRESHOLD_=65536), against
          sentence length at a fixed number of sentences, rnnsearch_small and rnnencdec_small
          (8,000-word vocabularies), with cross_entropy and with chunked_cross_entropy; and of
          the paper section's steps.
  allocator  the train measurement of rnnsearch_small and lstm under glibc's default malloc
          settings against those this benchmark runs with (``MALLOC_*`` from
          ``scripts/activate.sh``: freed memory stays in the process), alternated.

Every section runs with the allocator settings of the benchmark's own environment; the
report's header names them.

``--baseline DIR`` (a checkout of an earlier commit: ``git worktree add DIR REV``) adds that code's
float32 cross_entropy steps to the paper and memory sections, measured by its own benchmark.py
with its own plugin in the same run, for targets stated against the code of an earlier day.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Callable


def arch_options(arch: str) -> list[str]:
    """fairseq's options for a checkpoint name (rnnsearch_small, rnnencdec_small or lstm): the
    lstm at the small presets' sizes and dropout."""
    if arch != "lstm":
        return ["--arch", arch]
    from rnnsearch_plugin.models.rnnsearch import SMALL_PRESET, lstm_options

    return [*lstm_options(SMALL_PRESET), "--dropout", str(SMALL_PRESET["dropout"])]


CROSS_ENTROPY = ["--criterion", "cross_entropy"]
CHUNKED = ["--criterion", "chunked_cross_entropy"]
BFLOAT16 = ["--amp"]  # on a CPU: bfloat16 products (rnnsearch_plugin/speed/precision.py)
VARIANTS = {  # train row -> (checkpoint name, options); the first variant of each arch saves its checkpoint
    "lstm": ("lstm", CROSS_ENTROPY),
    "rnnsearch_small": ("rnnsearch_small", CROSS_ENTROPY),
    "rnnsearch_small chunked": ("rnnsearch_small", CHUNKED),
    "rnnsearch_small bf16": ("rnnsearch_small", [*CROSS_ENTROPY, *BFLOAT16]),
    "rnnsearch_small bf16 chunked": ("rnnsearch_small", [*CHUNKED, *BFLOAT16]),
    "rnnencdec_small": ("rnnencdec_small", CROSS_ENTROPY),
    "rnnencdec_small bf16 chunked": ("rnnencdec_small", [*CHUNKED, *BFLOAT16]),
}
DECODERS = {  # decode row -> (checkpoint name, options)
    "lstm": ("lstm", []),
    "rnnsearch_small": ("rnnsearch_small", []),
    "rnnsearch_small bf16": ("rnnsearch_small", BFLOAT16),
    "rnnencdec_small": ("rnnencdec_small", []),
    "rnnencdec_small bf16": ("rnnencdec_small", BFLOAT16),
}
PAPER = [  # (arch, dtype, criterion)
    ("rnnsearch_wmt14", "float32", "cross_entropy"), ("rnnsearch_wmt14", "float32", "chunked_cross_entropy"),
    ("rnnsearch_wmt14", "bfloat16", "cross_entropy"), ("rnnsearch_wmt14", "bfloat16", "chunked_cross_entropy"),
    ("rnnencdec_wmt14", "float32", "cross_entropy"), ("rnnencdec_wmt14", "bfloat16", "chunked_cross_entropy"),
]
PEER = "lstm"
SECTIONS = ("train", "decode", "paper", "memory", "allocator")
DEFAULT_SECTIONS = ("train", "decode", "paper", "memory")
MALLOC = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")  # set by scripts/activate.sh


# --------------------------------------------------------------------------- measurement (workers)

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


def program(name: str) -> str:
    """A console command installed beside this Python, or on PATH (pip's --prefix)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


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
    return {"seconds": seconds, "tokens": tokens, "wps": tokens / seconds, "wps_seen": tokens / seen_seconds,
            "peak_mb": peak_mb, "flops_per_token": flops_per_token}


def counted_flops_per_token(step: Callable[[], int]) -> float:
    """Floating-point operations of one more training step (forward and backward) per target
    token, as torch's FLOP counter sees the matrix products. oneDNN is off for this step, so
    fairseq's LSTM runs as countable products rather than one fused kernel."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as counter:
        tokens = step()
    return counter.get_total_flops() / tokens


def synthetic_step(arch: str, vocab: int, sentences: int, length: int, device: str, dtype: str = "float32",
                   criterion: str = "cross_entropy") -> tuple[Callable[[], int], Any]:
    """A training step of ``arch`` on random sentence pairs (T_x = T_y = length) with the paper's
    Adadelta and gradient rescaling (B.2: ``--optimizer rnnsearch_adadelta``, as fairseq's trainer
    calls it) and the cost per sentence; returns (step, model). On a CPU bfloat16 is the plugin's
    --amp; on a GPU, autocast as fairseq's --amp."""
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
    args = Namespace(arch=arch)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task).to(device).train()
    model.set_cpu_bfloat16(device == "cpu" and dtype == "bfloat16")
    loss_of = {"cross_entropy": CrossEntropyCriterion, "chunked_cross_entropy": ChunkedCrossEntropyCriterion}[criterion](
        task, sentence_avg=True)
    appendix_b2 = OmegaConf.structured(PaperAdadeltaConfig(lr=[1.0], clip_norm=1.0))
    optimizer = PaperAdadelta(appendix_b2, model.parameters())
    generator = torch.Generator().manual_seed(0)
    source, target = (torch.randint(4, len(dictionary), (sentences, length), generator=generator).to(device)
                      for _ in range(2))
    previous = torch.cat([torch.full_like(target[:, :1], dictionary.eos()), target[:, :-1]], dim=1)
    sample = {"net_input": {"src_tokens": source, "src_lengths": torch.full((sentences,), length, device=device),
                            "prev_output_tokens": previous}, "target": target, "ntokens": target.numel()}
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
    from rnnsearch_plugin.speed.flops import ModelSize, training_flops

    device, length, sentences = job["device"], job["length"], job["sentences"]
    step, model = synthetic_step(job["arch"], job["vocab"], sentences, length, device, job["dtype"], job["criterion"])
    timed(device, [step] * job["warmup"])
    reset_peak_memory(device)
    seconds, tokens = timed(device, [step] * job["updates"])
    peak_mb = peak_memory_mb(device)
    flops = sentences * training_flops(ModelSize.of(model), length, length) * job["updates"] / seconds
    peak = matmul_flops_per_second(device, job["dtype"], job.get("size", 4096))
    return {"seconds_per_update": seconds / job["updates"], "wps": tokens / seconds,
            "model_flops_per_second": flops, "matmul_flops_per_second": peak, "mfu": flops / peak, "peak_mb": peak_mb}


def memory_worker(job: dict[str, Any]) -> dict[str, Any]:
    step, _ = synthetic_step(job["arch"], job["vocab"], job["sentences"], job["length"], job["device"],
                             job.get("dtype", "float32"), job["criterion"])
    step()  # allocates the optimizer's state and the criterion's kept buffers
    resident = process_memory_mb("VmRSS") if job["device"] == "cpu" else 0.0
    reset_peak_memory(job["device"])
    step()
    peak = peak_memory_mb(job["device"])
    return {"peak_mb": peak, "step_mb": peak - resident}


def peaks_worker(job: dict[str, Any]) -> dict[str, Any]:
    return {dtype: matmul_flops_per_second(job["device"], dtype, job.get("size", 4096)) for dtype in ("float32", "bfloat16")}


WORKERS = {"train": train_worker, "paper": paper_worker, "memory": memory_worker, "peaks": peaks_worker}


# --------------------------------------------------------------------------- orchestration

def run_worker(kind: str, job: dict[str, Any], env: dict[str, str] | None = None,
               tree: Path | None = None) -> dict[str, Any]:
    """Run one measurement in a fresh process (with ``env``, default: this process's), by this script
    or, with ``tree`` (``--baseline``), by that checkout's own benchmark.py with its own plugin."""
    script, env = __file__, dict(os.environ if env is None else env)
    if tree is not None:
        script = str(tree / "scripts" / "benchmark.py")
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    command = [sys.executable, script, "--worker", kind, json.dumps(job)]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"benchmark: the {kind} worker failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def device_flags(device: str) -> list[str]:
    return ["--cpu"] if device == "cpu" else []


def pair_options(opts: argparse.Namespace) -> list[str]:
    """fairseq's -s/-t: the pair the data was prepared for (``hub.data_pair``)."""
    return ["-s", opts.pair[0], "-t", opts.pair[1]]


def trainer_options(opts: argparse.Namespace) -> list[str]:
    return [str(opts.data), "--user-dir", "rnnsearch_plugin", "--task", "translation", *pair_options(opts),
            "--optimizer", "adam", "--lr", "0.002", "--clip-norm", "1.0",
            "--max-tokens", str(opts.max_tokens), "--seed", "1", "--num-workers", "0",
            "--data-buffer-size", "0", *device_flags(opts.device)]


def variant_options(name: str) -> list[str]:
    arch, options = VARIANTS[name]
    return [*arch_options(arch), *options]


def train_job(opts: argparse.Namespace, name: str, save: Path | None = None) -> dict[str, Any]:
    """A train worker's job; ``save`` also counts the FLOPs (the report shows the last repeat's)."""
    return {"args": [*trainer_options(opts), *variant_options(name)], "warmup": opts.warmup,
            "updates": opts.updates, "device": opts.device, "save": str(save) if save else None,
            "count_flops": save is not None}


def train_section(opts: argparse.Namespace, checkpoints: Path) -> dict[str, Any]:
    """Every variant, alternated; the last repeat of each architecture's first (float32,
    cross_entropy) variant saves the checkpoint the decode section translates with."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    for repeat in range(opts.repeats):
        for name, (arch, _) in VARIANTS.items():
            save = checkpoints / f"{arch}.pt" if repeat == opts.repeats - 1 and name == arch else None
            runs[name].append(run_worker("train", train_job(opts, name, save)))
            print(f"| train {name} run {repeat + 1}: {runs[name][-1]['wps']:.0f} tokens/s, "
                  f"seen before {runs[name][-1]['wps_seen']:.0f}", flush=True)
    return {"runs": runs, "command": " ".join(trainer_options(opts)),
            "models": {name: " ".join(variant_options(name)) for name in VARIANTS}}


def allocator_settings(env: Mapping[str, str]) -> str:
    return " ".join(f"{key}={env[key]}" for key in MALLOC if env.get(key)) or "glibc defaults"


def allocator_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Tokens/s under glibc's default malloc settings and under this process's (kept memory)."""
    kept = allocator_settings(os.environ)
    if kept == "glibc defaults":
        raise SystemExit("benchmark: the allocator section compares the MALLOC_* settings of "
                         "scripts/activate.sh with glibc's defaults: source scripts/activate.sh first")
    settings = {"glibc defaults": glibc_defaults(), kept: None}  # None: inherit this process's environment
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {name: {s: [] for s in settings} for name in ("rnnsearch_small", PEER)}
    for repeat in range(opts.repeats):
        for name, per_setting in runs.items():
            for setting, env in settings.items():
                per_setting[setting].append(run_worker("train", train_job(opts, name), env))
                print(f"| allocator {name} {setting} run {repeat + 1}: {per_setting[setting][-1]['wps']:.0f} tokens/s",
                      flush=True)
    return {"settings": list(settings), "repeats": opts.repeats, "runs": runs}


def generate(opts: argparse.Namespace, checkpoint: Path, beam: int, options: list[str]) -> dict[str, float]:
    command = ["fairseq-generate", str(opts.data), "--user-dir", "rnnsearch_plugin", *pair_options(opts),
               "--gen-subset", "test", "--path", str(checkpoint), "--beam", str(beam),
               "--batch-size", str(opts.gen_batch_size), "--min-len", str(opts.decode_length),
               "--max-len-a", "0", "--max-len-b", str(opts.decode_length), "--num-workers", "0",
               *device_flags(opts.device), *options]
    result = subprocess.run([program(command[0]), *command[1:]], capture_output=True, text=True)
    found = re.search(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s", result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"benchmark: fairseq-generate failed ({result.returncode}):\n{result.stderr[-3000:]}")
    sentences, tokens, seconds = (float(g.replace(",", "")) for g in found.groups())
    return {"sentences": sentences, "tokens": tokens, "seconds": seconds, "sentences_per_second": sentences / seconds}


def decode_section(opts: argparse.Namespace, checkpoints: Path) -> dict[str, Any]:
    runs: dict[str, dict[str, list[dict[str, float]]]] = {}
    for beam in opts.beams:
        runs[str(beam)] = {name: [] for name in DECODERS}
        for repeat in range(opts.repeats):
            for name, (arch, options) in DECODERS.items():
                runs[str(beam)][name].append(generate(opts, checkpoints / f"{arch}.pt", beam, options))
                print(f"| decode beam {beam} {name} run {repeat + 1}: "
                      f"{runs[str(beam)][name][-1]['sentences_per_second']:.1f} sentences/s", flush=True)
    return {"runs": runs, "batch_size": opts.gen_batch_size, "length": opts.decode_length,
            "options": {name: " ".join(options) for name, (_, options) in DECODERS.items()}}


def paper_variants(opts: argparse.Namespace) -> list[tuple[str, tuple[str, str, str], Path | None]]:
    """(row name, (arch, dtype, criterion), tree): ours, then with ``--baseline`` that code's float32
    steps (cross_entropy: it may predate chunked_cross_entropy and --amp)."""
    ours = [(" ".join(variant), variant, None) for variant in PAPER]
    if opts.baseline is None:
        return ours
    archs = dict.fromkeys(arch for arch, _, _ in PAPER)
    return ours + [(f"{arch} float32 cross_entropy at {opts.baseline_commit}", (arch, "float32", "cross_entropy"),
                    opts.baseline) for arch in archs]


def paper_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Every variant (and the baseline's) alternated ``--paper-repeats`` times, each in its own process."""
    runs: dict[str, list[dict[str, float]]] = {}
    for repeat in range(opts.paper_repeats):
        for name, (arch, dtype, criterion), tree in paper_variants(opts):
            job = {"arch": arch, "vocab": 30_000, "sentences": 80, "length": 50, "device": opts.device,
                   "warmup": 1, "updates": opts.paper_updates, "dtype": dtype, "criterion": criterion}
            runs.setdefault(name, []).append(run_worker("paper", job, tree=tree))
            print(f"| paper {name} run {repeat + 1}: {runs[name][-1]}", flush=True)
    return {"runs": runs, "baseline": baseline_record(opts)}


def glibc_defaults() -> dict[str, str]:
    """This process's environment without the MALLOC_* settings of scripts/activate.sh."""
    return {key: value for key, value in os.environ.items() if key not in MALLOC}


def tensor_following_allocator() -> dict[str, str]:
    """glibc with every block of 64 KB or more in a mapping of its own, returned when freed, so that
    the process's peak follows what its tensors hold. By default glibc raises that threshold to
    the size of each mapped block freed (up to 32 MB), after which such blocks stay in its heap:
    four runs of the same 64 x 100 step then peaked anywhere from 1,341 to 1,968 MB."""
    return {**glibc_defaults(), "MALLOC_MMAP_THRESHOLD_": str(64 * 1024)}


def memory_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Peak memory of one step, with the allocator setting under which the process's peak follows
    what its tensors hold (kept memory adds the heap's fragmentation to it)."""
    rows: dict[str, dict[str, float]] = {}
    small = [(f"{arch} {criterion}", arch, criterion, None) for arch in ("rnnsearch_small", "rnnencdec_small")
             for criterion in ("cross_entropy", "chunked_cross_entropy")]
    if opts.baseline is not None:
        small += [(f"{arch} cross_entropy at {opts.baseline_commit}", arch, "cross_entropy", opts.baseline)
                  for arch in ("rnnsearch_small", "rnnencdec_small")]
    for name, arch, criterion, tree in small:
        rows[name] = {}
        for length in opts.lengths:
            job = {"arch": arch, "vocab": 8000, "sentences": opts.memory_sentences, "length": length,
                   "device": opts.device, "criterion": criterion}
            rows[name][str(length)] = run_worker("memory", job, tensor_following_allocator(), tree)["peak_mb"]
            print(f"| memory {name} length {length}: {rows[name][str(length)]:.0f} MB", flush=True)
    paper = {}
    for name, (arch, dtype, criterion), tree in paper_variants(opts):
        job = {"arch": arch, "vocab": 30_000, "sentences": 80, "length": 50, "device": opts.device,
               "dtype": dtype, "criterion": criterion}
        paper[name] = run_worker("memory", job, tensor_following_allocator(), tree)
        print(f"| memory {name} 80 x 50: {paper[name]}", flush=True)
    return {"sentences": opts.memory_sentences, "peak_mb": rows, "paper_peak_mb": paper,
            "allocator": allocator_settings(tensor_following_allocator()), "baseline": baseline_record(opts)}


def baseline_record(opts: argparse.Namespace) -> dict[str, str] | None:
    """The ``--baseline`` checkout's commit and subject, as the report names it."""
    if opts.baseline is None:
        return None
    subject = subprocess.run(["git", "-C", str(opts.baseline), "log", "-1", "--format=%s (%ad)", "--date=short"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return {"commit": opts.baseline_commit, "subject": subject}


# --------------------------------------------------------------------------- report

def speed_cells(ours: list[float], peer: list[float], digits: int) -> list[str]:
    """The median of ``ours`` and its ratio to ``peer`` as "median (min-max)" over per-repeat
    ratios (runs alternated, so repeat r of each model ran side by side)."""
    ratios = [a / b for a, b in zip(ours, peer)]
    return [f"{statistics.median(ours):.{digits}f}",
            f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"]


def environment(device: str) -> dict[str, str]:
    import fairseq
    import torch

    from rnnsearch_plugin.speed.routes import ISA_FLAGS, cpuinfo_field, isa_flags

    cpu = cpuinfo_field("model name") or platform.processor()
    described = torch.cuda.get_device_name() if device == "cuda" else f"{cpu}, {os.cpu_count()} cores"
    return {"device": described, "isa_flags": " ".join(isa_flags()) or "none of " + ", ".join(ISA_FLAGS),
            "torch": torch.__version__, "fairseq": fairseq.__version__,
            "python": platform.python_version(), "threads": str(torch.get_num_threads()),
            "allocator": allocator_settings(os.environ),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def markdown(results: dict[str, Any]) -> str:
    from rnnsearch_plugin.analysis.markdown import markdown_table

    env = results["environment"]
    lines = ["# Benchmark results", "",
             f"{env['device']}; torch {env['torch']} ({env['threads']} threads), fairseq {env['fairseq']}, "
             f"Python {env['python']}; {env['date']}.", "",
             f"ISA flags: {env.get('isa_flags', 'not recorded')}. Matmul peaks (4096^3, best of 5): "
             + ", ".join(f"{dtype} {flops / 1e9:.0f} GFLOP/s" for dtype, flops in results.get("peaks", {}).items()) + ".",
             "",
             f"Allocator: `{env.get('allocator', 'glibc defaults')}`.", "",
             f"Command: `{results['command']}`" + (f"; then {results['updated']}" if "updated" in results else ""), "",
             "What each optimisation bought, and the spread between runs: `changes.md`.", ""]
    if "train" in results:
        train = results["train"]
        lines += ["## Training throughput (target tokens/s, fairseq's wps) and peak memory", "",
                  f"Trainer options: `{train['command']} <model>`", ""]
        seen = all("wps_seen" in r for runs in train["runs"].values() for r in runs)  # older result files lack it
        rows = []
        for name, runs in train["runs"].items():
            speed = speed_cells([r["wps"] for r in runs], [r["wps"] for r in train["runs"][PEER]], 0)
            if seen:
                speed += speed_cells([r["wps_seen"] for r in runs], [r["wps_seen"] for r in train["runs"][PEER]], 0)
            flops = next((r["flops_per_token"] for r in runs if r["flops_per_token"]), None)
            work = [f"{flops / 1e6:.1f}", f"{flops * statistics.median(r['wps'] for r in runs) / 1e9:.1f}"] if flops else ["-", "-"]
            rows.append([f"`{name}`", f"`{train['models'][name]}`", *speed, *work,
                         f"{statistics.median(r['peak_mb'] for r in runs):.0f}"])
        speed_columns = ["tokens/s (median)", f"vs {PEER}: median (min-max)"]
        if seen:
            speed_columns += ["tokens/s, seen before", f"vs {PEER}, seen before"]
        lines += markdown_table(["model", "options", *speed_columns, "MFLOP per token", "GFLOP/s", "peak memory MB"],
                                rows) + [""]
    if "decode" in results:
        decode = results["decode"]
        lines += [f"## Beam search (fairseq-generate, test set, batch {decode['batch_size']}, "
                  f"every hypothesis {decode['length']} tokens)", ""]
        rows = []
        for beam, per_model in decode["runs"].items():
            for name, runs in per_model.items():
                speed = speed_cells([r["sentences_per_second"] for r in runs],
                                    [r["sentences_per_second"] for r in per_model[PEER]], 1)
                rows.append([beam, f"`{name}`", f"`{decode['options'][name]}`" if decode.get("options", {}).get(name) else "",
                             *speed])
        lines += markdown_table(["beam", "model", "options", "sentences/s (median)", f"vs {PEER}: median (min-max)"],
                                rows) + [""]
    if "paper" in results:
        lines += paper_markdown(results["paper"])
    if "memory" in results:
        memory = results["memory"]
        lengths = list(next(iter(memory["peak_mb"].values())))
        lines += [f"## Peak memory (MB) of one training step, {memory['sentences']} sentence pairs", "",
                  f"The process's peak resident memory under `{memory.get('allocator', 'glibc defaults')}`, where it "
                  "follows what the tensors hold (with kept memory it adds the heap's fragmentation; under glibc's "
                  "defaults it moves with the order of earlier frees).", *baseline_sentence(memory.get("baseline")), ""]
        rows = [[f"`{arch}`", *(f"{per_length[n]:.0f}" for n in lengths)] for arch, per_length in memory["peak_mb"].items()]
        lines += markdown_table(["model \\ length", *lengths], rows) + [""]
        if "paper_peak_mb" in memory:
            lines += ["Paper size, 80 pairs of length 50, 30,000-word vocabularies: the process's peak, and the step's "
                      "own (the peak less what the process held before the step: weights, gradients, Adadelta's "
                      "state, the criterion's kept buffers).", ""]
            rows = [[f"`{name}`", f"{r['peak_mb']:.0f}", f"{r['step_mb']:.0f}" if "step_mb" in r else "-"]
                    for name, r in memory["paper_peak_mb"].items()]  # a baseline's worker may not measure the latter
            lines += markdown_table(["model, dtype, criterion", "peak memory MB", "the step's own MB"], rows) + [""]
    if "allocator" in results:
        allocator = results["allocator"]
        default, kept = allocator["settings"]
        lines += [f"## Allocator: glibc's default malloc settings against `{kept}` (`scripts/activate.sh`)", "",
                  f"Training as in the first table; {allocator['repeats']} alternated runs.", ""]
        rows = []
        for name, per_setting in allocator["runs"].items():
            speed = speed_cells([r["wps"] for r in per_setting[kept]], [r["wps"] for r in per_setting[default]], 0)
            peaks = (f"{statistics.median(r['peak_mb'] for r in per_setting[s]):.0f}" for s in (default, kept))
            rows.append([f"`{name}`", f"{statistics.median(r['wps'] for r in per_setting[default]):.0f}", *speed, *peaks])
        lines += markdown_table(["model", "tokens/s, glibc defaults", "tokens/s, kept memory",
                                 "kept vs defaults: median (min-max)", "peak MB, defaults", "peak MB, kept"], rows) + [""]
    return "\n".join(lines)


def paper_markdown(paper: dict[str, Any]) -> list[str]:
    """The paper section's table: medians over alternated runs, and each ratio's median (min-max)."""
    from rnnsearch_plugin.analysis.markdown import markdown_table

    runs = paper.get("runs") or {name: [r] for name, r in paper.items()}  # older result files: one run, no "runs"
    baseline, repeats = paper.get("baseline"), len(next(iter(runs.values())))
    lines = ["## Paper size: 30,000-word vocabularies, 80 pairs of length 50, Adadelta + clipping", "",
             f"Each variant ran {repeats} time{'s' * (repeats != 1)}, alternated with the others; medians. "
             "MFU against the matmul peak of the step's dtype, measured in the same process; the speed-up "
             "against the same architecture in float32 with cross_entropy (what the plugin did before "
             "chunked_cross_entropy and --amp)"
             + (", and against that of the baseline." if baseline else "."), *baseline_sentence(baseline), ""]
    columns = ["model, dtype, criterion", "s/update (median)", "speed-up: median (min-max)"]
    if baseline:
        columns.append(f"vs {baseline['commit']}: median (min-max)")
    rows = []
    for name, variant_runs in runs.items():
        arch = name.split()[0]
        peers = [runs[f"{arch} float32 cross_entropy"]]
        if baseline:
            peers.append(runs[f"{arch} float32 cross_entropy at {baseline['commit']}"])
        ratios = [speed_cells([r["wps"] for r in variant_runs], [r["wps"] for r in peer], 0)[1] for peer in peers]
        median = {key: statistics.median(r[key] for r in variant_runs)
                  for key in ("seconds_per_update", "wps", "model_flops_per_second", "matmul_flops_per_second", "mfu")}
        rows.append([f"`{name}`", f"{median['seconds_per_update']:.2f}", *ratios, f"{median['wps']:.0f}",
                     f"{median['model_flops_per_second'] / 1e9:.1f}", f"{median['matmul_flops_per_second'] / 1e9:.1f}",
                     f"{100 * median['mfu']:.0f}%"])
    return lines + markdown_table([*columns, "target tokens/s", "model GFLOP/s", "matmul GFLOP/s", "MFU"], rows) + [""]


def baseline_sentence(baseline: dict[str, str] | None) -> list[str]:
    if not baseline:
        return []
    return ["", f"Baseline (`--baseline`): commit {baseline['commit']}, \"{baseline['subject']}\", measured by its own "
                "benchmark.py with its own plugin in the same run."]


def binarized_pair(data: Path | None, program: str) -> tuple[str, str]:
    """The (source, target) languages of a fairseq-binarized folder, from its manifest or its file
    names (``hub.data_pair``); exits with one line when it is not a binarized folder of one pair.
    The load scripts use it too."""
    from rnnsearch_plugin.hub import data_pair

    pair = data_pair(data) if data is not None and data.is_dir() else None
    if pair is None or not all((data / f"dict.{lang}.txt").exists() for lang in pair):  # type: ignore[operator]
        raise SystemExit(f"{program}: error: {data} is not a binarized folder of one language pair "
                         "(the bin/ of scripts/prepare_data.py's --out)")
    return pair


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="a binarized corpus, any pair (prepare_data.py OUT/bin; "
                                                  "the README's figures: Multi30k as the quickstart prepares it)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--sections", default=",".join(DEFAULT_SECTIONS), help=f"of {','.join(SECTIONS)}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--max-tokens", type=int, default=4000)
    parser.add_argument("--beams", type=lambda s: [int(b) for b in s.split(",")], default=[5, 12])
    parser.add_argument("--gen-batch-size", type=int, default=64)
    parser.add_argument("--decode-length", type=int, default=20)
    parser.add_argument("--paper-updates", type=int, default=3)
    parser.add_argument("--paper-repeats", type=int, default=3, help="alternated runs of each paper-size variant")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="a checkout of an earlier commit (git worktree add DIR REV): the paper and memory "
                             "sections also measure its float32 cross_entropy steps, with its own benchmark.py")
    parser.add_argument("--lengths", type=lambda s: [int(n) for n in s.split(",")], default=[10, 20, 40, 60, 80, 100])
    parser.add_argument("--memory-sentences", type=int, default=64)
    parser.add_argument("--update", action="store_true",
                        help="keep the other sections of OUT/results.json and replace the ones run")
    opts = parser.parse_args(argv)
    opts.sections = opts.sections.split(",")
    unknown = set(opts.sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}: choose from {','.join(SECTIONS)}")
    if opts.baseline is not None:
        if not (opts.baseline / "scripts" / "benchmark.py").exists():
            parser.error(f"--baseline {opts.baseline}: no scripts/benchmark.py there; give a checkout of this repository")
        opts.baseline_commit = subprocess.run(["git", "-C", str(opts.baseline), "rev-parse", "--short", "HEAD"],
                                              capture_output=True, text=True, check=True).stdout.strip()
    if {"train", "decode", "allocator"} & set(opts.sections):
        opts.pair = binarized_pair(opts.data, "benchmark")
    return opts


def main(argv: list[str]) -> None:
    if argv[:1] == ["--worker"]:
        print(json.dumps(WORKERS[argv[1]](json.loads(argv[2]))))
        return
    opts = parse_args(argv)
    opts.out.mkdir(parents=True, exist_ok=True)
    checkpoints = opts.out / "checkpoints"
    checkpoints.mkdir(exist_ok=True)
    results: dict[str, Any] = {"environment": environment(opts.device),
                               "command": " ".join(["python", "scripts/benchmark.py", *argv])}
    if opts.update and (opts.out / "results.json").exists():
        earlier = json.loads((opts.out / "results.json").read_text())
        results = {**earlier, "updated": f"{', '.join(opts.sections)} by `{results['command']}` "
                                         f"on {results['environment']['date']}"}
    if "peaks" not in results:
        results["peaks"] = run_worker("peaks", {"device": opts.device})
    if "train" in opts.sections or "decode" in opts.sections:
        results["train"] = train_section(opts, checkpoints)
    if "decode" in opts.sections:
        results["decode"] = decode_section(opts, checkpoints)
    if "paper" in opts.sections:
        results["paper"] = paper_section(opts)
    if "memory" in opts.sections:
        results["memory"] = memory_section(opts)
    if "allocator" in opts.sections:
        results["allocator"] = allocator_section(opts)
    (opts.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (opts.out / "results.md").write_text(markdown(results))
    print(f"| wrote {opts.out / 'results.md'} and results.json")


if __name__ == "__main__":
    main(sys.argv[1:])
