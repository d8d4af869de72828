"""Speed and memory of rnnsearch_small / rnnencdec_small against fairseq's own ``lstm`` (matched
sizes, float32 and fairseq's cross_entropy: what fairseq gives a CPU user), in float32 and in
bfloat16 (``--amp`` on a CPU, ``rnnsearch_plugin/speed/precision.py``), with fairseq's cross_entropy and
with the plugin's chunked_cross_entropy; the model-FLOP utilisation of the paper's size against
the matmul peak of the dtype its step used; and peak memory. Writes ``OUT/results.json`` and
``OUT/results.md``; every ratio compares runs of the same invocation. Each measurement runs in its
own process (peak memory is per process). The report names the processor and the ISA flags that
matter (avx2, avx512f, avx512_bf16, amx_bf16) and measures the float32 and bfloat16 matmul peaks.

    python tooling/benchmark.py --data work/quickstart/data/bin --out benchmarks

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
          FLOP/s from ``benchmarking/flops.py`` (A.2 term by term, x3 for the backward
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
  tricks  what each speed trick of the plugin buys on the whole step it serves (training, the
          paper-size step, beam search, peak memory), with and without it, alternated
          (``benchmarking/tricks.py``); not run by default. ``--trick-steps`` chooses the steps:
          two invocations with ``--update`` and one OUT, each pinned to a core (``taskset -c N``,
          OMP_NUM_THREADS=1), measure half the steps each, and the one that ends last keeps both.

Every section runs with the allocator settings of the benchmark's own environment; the
report's header names them.

``--baseline DIR`` (a checkout of an earlier commit: ``git worktree add DIR REV``) adds that code's
float32 cross_entropy steps to the paper and memory sections, measured by its own benchmark.py
with its own plugin in the same run, for targets stated against the code of an earlier day.

The parts live in ``tooling/benchmarking/`` (its ``__init__.py`` lists them); a section is a
function registered by name in ``benchmarking/registry.py``.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarking.environment import environment  # tooling/ is on the path when this script runs
from benchmarking.fairseq_options import QUICKSTART_BATCH, binarized_pair
from benchmarking.registry import SECTIONS, to_run
from benchmarking.report import header
from benchmarking.sections import baseline_script, checkpoints, run_worker
from benchmarking.tricks import STEPS as TRICK_STEPS
from benchmarking.tricks import checkpoint as trick_checkpoint
from benchmarking.tricks import trick_worker
from benchmarking.workers import WORKERS


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        help="a binarized corpus, any pair (prepare_data.py OUT/bin; the README's figures: Multi30k as the quickstart prepares it)",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument(
        "--sections", default=",".join(name for name, section in SECTIONS.items() if section.default), help=f"of {','.join(SECTIONS)}"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--max-tokens", type=int, default=QUICKSTART_BATCH, help="default: the quickstart's recipe's")
    parser.add_argument("--beams", type=lambda s: [int(b) for b in s.split(",")], default=[5, 12])
    parser.add_argument("--gen-batch-size", type=int, default=64)
    parser.add_argument("--decode-length", type=int, default=20)
    parser.add_argument("--paper-updates", type=int, default=3)
    parser.add_argument("--paper-repeats", type=int, default=3, help="alternated runs of each paper-size variant")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="a checkout of an earlier commit (git worktree add DIR REV): the paper and memory "
        "sections also measure its float32 cross_entropy steps, with its own benchmark.py",
    )
    parser.add_argument("--lengths", type=lambda s: [int(n) for n in s.split(",")], default=[10, 20, 40, 60, 80, 100])
    parser.add_argument("--memory-sentences", type=int, default=64)
    parser.add_argument(
        "--update",
        action="store_true",
        help="keep the other sections of OUT/results.json (read when this run ends) and replace the ones run, "
        "or, for tricks, the steps run: two invocations on two cores (taskset -c N) can share one OUT",
    )
    parser.add_argument("--trick-steps", default=",".join(TRICK_STEPS), help=f"the tricks section's steps, of {','.join(TRICK_STEPS)}")
    opts = parser.parse_args(argv)
    opts.sections = opts.sections.split(",")
    opts.trick_steps = opts.trick_steps.split(",")
    if set(opts.trick_steps) - TRICK_STEPS.keys():
        parser.error(f"--trick-steps {','.join(opts.trick_steps)}: choose from {','.join(TRICK_STEPS)}")
    unknown = set(opts.sections) - SECTIONS.keys()
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}: choose from {','.join(SECTIONS)}")
    if "tricks" in opts.sections and "beam" in opts.trick_steps and "train" not in opts.trick_steps and not trick_checkpoint(opts).exists():
        parser.error(
            f"--trick-steps beam translates with the train step's checkpoint, and {trick_checkpoint(opts)} is not there: add train"
        )
    if opts.baseline is not None:
        if baseline_script(opts.baseline) is None:
            parser.error(f"--baseline {opts.baseline}: no tooling/benchmark.py there; give a checkout of this repository")
        opts.baseline_commit = subprocess.run(
            ["git", "-C", str(opts.baseline), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    if any(SECTIONS[name].data for name in opts.sections):
        opts.pair = binarized_pair(opts.data, "benchmark")
    return opts


def markdown(results: dict[str, Any]) -> str:
    """OUT/results.md: the header, then the table of every section the results hold, in the registry's order."""
    return "\n".join(
        [*header(results), *(line for name, section in SECTIONS.items() if name in results for line in section.table(results[name]))]
    )


def main(argv: list[str]) -> None:
    if argv[:1] == ["--worker"]:
        print(json.dumps({**WORKERS, "trick": trick_worker}[argv[1]](json.loads(argv[2]))))
        return
    opts = parse_args(argv)
    opts.out.mkdir(parents=True, exist_ok=True)
    checkpoints(opts).mkdir(exist_ok=True)
    results: dict[str, Any] = {"environment": environment(opts.device), "command": " ".join(["python", "tooling/benchmark.py", *argv])}
    chosen, results_file = to_run(opts.sections), opts.out / "results.json"
    peaks = json.loads(results_file.read_text()).get("peaks") if opts.update and results_file.exists() else None
    if peaks is None and any(SECTIONS[name].peaks for name in chosen):
        peaks = run_worker("peaks", {"device": opts.device})
    if peaks is not None:
        results["peaks"] = peaks
    measured = {name: SECTIONS[name].run(opts) for name in chosen}
    if opts.update and results_file.exists():  # read now: another invocation may have written since
        earlier = json.loads(results_file.read_text())
        measured = {name: SECTIONS[name].merge(earlier.get(name), record) for name, record in measured.items()}
        results = {**earlier, "updated": f"{', '.join(opts.sections)} by `{results['command']}` on {results['environment']['date']}"}
    results.update(measured)
    results_file.write_text(json.dumps(results, indent=1) + "\n")
    (opts.out / "results.md").write_text(markdown(results))
    print(f"| wrote {opts.out / 'results.md'} and results.json")


if __name__ == "__main__":
    main(sys.argv[1:])
