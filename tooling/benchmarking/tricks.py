"""The ``tricks`` section: what each speed trick of the plugin buys on the whole step it serves,
measured with and without it, alternated, in one run. The rule it serves (CONTRIBUTING.md): a
trick stays only where it buys at least 5% of that step (or, for one kept for memory, 5% of its
peak) on the processor measured.

A trick is switched off through the model's public option ``--engine-tricks``
(``rnnsearch_plugin/speed/tricks.py``), which names every trick but that one, so the engine takes
torch's own route for it; the chunked criterion gives way to fairseq's cross_entropy. bfloat16
(``--amp``) is not here: the train, decode and paper sections measure every model with and
without it.

Steps: ``train`` (the train section's Trainer, rnnsearch_small, float32, target tokens/s),
``paper`` (the paper section's rnnsearch_wmt14 step, float32, s/update), ``beam``
(fairseq-generate's beam search at beam 5, every hypothesis ``--decode-length`` tokens, with the
checkpoint this section's train step saves, sentences/s) and ``memory`` (the memory section's
peak of one rnnsearch_small step on ``--memory-sentences`` pairs of the longest ``--lengths``, MB).
"""

import argparse
import logging
import re
import statistics
from typing import Any

from . import report, workers
from .environment import tensor_following_allocator
from .fairseq_options import device_flags, generate_options, trainer_options
from .sections import checkpoints, run_worker
from .variants import CHUNKED, CROSS_ENTROPY

TRICKS = {  # name -> the steps it serves
    "tanh-route": ("train", "paper", "beam"),
    "energies-backward": ("train", "paper", "memory"),
    "beam-reordering": ("beam",),
    "chunked criterion": ("train", "paper", "memory"),
}
STEPS = {"train": "target tokens/s", "paper": "s/update", "beam": "sentences/s", "memory": "peak MB"}
METRIC = {"train": "wps", "paper": "seconds_per_update", "beam": "sentences_per_second", "memory": "peak_mb"}
ALL_ON = "all on"


def engine_tricks(trick: str | None) -> str:
    """``--engine-tricks`` with every engine trick but ``trick``."""
    from rnnsearch_plugin.speed.tricks import Tricks

    return ",".join(name for name in Tricks.names() if name != trick) or "none"


def criterion(trick: str | None) -> str:
    return "cross_entropy" if trick == "chunked criterion" else "chunked_cross_entropy"


