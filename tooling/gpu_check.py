"""The GPU check: one command that installs what the GPU machine lacks (from
``.gpu_wheels``, ``tooling/gpu_wheels.sh``), then proves and measures the plugin there, each stage
in its own process under a hard time limit, so that a stage that fails or hangs is recorded and
the others still run:

  install    fairseq-fixed built against the machine's torch, and this plugin (skipped where
             fairseq already imports);
  tests      the model tests that make sense on the device (decoding, the equations, mixed
             precision, the chunked criterion, beam search against a forced pass), ``--device``;
  data       a synthetic corpus the size of Multi30k (29,000 training pairs), binarized by
             fairseq-preprocess;
  precision  ``UPDATES`` updates of rnnsearch_small through fairseq-train with --fp16, --bf16 and
             --amp: the loss is finite and falls;
  training   rnnsearch_small and fairseq's lstm at the same sizes, the same batches, --amp (both
             autocast on a GPU): target tokens/s after warm-up (``benchmarking/workers.py``'s train worker);
  paper      rnnsearch_wmt14's step (80 x 50, 30,000-word vocabularies, B.2's Adadelta,
             chunked_cross_entropy) in bfloat16 and float32: seconds per update, target tokens/s,
             peak memory, model-FLOP utilisation against the bfloat16 matmul peak measured here
             (``benchmarking/workers.py``'s paper worker, ``benchmarking/flops.py``);
  decode     fairseq-generate, beam 5 and 12, a batch of ``gen_batch`` sentences, every
             hypothesis ``decode_length`` tokens: sentences/s of rnnsearch_small and the lstm;
  compile    (``--stages``, not run by default; cuda only) the paper stage's bfloat16 step with every recurrence
             step (the encoder's and decoder's GRU, the attention) compiled by ``torch.compile``,
             against the same step eager, alternated: what fusing each step's small kernels buys
             where the step is bound by kernel launches.

``--device cpu`` runs the same stages at toy sizes, for ``tests/tooling/test_gpu_check.py``: the
paper stage with rnnsearch_small, beam 5 only, and --amp only (fairseq's --fp16 needs CUDA, and
its --bf16 is the GPU's). Writes PREFIX.json, PREFIX.md and PREFIX.log (all
output); exits 1 if any check failed.

    bash tooling/gpu_check.sh [--device cuda|cpu] [--out PREFIX]
"""

import argparse
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from benchmarking.fairseq_options import (
    QUICKSTART,
    QUICKSTART_BATCH,
    device_flags,
    recipe_options,
    trainer_options,
)  # tooling/ is on the path
from benchmarking.sections import generate, program, run_worker
from benchmarking.variants import arch_options
from benchmarking.workers import synthetic_step, timed

REPO = Path(__file__).resolve().parents[1]
WHEELS = REPO / ".gpu_wheels"
RESULT = "GPU_CHECK_RESULT "  # a stage's last line: its checks and figures, as JSON
TOTAL_SECONDS = 470  # the whole check, install included, within 8 minutes
SOURCE, TARGET = "src", "tgt"  # the synthetic corpus's two sides: made-up words, no language


@dataclass(frozen=True)
class Sizes:
    train_pairs: int
    test_pairs: int
    vocab: int  # words per side of the synthetic corpus
    updates: int  # fairseq-train updates per precision
    precisions: tuple[str, ...]
    max_tokens: int
    warmup: int  # training-speed updates before timing
    timed_updates: int
    paper_arch: str
    paper_vocab: int
    paper_sentences: int
    paper_length: int
    paper_updates: int
    matmul_size: int
    gen_batch: int
    decode_length: int
    beams: tuple[int, ...]
    timeouts: dict[str, int]  # seconds per stage


