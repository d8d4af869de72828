"""Speed and peak memory of rnnsearch-align on the first N pairs of a corpus, for several N: what
the published alignment results ask of it (the Hansards test set's 3,000 pairs, both directions, in minutes on 2 cores;
memory flat from 10,000 to 100,000 pairs).

    python tooling/align_load.py --path CKPT --data DATA/bin [--reverse-path CKPT --reverse-data DATA/bin] \\
        --source train.en --target train.fr --sizes 3000,10000,100000 --out benchmarks

Each size runs rnnsearch-align as a user runs it, in a process of its own (its peak resident
memory is the process's own, from the kernel's accounting of that child), on the first N lines of
--source and --target; the outputs of the smaller sizes must be the first lines of the larger
ones' (the same pairs aligned the same way, whatever the corpus's size). Writes
``OUT/NAME.json`` and ``.md`` (``--name``, default align_load).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

from benchmarking.environment import environment  # tooling/ is on the path when this script runs


def first_lines(source: Path, target: Path, count: int, folder: Path) -> tuple[Path, Path]:
    """The first ``count`` lines of each file, copied into ``folder``; exits in one line if a file has fewer."""
    copies = []
    for path in (source, target):
        with open(path, encoding="utf-8") as lines:
            head = list(islice(lines, count))
        if len(head) != count:
            raise SystemExit(f"align_load: {path} has {len(head)} lines, fewer than --sizes asks ({count})")
        copies.append(folder / f"{count}{path.suffix}")
        copies[-1].write_text("".join(head), encoding="utf-8")
    return copies[0], copies[1]


def run_align(opts: argparse.Namespace, source: Path, target: Path, out: Path) -> dict[str, float]:
    """rnnsearch-align in a child process: wall seconds and the child's own peak resident memory."""
    command = [
        str(Path(sys.executable).parent / "rnnsearch-align"),
        "--path",
        str(opts.path),
        "--data",
        str(opts.data),
        "--source",
        str(source),
        "--target",
        str(target),
        "--out",
        str(out),
    ]
    if opts.reverse_path:
        command += ["--reverse-path", str(opts.reverse_path), "--reverse-data", str(opts.reverse_data)]
    log = out.with_suffix(".log")
    start = time.perf_counter()
    with open(log, "w") as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)  # the child's rusage (Linux: ru_maxrss in KB)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"align_load: rnnsearch-align failed:\n{log.read_text()[-3000:]}")
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024}


def measure(opts: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        outputs = []
        for size in sorted(opts.sizes):
            source, target = first_lines(opts.source, opts.target, size, Path(folder))
            outputs.append(Path(folder) / f"{size}.align")
            run = run_align(opts, source, target, outputs[-1])
            rows.append({"pairs": size, **run, "pairs_per_second": size / run["seconds"]})
            print(f"| align_load {size:,} pairs: {run['seconds']:.1f} s, {run['peak_mb']:.0f} MB peak", flush=True)
            source.unlink()
            target.unlink()
        lines = [path.read_text(encoding="utf-8").splitlines() for path in outputs]
        for shorter, longer in zip(lines, lines[1:]):
            if longer[: len(shorter)] != shorter:
                raise SystemExit("align_load: a larger run aligned the first pairs differently from a smaller one")
    return rows


def markdown(result: dict[str, Any]) -> str:
    env = result["environment"]
    lines = [
        "# rnnsearch-align: speed and peak memory",
        "",
        f"{env['device']}; torch {env['torch']} ({env['threads']} threads), {env['date']}; ISA flags: {env.get('isa_flags', '')}.",
        "",
        f"Command: `{result['command']}`",
        "",
        f"Directions: {result['directions']}. Each size in a process of its own; peak = that process's "
        "peak resident memory. The smaller sizes' outputs are the first lines of the larger ones'.",
        "",
        "| pairs | seconds | pairs/s | peak MB |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {row['pairs']:,} | {row['seconds']:.1f} | {row['pairs_per_second']:.1f} | {row['peak_mb']:.0f} |" for row in result["rows"]
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--reverse-path", type=Path)
    parser.add_argument("--reverse-data", type=Path)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--target", type=Path, required=True)
    parser.add_argument("--sizes", type=lambda s: [int(n) for n in s.split(",")], default=[3000, 10_000, 100_000])
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    parser.add_argument("--name", default="align_load", help="the result files' stem: OUT/NAME.json and .md")
    opts = parser.parse_args(argv)
    if (opts.reverse_path is None) != (opts.reverse_data is None):
        parser.error("--reverse-path and --reverse-data go together")
    return opts


def main(argv: list[str]) -> None:
    opts = parse_args(argv)
    result = {
        "environment": environment("cpu"),
        "command": " ".join(["python", "tooling/align_load.py", *argv]),
        "directions": "both, symmetrised (grow-diag-final-and)" if opts.reverse_path else "one",
        "rows": measure(opts),
    }
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / f"{opts.name}.json").write_text(json.dumps(result, indent=1) + "\n")
    (opts.out / f"{opts.name}.md").write_text(markdown(result))
    print(f"| wrote {opts.out / opts.name}.md")


if __name__ == "__main__":
    main(sys.argv[1:])
