"""The benchmark's sections, one function each (``registry.SECTIONS`` names them): each runs its
measurements, every one in a fresh process (``run_worker``, or fairseq-generate for beam search),
its variants alternated (A B C A B C ...) so that repeat r of each ran side by side, and returns
the record that ``OUT/results.json`` keeps under its name."""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from .environment import allocator_settings, glibc_defaults, tensor_following_allocator
from .fairseq_options import device_flags, generate_options, trainer_options
from .variants import DECODERS, PAPER, PEER, VARIANTS, variant_options

COMMAND = Path(__file__).resolve().parents[1] / "benchmark.py"  # runs one worker with --worker KIND JOB


def run_worker(kind: str, job: dict[str, Any], env: dict[str, str] | None = None, tree: Path | None = None) -> dict[str, Any]:
    """Run one measurement in a fresh process (with ``env``, default: this process's), by this
    benchmark.py or, with ``tree`` (``--baseline``), by that checkout's own benchmark.py with its own
    plugin (one file or this package: both take ``--worker KIND JOB``)."""
    script, env = str(COMMAND), dict(os.environ if env is None else env)
    if tree is not None:
        script = str(baseline_script(tree))
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    command = [sys.executable, script, "--worker", kind, json.dumps(job)]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"benchmark: the {kind} worker failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def baseline_script(tree: Path) -> Path | None:
    """A checkout's benchmark.py: in tooling/, or in scripts/ in a checkout from before tooling/ was split off."""
    return next((script for script in (tree / "tooling" / "benchmark.py", tree / "scripts" / "benchmark.py") if script.exists()), None)


def checkpoints(opts: argparse.Namespace) -> Path:
    """Where the train section saves the checkpoints the decode section translates with."""
    return opts.out / "checkpoints"


def train_job(opts: argparse.Namespace, name: str, save: Path | None = None) -> dict[str, Any]:
    """A train worker's job; ``save`` also counts the FLOPs (the report shows the last repeat's)."""
    return {
        "args": [*trainer_options(opts), *variant_options(name)],
        "warmup": opts.warmup,
        "updates": opts.updates,
        "device": opts.device,
        "save": str(save) if save else None,
        "count_flops": save is not None,
    }


def train_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Every variant, alternated; the last repeat of each architecture's first (float32,
    cross_entropy) variant saves the checkpoint the decode section translates with."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    for repeat in range(opts.repeats):
        for name, (arch, _) in VARIANTS.items():
            save = checkpoints(opts) / f"{arch}.pt" if repeat == opts.repeats - 1 and name == arch else None
            runs[name].append(run_worker("train", train_job(opts, name, save)))
            print(
                f"| train {name} run {repeat + 1}: {runs[name][-1]['wps']:.0f} tokens/s, seen before {runs[name][-1]['wps_seen']:.0f}",
                flush=True,
            )
    return {
        "runs": runs,
        "command": " ".join(trainer_options(opts)),
        "models": {name: " ".join(variant_options(name)) for name in VARIANTS},
    }


def program(name: str) -> str:
    """A console command installed beside this Python, or on PATH (pip's --prefix)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def generate(opts: argparse.Namespace, checkpoint: Path, beam: int, options: list[str]) -> dict[str, float]:
    """fairseq-generate on the test set, every hypothesis ``--decode-length`` tokens; sentences/s as it reports it."""
    command = [
        "fairseq-generate",
        *generate_options(opts, checkpoint, beam),
        *device_flags(opts.device),
        *options,
    ]
    result = subprocess.run([program(command[0]), *command[1:]], capture_output=True, text=True)
    found = re.search(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s", result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"benchmark: fairseq-generate failed ({result.returncode}):\n{result.stderr[-3000:]}")
    sentences, tokens, seconds = (float(g.replace(",", "")) for g in found.groups())
    return {"sentences": sentences, "tokens": tokens, "seconds": seconds, "sentences_per_second": sentences / seconds}


def decode_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Beam search with the train section's float32 checkpoints, every decoder alternated per beam."""
    runs: dict[str, dict[str, list[dict[str, float]]]] = {}
    for beam in opts.beams:
        runs[str(beam)] = {name: [] for name in DECODERS}
        for repeat in range(opts.repeats):
            for name, (arch, options) in DECODERS.items():
                runs[str(beam)][name].append(generate(opts, checkpoints(opts) / f"{arch}.pt", beam, options))
                print(
                    f"| decode beam {beam} {name} run {repeat + 1}: {runs[str(beam)][name][-1]['sentences_per_second']:.1f} sentences/s",
                    flush=True,
                )
    return {
        "runs": runs,
        "batch_size": opts.gen_batch_size,
        "length": opts.decode_length,
        "options": {name: " ".join(options) for name, (_, options) in DECODERS.items()},
    }