SIZES = {
    "cuda": Sizes(
        train_pairs=29_000,
        test_pairs=1_024,
        vocab=10_000,
        updates=50,
        precisions=("--fp16", "--bf16", "--amp"),
        max_tokens=QUICKSTART_BATCH,
        warmup=10,
        timed_updates=30,
        paper_arch="rnnsearch_wmt14",
        paper_vocab=30_000,
        paper_sentences=80,
        paper_length=50,
        paper_updates=5,
        matmul_size=8192,
        gen_batch=128,
        decode_length=20,
        beams=(5, 12),
        timeouts={"install": 300, "tests": 120, "data": 60, "precision": 150, "training": 90, "paper": 120, "decode": 120, "compile": 200},
    ),
    "cpu": Sizes(
        train_pairs=1_200,
        test_pairs=64,
        vocab=200,
        updates=12,
        precisions=("--amp",),
        max_tokens=600,
        warmup=2,
        timed_updates=3,
        paper_arch="rnnsearch_small",
        paper_vocab=1_000,
        paper_sentences=4,
        paper_length=8,
        paper_updates=1,
        matmul_size=256,
        gen_batch=64,
        decode_length=6,
        beams=(5,),
        timeouts={"install": 600, "tests": 120, "data": 60, "precision": 120, "training": 90, "paper": 90, "decode": 90, "compile": 300},
    ),
}
# each model's criterion; its architecture options: benchmarking/variants.py's arch_options
MODELS = {"rnnsearch_small": ["--criterion", "chunked_cross_entropy"], "lstm": ["--criterion", "cross_entropy"]}
# the precision stage trains the quickstart's recipe but its precision (the stage's), schedule
# (fixed, fairseq's default), validation, checkpoints and data buffer
PRECISION_RUN = (
    "common.amp=false",
    "lr_scheduler=null",
    "dataset.validate_interval_updates=null",
    "dataset.data_buffer_size=null",
    "checkpoint.save_interval_updates=null",
    "checkpoint.keep_interval_updates=null",
)
MODEL_TESTS = [
    "tests/models/test_decoding.py",
    "tests/models/test_equations.py",
    "tests/criterions/test_chunked_cross_entropy.py",
    "tests/speed/test_precision.py::test_bfloat16_training_tracks_float32",
    "tests/speed/test_precision.py::test_half_model_keeps_attention_close_to_float32",
]


# --------------------------------------------------------------------------- stages (each in its own process)


def check(name: str, passed: bool, detail: str = "") -> dict[str, Any]:
    return {"name": name, "passed": bool(passed), "detail": detail}