def beam_search(args: list[str]) -> dict[str, float]:
    """fairseq-generate in this process, so that a switch reaches the model; sentences/s as it logs them."""
    from fairseq import options
    from fairseq_cli import generate

    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("fairseq_cli.generate").addHandler(handler)
    generate.main(options.parse_args_and_arch(options.get_generation_parser(), args))
    found = re.search(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s", "\n".join(logged))
    sentences, _, seconds = (float(group.replace(",", "")) for group in found.groups())
    return {"sentences_per_second": sentences / seconds}


def trick_worker(job: dict[str, Any]) -> dict[str, Any]:
    """``benchmark.py --worker trick JOB``: the step's own worker, the plugin loaded as
    ``--user-dir`` loads it."""
    from fairseq.utils import import_user_module

    import_user_module(argparse.Namespace(user_dir="rnnsearch_plugin"))
    if job["step"] == "beam":
        return beam_search(job["args"])
    return workers.WORKERS[job["step"]](job)


def job(opts: argparse.Namespace, step: str, trick: str | None, save: bool) -> dict[str, Any]:
    """One worker's job; ``save``: the train step's run that writes the beam step's checkpoint."""
    common = {"step": step, "without": trick, "device": opts.device, "tricks": engine_tricks(trick)}
    if step == "train":
        loss = CROSS_ENTROPY if trick == "chunked criterion" else CHUNKED
        return {
            **common,
            "args": [*trainer_options(opts), "--arch", "rnnsearch_small", *loss, "--engine-tricks", engine_tricks(trick)],
            "warmup": opts.warmup,
            "updates": opts.updates,
            "count_flops": False,
            "save": str(checkpoint(opts)) if save else None,
        }
    if step == "beam":
        return {
            **common,
            "args": [
                *generate_options(opts, checkpoint(opts), 5),
                "--quiet",
                "--model-overrides",
                repr({"engine_tricks": engine_tricks(trick)}),
                *device_flags(opts.device),
            ],
        }
    sizes = (
        {"arch": "rnnsearch_wmt14", "vocab": 30_000, "sentences": 80, "length": 50}
        if step == "paper"
        else {"arch": "rnnsearch_small", "vocab": 8000, "sentences": opts.memory_sentences, "length": max(opts.lengths)}
    )
    return {**common, **sizes, "warmup": 1, "updates": opts.paper_updates, "dtype": "float32", "criterion": criterion(trick)}


def checkpoint(opts: argparse.Namespace) -> Any:
    return checkpoints(opts) / "tricks-rnnsearch_small.pt"


def tricks_section(opts: argparse.Namespace) -> dict[str, Any]:
    """Per step of ``--trick-steps`` (train first: it saves the beam step's checkpoint), everything
    on and each trick off, alternated ``--repeats`` times, each run in a fresh process."""
    runs: dict[str, dict[str, list[float]]] = {}
    for step in (step for step in STEPS if step in opts.trick_steps):
        rows = [ALL_ON, *(trick for trick, steps in TRICKS.items() if step in steps)]
        runs[step] = {row: [] for row in rows}
        for repeat in range(opts.repeats):
            for row in rows:
                trick = None if row == ALL_ON else row
                save = step == "train" and trick is None and repeat == opts.repeats - 1
                env = tensor_following_allocator() if step == "memory" else None  # as the memory section
                runs[step][row].append(run_worker("trick", job(opts, step, trick, save), env)[METRIC[step]])
                print(
                    f"| tricks {step} {'without ' + row if trick else row} run {repeat + 1}: {runs[step][row][-1]:.3f} {STEPS[step]}",
                    flush=True,
                )
    return {"runs": runs, "repeats": opts.repeats}


def merge(earlier: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """The steps of an earlier record (another invocation's ``--trick-steps``) with this run's, of as many repeats."""
    if earlier is None or earlier["repeats"] != new["repeats"]:
        return new
    return {"runs": {**earlier["runs"], **new["runs"]}, "repeats": new["repeats"]}


def gain(step: str, on: float, off: float) -> float:
    """What the trick buys: time (or memory) without it / with it, less one."""
    return (on / off if step in ("train", "beam") else off / on) - 1


def tricks_table(record: dict[str, Any]) -> list[str]:
    """Per step: the median of everything on, then each trick's gain (min-max over the repeats)."""
    lines = [
        "## Speed tricks",
        "",
        f"Each trick switched off by ``--engine-tricks``; medians of {record['repeats']} "
        "alternated runs; gain = time (memory) without / with - 1, the ratio of the medians, and its range "
        "repeat by repeat. A trick stays where it buys 5% (CONTRIBUTING.md).",
        "",
    ]
    for step, runs in record["runs"].items():
        on = runs[ALL_ON]
        rows = [[ALL_ON, f"{statistics.median(on):.3f}", ""]]
        for trick, off in runs.items():
            if trick != ALL_ON:
                gains = [gain(step, a, b) for a, b in zip(on, off)]
                rows.append(
                    [
                        f"without {trick}",
                        f"{statistics.median(off):.3f}",
                        f"{gain(step, statistics.median(on), statistics.median(off)):+.1%} ({min(gains):+.1%} to {max(gains):+.1%})",
                    ]
                )
        lines += [f"### {step} ({STEPS[step]})", "", *report.table(["variant", "median", "gain of the trick"], rows)]
    return lines