def paper_variants(opts: argparse.Namespace) -> list[tuple[str, tuple[str, str, str], Path | None]]:
    """(row name, (arch, dtype, criterion), tree): ours, then with ``--baseline`` that code's float32
    steps (cross_entropy: it may predate chunked_cross_entropy and --amp)."""
    ours = [(" ".join(variant), variant, None) for variant in PAPER]
    if opts.baseline is None:
        return ours
    archs = dict.fromkeys(arch for arch, _, _ in PAPER)
    return ours + [
        (f"{arch} float32 cross_entropy at {opts.baseline_commit}", (arch, "float32", "cross_entropy"), opts.baseline) for arch in archs
    ]


def paper_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Every variant (and the baseline's) alternated ``--paper-repeats`` times, each in its own process."""
    runs: dict[str, list[dict[str, float]]] = {}
    for repeat in range(opts.paper_repeats):
        for name, (arch, dtype, criterion), tree in paper_variants(opts):
            job = {
                "arch": arch,
                "vocab": 30_000,
                "sentences": 80,
                "length": 50,
                "device": opts.device,
                "warmup": 1,
                "updates": opts.paper_updates,
                "dtype": dtype,
                "criterion": criterion,
            }
            runs.setdefault(name, []).append(run_worker("paper", job, tree=tree))
            print(f"| paper {name} run {repeat + 1}: {runs[name][-1]}", flush=True)
    return {"runs": runs, "baseline": baseline_record(opts)}


def memory_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Peak memory of one step, with the allocator setting under which the process's peak follows
    what its tensors hold (kept memory adds the heap's fragmentation to it)."""
    rows: dict[str, dict[str, float]] = {}
    small = [
        (f"{arch} {criterion}", arch, criterion, None)
        for arch in ("rnnsearch_small", "rnnencdec_small")
        for criterion in ("cross_entropy", "chunked_cross_entropy")
    ]
    if opts.baseline is not None:
        small += [
            (f"{arch} cross_entropy at {opts.baseline_commit}", arch, "cross_entropy", opts.baseline)
            for arch in ("rnnsearch_small", "rnnencdec_small")
        ]
    for name, arch, criterion, tree in small:
        rows[name] = {}
        for length in opts.lengths:
            job = {
                "arch": arch,
                "vocab": 8000,
                "sentences": opts.memory_sentences,
                "length": length,
                "device": opts.device,
                "criterion": criterion,
            }
            rows[name][str(length)] = run_worker("memory", job, tensor_following_allocator(), tree)["peak_mb"]
            print(f"| memory {name} length {length}: {rows[name][str(length)]:.0f} MB", flush=True)
    paper = {}
    for name, (arch, dtype, criterion), tree in paper_variants(opts):
        job = {"arch": arch, "vocab": 30_000, "sentences": 80, "length": 50, "device": opts.device, "dtype": dtype, "criterion": criterion}
        paper[name] = run_worker("memory", job, tensor_following_allocator(), tree)
        print(f"| memory {name} 80 x 50: {paper[name]}", flush=True)
    return {
        "sentences": opts.memory_sentences,
        "peak_mb": rows,
        "paper_peak_mb": paper,
        "allocator": allocator_settings(tensor_following_allocator()),
        "baseline": baseline_record(opts),
    }


def allocator_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Tokens/s under glibc's default malloc settings and under this process's (kept memory)."""
    kept = allocator_settings(os.environ)
    if kept == "glibc defaults":
        raise SystemExit(
            "benchmark: the allocator section compares the MALLOC_* settings of "
            "scripts/activate.sh with glibc's defaults: source scripts/activate.sh first"
        )
    settings = {"glibc defaults": glibc_defaults(), kept: None}  # None: inherit this process's environment
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {name: {s: [] for s in settings} for name in ("rnnsearch_small", PEER)}
    for repeat in range(opts.repeats):
        for name, per_setting in runs.items():
            for setting, env in settings.items():
                per_setting[setting].append(run_worker("train", train_job(opts, name), env))
                print(f"| allocator {name} {setting} run {repeat + 1}: {per_setting[setting][-1]['wps']:.0f} tokens/s", flush=True)
    return {"settings": list(settings), "repeats": opts.repeats, "runs": runs}


def baseline_record(opts: argparse.Namespace) -> dict[str, str] | None:
    """The ``--baseline`` checkout's commit and subject, as the report names it."""
    if opts.baseline is None:
        return None
    subject = subprocess.run(
        ["git", "-C", str(opts.baseline), "log", "-1", "--format=%s (%ad)", "--date=short"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {"commit": opts.baseline_commit, "subject": subject}