def run_command(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    """Run ``command``, its output passed through (into the log); raise on failure."""
    print(f"| $ {shlex.join(command)}", flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    print(result.stdout[-20000:], flush=True)
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} exited with {result.returncode}")
    return result


def stage_install(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    installed = importlib.util.find_spec("fairseq") is not None
    if not installed:
        install(opts)
    probe = subprocess.run(
        [sys.executable, "-c", "import fairseq, torch; print('fairseq', fairseq.__version__, 'built against torch', torch.__version__)"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    detail = (probe.stdout.strip() or probe.stderr.strip()[-300:]) + ("; it was installed already" if installed else "")
    return {"checks": [check("fairseq imports", probe.returncode == 0, detail)], "figures": {}}


def install(opts: argparse.Namespace) -> None:
    """fairseq and the plugin from the wheels ``tooling/gpu_wheels.sh`` built."""
    if not WHEELS.is_dir():
        raise RuntimeError(
            f"fairseq is not installed and there is no {WHEELS}: run tooling/gpu_wheels.sh where "
            "the package registry is reachable, and carry .gpu_wheels"
        )
    env = {key: value for key, value in os.environ.items() if key != "CUDA_HOME"}  # CUDA_HOME: fairseq's CUDA kernels, unused
    env["MAX_JOBS"] = str(os.cpu_count() or 1)
    run_command(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
            str(WHEELS),
            "--no-build-isolation",
            *opts.install_target,
            "fairseq-fixed==0.12.3.1",
            str(REPO),
        ],
        env=env,
        cwd=REPO,
    )


def stage_tests(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *MODEL_TESTS, "--device", opts.device, "-q", "-rfEs", "-p", "no:cacheprovider"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    print(result.stdout[-20000:], flush=True)
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|errors?|skipped)", result.stdout.splitlines()[-1])}
    passed = result.returncode == 0 and counts.get("passed", 0) > 0
    return {"checks": [check(f"model tests on {opts.device}", passed, result.stdout.splitlines()[-1])], "figures": {"tests": counts}}


def synthetic_pairs(count: int, vocab: int, seed: int) -> tuple[list[str], list[str]]:
    """Sentence pairs of 4-30 Zipf-distributed words; the target is the source's words, each
    mapped to a word of its own, in reverse order: learnable, so the loss falls."""
    import random

    rng = random.Random(seed)
    weights = [1 / rank for rank in range(1, vocab + 1)]
    sources, targets = [], []
    for _ in range(count):
        words = rng.choices(range(vocab), weights, k=rng.randint(4, 30))
        sources.append(" ".join(f"s{w}" for w in words))
        targets.append(" ".join(f"t{(w * 7 + 3) % vocab}" for w in reversed(words)))
    return sources, targets


def stage_data(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    raw = opts.work / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(opts.work / "bin", ignore_errors=True)  # fairseq-preprocess refuses to overwrite a dictionary
    for split, count, seed in (("train", sizes.train_pairs, 1), ("valid", sizes.test_pairs, 2), ("test", sizes.test_pairs, 3)):
        sources, targets = synthetic_pairs(count, sizes.vocab, seed)
        (raw / f"{split}.{SOURCE}").write_text("\n".join(sources) + "\n")
        (raw / f"{split}.{TARGET}").write_text("\n".join(targets) + "\n")
    run_command(
        [
            program("fairseq-preprocess"),
            "--source-lang",
            SOURCE,
            "--target-lang",
            TARGET,
            "--trainpref",
            str(raw / "train"),
            "--validpref",
            str(raw / "valid"),
            "--testpref",
            str(raw / "test"),
            "--destdir",
            str(opts.work / "bin"),
            "--workers",
            str(min(8, os.cpu_count() or 1)),
        ]
    )
    made = (opts.work / "bin" / f"train.{SOURCE}-{TARGET}.{SOURCE}.bin").exists()
    return {
        "checks": [check("fairseq-preprocess binarized the corpus", made)],
        "figures": {"train_pairs": sizes.train_pairs, "vocab": sizes.vocab},
    }


def train_losses(log: str) -> list[float]:
    """The loss of each train_inner line of a fairseq-train --log-format json log."""
    return [float(json.loads(line.split("| train_inner | ", 1)[1])["loss"]) for line in log.splitlines() if "| train_inner | {" in line]


def stage_precision(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    checks, figures = [], {}
    interval = max(1, sizes.updates // 5)
    for precision in sizes.precisions:
        save = opts.work / f"checkpoints{precision.replace('-', '_')}"
        given = [
            *("--max-tokens", str(sizes.max_tokens), "--max-update", str(sizes.updates), "--log-format", "json"),
            *("--log-interval", str(interval), "--save-dir", str(save), "--no-save", "--disable-validation"),
            *device_flags(opts.device),
            precision,
        ]
        data = [str(opts.work / "bin"), "--user-dir", "rnnsearch_plugin", "-s", SOURCE, "-t", TARGET]
        command = [program("fairseq-train"), *data, *recipe_options(QUICKSTART, PRECISION_RUN, given)]
        try:
            losses = train_losses(run_command(command, cwd=REPO, timeout=opts.stage_deadline - time.time()).stdout)
            finite = bool(losses) and all(math.isfinite(loss) for loss in losses)
            checks.append(
                check(
                    f"{precision}: {sizes.updates} updates, loss finite and falling",
                    finite and losses[-1] < losses[0],
                    f"losses every {interval} updates: {losses}",
                )
            )
            figures[precision] = {"losses": losses}
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            checks.append(check(f"{precision}: {sizes.updates} updates, loss finite and falling", False, str(error)))
    return {"checks": checks, "figures": figures}


def stage_training(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    figures = {}
    for name, options in MODELS.items():
        settings = argparse.Namespace(data=opts.work / "bin", pair=(SOURCE, TARGET), max_tokens=sizes.max_tokens, device=opts.device)
        args = [*trainer_options(settings), "--amp", *arch_options(name), *options]
        job = {
            "args": args,
            "warmup": sizes.warmup,
            "updates": sizes.timed_updates,
            "device": opts.device,
            "save": str(opts.work / f"{name}.pt"),
            "count_flops": False,
        }
        figures[name] = run_worker("train", job)
        print(f"| training {name} --amp: {figures[name]['wps']:.0f} target tokens/s", flush=True)
    checks = [timed_check(f"{name}: {sizes.timed_updates} updates timed", figures[name]["wps"], "target tokens/s") for name in MODELS]
    figures["ratio"] = figures["rnnsearch_small"]["wps"] / figures["lstm"]["wps"] if figures["lstm"]["wps"] else math.nan
    return {"checks": checks, "figures": figures}


def timed_check(name: str, rate: float, unit: str) -> dict[str, Any]:
    """Passed where a timed run measured a finite, positive rate."""
    return check(name, math.isfinite(rate) and rate > 0, f"{rate:.1f} {unit}")


def stage_paper(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    """bfloat16 first: its worker also measures the bfloat16 matmul peak that both rows are set against."""
    figures: dict[str, Any] = {}
    checks = []
    for dtype in ("bfloat16", "float32"):
        job = {
            "arch": sizes.paper_arch,
            "vocab": sizes.paper_vocab,
            "sentences": sizes.paper_sentences,
            "length": sizes.paper_length,
            "device": opts.device,
            "warmup": 2,
            "updates": sizes.paper_updates,
            "dtype": dtype,
            "criterion": "chunked_cross_entropy",
            "size": sizes.matmul_size,
        }
        row = run_worker("paper", job)
        row["mfu_bfloat16_peak"] = row["model_flops_per_second"] / figures.get("bfloat16", row)["matmul_flops_per_second"]
        figures[dtype] = row
        print(f"| paper {dtype}: {row}", flush=True)
        checks.append(timed_check(f"{sizes.paper_arch} step, {dtype}", row["wps"], "target tokens/s"))
    return {"checks": checks, "figures": figures}


def stage_decode(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    settings = argparse.Namespace(
        data=opts.work / "bin", gen_batch_size=sizes.gen_batch, decode_length=sizes.decode_length, device=opts.device, pair=(SOURCE, TARGET)
    )
    figures: dict[str, Any] = {}
    checks = []
    for beam in sizes.beams:
        for name in MODELS:
            row = generate(settings, opts.work / f"{name}.pt", beam, [])
            figures[f"{name} beam {beam}"] = row
            print(f"| decode {name} beam {beam}: {row['sentences_per_second']:.1f} sentences/s", flush=True)
            checks.append(
                check(
                    f"{name} beam {beam} translated every sentence",
                    row["sentences"] == sizes.test_pairs,
                    f"{row['sentences_per_second']:.1f} sentences/s",
                )
            )
        figures[f"ratio beam {beam}"] = (
            figures[f"rnnsearch_small beam {beam}"]["sentences_per_second"] / figures[f"lstm beam {beam}"]["sentences_per_second"]
        )
    return {"checks": checks, "figures": figures}


def compile_recurrences(model: Any) -> None:
    """torch.compile on the modules a recurrence calls once per step (the GRUs, the attention)."""
    import torch

    for module in (model.encoder.forward_rnn, model.encoder.backward_rnn, model.decoder.rnn, model.decoder.attention):
        if module is not None:
            module.forward = torch.compile(module.forward, dynamic=False)


def stage_compile(opts: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    steps = {}
    for variant in ("eager", "compiled"):
        step, model = synthetic_step(
            sizes.paper_arch, sizes.paper_vocab, sizes.paper_sentences, sizes.paper_length, opts.device, "bfloat16", "chunked_cross_entropy"
        )
        if variant == "compiled":
            compile_recurrences(model)
        warm_up, _ = timed(opts.device, [step] * 2)  # compiles, for the compiled one
        steps[variant] = (step, warm_up)
    seconds = {variant: [] for variant in steps}
    for _ in range(3):  # alternated
        for variant, (step, _) in steps.items():
            elapsed, tokens = timed(opts.device, [step] * sizes.paper_updates)
            seconds[variant].append(elapsed / sizes.paper_updates)
    figures = {
        variant: {
            "seconds_per_update": min(times),
            "wps": tokens / sizes.paper_updates / min(times),
            "first_two_steps_seconds": steps[variant][1],
        }
        for variant, times in seconds.items()
    }
    figures["speedup"] = figures["eager"]["seconds_per_update"] / figures["compiled"]["seconds_per_update"]
    print(f"| compile: {figures}", flush=True)
    return {
        "checks": [
            check(
                f"{sizes.paper_arch} bfloat16 step with compiled recurrences",
                math.isfinite(figures["speedup"]),
                f"{figures['speedup']:.2f}x the eager step ({figures['compiled']['wps']:.0f} against "
                f"{figures['eager']['wps']:.0f} target tokens/s; compiling took the first two steps "
                f"{figures['compiled']['first_two_steps_seconds']:.0f} s)",
            )
        ],
        "figures": figures,
    }


STAGES: dict[str, Callable[[argparse.Namespace, Sizes], dict[str, Any]]] = {
    "install": stage_install,
    "tests": stage_tests,
    "data": stage_data,
    "precision": stage_precision,
    "training": stage_training,
    "paper": stage_paper,
    "decode": stage_decode,
    "compile": stage_compile,
}
DEFAULT_STAGES = [name for name in STAGES if name != "compile"]


# --------------------------------------------------------------------------- orchestration


def tee(stream: TextIO, log: TextIO, lines: list[str]) -> None:
    for line in stream:
        sys.stdout.write(line)
        log.write(line)
        lines.append(line)
    sys.stdout.flush()
    log.flush()


def run_stage(name: str, opts: argparse.Namespace, timeout: float, log: TextIO) -> dict[str, Any]:
    """One stage in its own process group, killed with everything it started after ``timeout``."""
    banner = f"\n===== {name} (limit {timeout:.0f} s) =====\n"
    sys.stdout.write(banner)
    log.write(banner)
    command = [
        sys.executable,
        __file__,
        "--stage",
        name,
        "--device",
        opts.device,
        "--work",
        str(opts.work),
        "--deadline",
        str(time.time() + timeout),
    ]
    start, lines = time.perf_counter(), []
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    reader = threading.Thread(target=tee, args=(process.stdout, log, lines))
    reader.start()
    try:
        process.wait(timeout=timeout)
        error = "" if process.returncode == 0 else f"exited with {process.returncode}: {''.join(lines[-5:]).strip()}"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        error = f"stopped after its limit of {timeout:.0f} s"
    reader.join()
    seconds = time.perf_counter() - start
    reported = [json.loads(line[len(RESULT) :]) for line in lines if line.startswith(RESULT)]
    result = reported[-1] if reported else {"checks": [], "figures": {}}
    passed = not error and bool(result["checks"]) and all(c["passed"] for c in result["checks"])
    return {"stage": name, "seconds": round(seconds, 1), "passed": passed, "error": error, **result}


def environment() -> dict[str, str]:
    probe = (
        "import json, platform, torch; print(json.dumps({'python': platform.python_version(), 'torch': torch.__version__, "
        "'device': torch.cuda.get_device_name() if torch.cuda.is_available() else platform.processor() or 'cpu'}))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    described = json.loads(result.stdout) if result.returncode == 0 else {"error": result.stderr[-500:]}
    return {**described, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": str(os.cpu_count())}


def markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    lines = [
        f"# GPU check ({report['device']})",
        "",
        f"`{report['command']}` on {env.get('device')}, Python {env.get('python')}, torch {env.get('torch')}, "
        f"{env['cores']} cores, {env['date']}: {'every check passed' if report['passed'] else 'FAILED'} "
        f"in {report['seconds']:.0f} s.",
        "",
        "| stage | seconds | check | result |",
        "| --- | --- | --- | --- |",
    ]
    for stage in report["stages"]:
        rows = stage["checks"] or [check("(the stage reported nothing)", False)]
        for item in rows:
            verdict = "pass" if item["passed"] else "FAIL"
            lines.append(f"| {stage['stage']} | {stage['seconds']} | {item['name']} | {verdict}: {item['detail'][:300]} |")
        if stage["error"]:
            lines.append(f"| {stage['stage']} | {stage['seconds']} | the stage | FAIL: {stage['error'][:300]} |")
    lines += ["", "Figures (every figure of every stage: the JSON beside this file):", ""]
    for stage in report["stages"]:
        if stage["figures"]:
            lines.append(f"- {stage['stage']}: `{json.dumps(stage['figures'])[:1500]}`")
    return "\n".join(lines) + "\n"


def install_target(work: Path) -> list[str]:
    """Where pip installs: into this Python's environment where its site-packages is writable,
    else under the prefix ``work``/prefix, which PYTHONPATH and PATH then name for every later
    stage (``--prefix``, unlike ``--target``, counts the packages already installed)."""
    import sysconfig

    if os.access(sysconfig.get_paths()["purelib"], os.W_OK):
        return []
    prefix = work / "prefix"
    paths = sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [paths["purelib"], paths["platlib"], os.environ.get("PYTHONPATH")]))
    os.environ["PATH"] = os.pathsep.join([paths["scripts"], os.environ["PATH"]])
    return ["--prefix", str(prefix)]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument(
        "--out",
        type=Path,
        help="PREFIX of PREFIX.json, .md, .log (default: benchmarks/results-h200 on cuda, work/gpu_check/results-cpu on cpu)",
    )
    parser.add_argument("--work", type=Path, help="scratch folder (default: work/gpu_check/DEVICE)")
    parser.add_argument("--stages", default=",".join(DEFAULT_STAGES), help=f"of {','.join(STAGES)}")
    parser.add_argument("--stage", choices=list(STAGES), help=argparse.SUPPRESS)  # run one stage (internal)
    parser.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    unknown = set(opts.stages.split(",")) - set(STAGES)
    if unknown:
        parser.error(f"unknown stages {', '.join(sorted(unknown))}: choose from {', '.join(STAGES)}")
    if opts.device == "cpu" and "compile" in opts.stages.split(","):
        parser.error("the compile stage runs on cuda only: it measures what torch.compile buys the GPU's step")
    default_out = REPO / ("benchmarks/results-h200" if opts.device == "cuda" else "work/gpu_check/results-cpu")
    opts.out = (opts.out or default_out).resolve()
    opts.work = (opts.work or REPO / "work" / "gpu_check" / opts.device).resolve()
    return opts


def main(argv: list[str]) -> int:
    opts = parse_args(argv)
    sizes = SIZES[opts.device]
    if opts.stage:  # inside a stage's own process
        opts.stage_deadline = opts.deadline
        opts.install_target = json.loads(os.environ.get("GPU_CHECK_INSTALL_TARGET", "[]"))
        print(RESULT + json.dumps(STAGES[opts.stage](opts, sizes)), flush=True)
        return 0
    opts.work.mkdir(parents=True, exist_ok=True)
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    os.environ["GPU_CHECK_INSTALL_TARGET"] = json.dumps(install_target(opts.work))
    start, deadline = time.perf_counter(), time.time() + TOTAL_SECONDS
    stages = []
    with open(f"{opts.out}.log", "w") as log:
        for name in opts.stages.split(","):
            remaining = deadline - time.time()
            if remaining < 20:
                stages.append(
                    {
                        "stage": name,
                        "seconds": 0,
                        "passed": False,
                        "checks": [],
                        "figures": {},
                        "error": f"not run: the check's {TOTAL_SECONDS} s were spent",
                    }
                )
                continue
            stages.append(run_stage(name, opts, min(sizes.timeouts[name], remaining), log))
    report = {
        "device": opts.device,
        "command": shlex.join(["bash", "tooling/gpu_check.sh", *argv]),
        "environment": environment(),
        "sizes": asdict(sizes),
        "seconds": time.perf_counter() - start,
        "passed": all(stage["passed"] for stage in stages),
        "stages": stages,
    }
    Path(f"{opts.out}.json").write_text(json.dumps(report, indent=1) + "\n")
    Path(f"{opts.out}.md").write_text(markdown(report))
    print(f"| gpu_check: {'every check passed' if report['passed'] else 'FAILED'}; wrote {opts.out}.md, .json, .log")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
