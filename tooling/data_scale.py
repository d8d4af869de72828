"""The data pipeline at scale: ``scripts/prepare_data.py text`` (``--scheme spm``, or the paper's ``word``) on synthetic parallel
corpora of growing size, each stage's peak resident memory (the whole process tree's) and pairs per
second, and the same for a baseline checkout's pipeline, alternated size by size on one machine.

    python tooling/data_scale.py --hansards ../shared/data/hansards --sizes 100000,1000000,4000000 \
        --work work/data-scale --out benchmarks/data-scale [--baseline DIR --baseline-sizes 100000,1000000]

The corpora are made deterministically from the Hansards' line pairs: pair k is the (k mod M)-th of
the M pairs, and from the second round on both sides start with the round's number, so that no two
pairs are duplicates and the text stays the Hansards'. A stage begins where the pipeline prints its
line (``STAGES``); the memory is sampled every
0.1 s from /proc. Writes OUT.json and OUT.md, the latter with the slope of memory and time in size
and their extrapolation to WMT'14's selected bitext (12 million pairs) and full corpora (40 million).
"""

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from machine import machine_line

from rnnsearch_plugin.data.languages import DEFAULT_PAIR

REPO = Path(__file__).resolve().parent.parent
STAGES = {  # the line that starts a stage, and its name
    "| reading": "read, clean, split",
    "| learning": "learn the subword model",
    "| encoding": "encode",
    "| binarising": "binarise",
    "| fairseq-preprocess": "binarise",  # a baseline's binariser
    "| writing the manifest": "count, report",
}
SOURCE, TARGET = DEFAULT_PAIR  # the Hansards' pairs, En->Fr
WMT14 = {"selected bitext": 12_000_000, "full corpora": 40_000_000}
SCHEMES = {"spm": "--scheme spm --vocab-size 8000", "word": "--scheme word --shortlist 30000 --max-len 50"}  # word: the paper's
SAMPLED = 1_000_000  # pairs from which on sentencepiece's sample has its full size (schemes.SAMPLE lines: 100,000 pairs)
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
PARALLEL, MANY_CORES = {"learn the subword model", "encode"}, 16  # stages on every core (sentencepiece's threads, Moses' workers)
PEAK_MB, GROWTH, BYTES_PER_PAIR = 1_500, 1.15, 16  # the goals: a peak under PEAK_MB, growing by at most GROWTH + 16 B a pair


def hansards_pairs(folder: Path) -> Iterator[tuple[str, str]]:
    for part in ("hansard.36.1.house", "hansard.36.2.house"):
        with (
            gzip.open(folder / f"{part}.{SOURCE}.gz", "rt", encoding="utf-8") as en,
            gzip.open(folder / f"{part}.{TARGET}.gz", "rt", encoding="utf-8") as fr,
        ):
            for english, french in zip(en, fr):
                if english.strip() and french.strip():
                    yield english.strip(), french.strip()


def synthetic_corpus(hansards: Path, pairs: int, folder: Path) -> Path:
    """train.{en,fr} of ``pairs`` pairs in ``folder`` (made once), as the module's docstring says."""
    prefix = folder / "train"
    if (folder / "done").exists():
        return prefix
    folder.mkdir(parents=True, exist_ok=True)
    with open(f"{prefix}.{SOURCE}", "w", encoding="utf-8") as en, open(f"{prefix}.{TARGET}", "w", encoding="utf-8") as fr:
        written, round_ = 0, 0
        while written < pairs:
            for english, french in hansards_pairs(hansards):
                marker = f"{round_} " if round_ else ""
                en.write(f"{marker}{english}\n")
                fr.write(f"{marker}{french}\n")
                written += 1
                if written == pairs:
                    break
            round_ += 1
    (folder / "done").touch()
    return prefix


def tree_memory_kb(pid: int) -> int:
    """The resident memory of ``pid`` and its descendants, in kB, each page counted once: ``pid``'s
    resident memory (/proc/PID/statm) and what each descendant holds alone (its private pages,
    /proc/PID/smaps_rollup), not the pages it shares with its parent (a forked worker's, the libraries)."""
    return resident_kb(pid) + sum(private_kb(child) for child in descendants(pid))


def resident_kb(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KB
    except OSError:
        return 0  # the process ended meanwhile


def private_kb(pid: int) -> int:
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return 0
    return sum(int(line.split()[1]) for line in rollup if line.startswith(("Private_Clean:", "Private_Dirty:")))


def descendants(pid: int) -> list[int]:
    return [grandchild for child in children(pid) for grandchild in (child, *descendants(child))]


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (from /proc/PID/task/*/children: no scan of every process)."""
    found = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in listing.read_text().split()]
        except OSError:
            continue  # the thread ended meanwhile
    return found


def measure(code: Path, prefix: Path, out: Path, pairs: int, scheme: str) -> dict[str, dict[str, float]]:
    """Each stage of one run of ``code``'s prepare_data.py: seconds, pairs per second, peak MB."""
    command = [sys.executable, str(code / "scripts" / "prepare_data.py"), "text", "--source-lang", SOURCE, "--target-lang", TARGET]
    command += ["--train", str(prefix), *SCHEMES[scheme].split(), "--out", str(out)]
    process = subprocess.Popen(command, cwd=code, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stages: dict[str, dict[str, float]] = {}
    current: dict[str, Optional[str]] = {"stage": None}
    started = {"at": time.monotonic()}

    def sample() -> None:
        while process.poll() is None:
            stage = current["stage"]
            if stage is not None:
                stages[stage]["peak_mb"] = max(stages[stage]["peak_mb"], tree_memory_kb(process.pid) / 1024)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    for line in process.stdout or []:
        stage = next((name for marker, name in STAGES.items() if line.startswith(marker)), None)
        if stage is not None and stage != current["stage"]:
            close(stages, current["stage"], started["at"], pairs)
            current["stage"], started["at"] = stage, time.monotonic()
            stages.setdefault(stage, {"seconds": 0.0, "peak_mb": 0.0})
    if process.wait() != 0:
        sys.exit(f"data_scale.py: error: {' '.join(command)} failed")
    close(stages, current["stage"], started["at"], pairs)
    sampler.join()
    return stages


def close(stages: dict[str, dict[str, float]], stage: Optional[str], start: float, pairs: int) -> None:
    if stage is not None:
        stages[stage]["seconds"] += time.monotonic() - start
        stages[stage]["pairs_per_second"] = pairs / stages[stage]["seconds"]


def slope(sizes: list[int], values: list[float]) -> tuple[float, float]:
    """Least-squares intercept and slope of ``values`` in ``sizes``."""
    fit = statistics.linear_regression(sizes, values)
    return fit.intercept, fit.slope


def whole(stages: dict[str, dict[str, float]], pairs: int) -> dict[str, float]:
    """One run's stages together: seconds, pairs per second and the peak."""
    seconds = sum(stage["seconds"] for stage in stages.values())
    return {"seconds": seconds, "pairs_per_second": pairs / seconds, "peak_mb": max(stage["peak_mb"] for stage in stages.values())}


def table(record: dict[str, Any]) -> list[str]:
    lines = [
        "# The data pipeline at scale",
        "",
        f"{record['machine']}, {record['date']}; `prepare_data.py text {SCHEMES[record['scheme']]}` on synthetic Hansards "
        "corpora (tooling/data_scale.py). Per stage: the peak resident memory of the whole process tree (sampled ten "
        "times a second; a page its processes share, a forked worker's with its parent, counted once), and pairs per second.",
        "",
        "| code | pairs | stage | seconds | pairs/s | peak MB |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for code, runs in record["runs"].items():
        for size, stages in runs.items():
            done = {stage: figures for stage, figures in stages.items() if figures["seconds"] >= 0.05}  # not: word's learning
            for stage, figures in {**done, "**all**": whole(stages, int(size))}.items():
                rate, peak = f"{figures['pairs_per_second']:,.0f}", f"{figures['peak_mb']:,.0f}"
                lines.append(f"| {code} | {int(size):,} | {stage} | {figures['seconds']:.1f} | {rate} | {peak} |")
    lines += ["", *goals(record)]
    for code, runs in record["runs"].items():
        if len(runs) >= 2:
            lines += ["", *extrapolated(code, runs, record["cores"])]
    return lines


def extrapolated(code: str, runs: dict[str, dict[str, dict[str, float]]], cores: int) -> list[str]:
    """Each stage's seconds and peak memory as least-squares lines in the pairs, carried to WMT'14's
    sizes: the time their sum, the memory the largest stage's, its lines through the runs of
    ``SAMPLED`` pairs and more where there are two (below, sentencepiece's sample has not reached
    its size). On ``MANY_CORES`` an estimate: the stages that use every core (``PARALLEL``) as many
    times faster as there are more cores, the others as fast."""
    large = {size: stages for size, stages in runs.items() if int(size) >= SAMPLED}
    seconds, memory = stage_fits(runs, "seconds"), stage_fits(large if len(large) >= 2 else runs, "peak_mb")
    lines = [
        f"**{code}**: time {round(sum(fit[0] for fit in seconds.values())):,} s + "
        f"{sum(fit[1] for fit in seconds.values()) * 1e6:,.0f} s per million pairs on {cores} cores; the peak memory "
        f"{', '.join(f'{stage} {fit[0]:,.0f} MB + {fit[1] * 1e6:,.1f} MB' for stage, fit in memory.items())} per million pairs. "
        "Extrapolated:",
    ]
    for name, pairs in WMT14.items():
        stage_seconds = {stage: fit[0] + fit[1] * pairs for stage, fit in seconds.items()}
        many = sum(value * (cores / MANY_CORES if stage in PARALLEL else 1) for stage, value in stage_seconds.items())
        lines.append(
            f"- {name} ({pairs / 1e6:.0f} million pairs): {max(fit[0] + fit[1] * pairs for fit in memory.values()):,.0f} MB; "
            f"{sum(stage_seconds.values()) / 3600:.1f} hours on {cores} cores, an estimated {many / 3600:.1f} on {MANY_CORES}"
        )
    return lines


def stage_fits(runs: dict[str, dict[str, dict[str, float]]], figure: str) -> dict[str, tuple[float, float]]:
    """Each stage's ``figure`` as intercept and slope in the pairs."""
    sizes = [int(size) for size in runs]
    return {stage: slope(sizes, [stages[stage][figure] for stages in runs.values()]) for stage in next(iter(runs.values()))}


def goals(record: dict[str, Any]) -> list[str]:
    """The figures the pipeline is held to: this code's peak against ``PEAK_MB`` and against the
    smallest corpus's (``GROWTH``, plus ``BYTES_PER_PAIR``), and its pairs per second against the baseline's."""
    runs = record["runs"]["this code"]
    totals = {int(size): whole(stages, int(size)) for size, stages in runs.items()}
    smallest = min(totals)
    lines = ["| pairs | peak MB | at most | pairs/s, this code / baseline |", "| ---: | ---: | ---: | ---: |"]
    for size, total in totals.items():
        bound = min(PEAK_MB, GROWTH * totals[smallest]["peak_mb"] + BYTES_PER_PAIR * (size - smallest) / 2**20)
        baseline = record["runs"].get("baseline", {}).get(str(size))
        ratio = f"{total['pairs_per_second'] / whole(baseline, size)['pairs_per_second']:.2f}" if baseline else "not run"
        lines.append(f"| {size:,} | {total['peak_mb']:,.0f} | {bound:,.0f} | {ratio} |")
    return [
        f"The bound: {PEAK_MB:,} MB, and {GROWTH:.2f} times the peak at {smallest:,} pairs plus {BYTES_PER_PAIR} bytes per further pair.",
        "",
        *lines,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hansards", type=Path, help="the Hansards' folder (hansard.36.{1,2}.house.LANG.gz)")
    parser.add_argument("--sizes", default="100000,1000000,4000000")
    parser.add_argument("--work", type=Path, help="where the corpora and the prepared folders go")
    parser.add_argument("--out", type=Path, required=True, help="OUT.json and OUT.md")
    parser.add_argument("--baseline", type=Path, help="a checkout of the code to compare with (git worktree add DIR REV)")
    parser.add_argument("--scheme", choices=SCHEMES, default="spm")
    parser.add_argument("--baseline-sizes", default="100000,1000000", help="the sizes the baseline also runs")
    parser.add_argument("--rewrite", action="store_true", help="only write OUT.md again, from OUT.json")
    args = parser.parse_args()
    if args.rewrite:
        args.out.with_suffix(".md").write_text("\n".join(table(json.loads(args.out.with_suffix(".json").read_text()))) + "\n")
        return
    if args.hansards is None or args.work is None:
        parser.error("--hansards and --work are needed to measure")
    codes = {"this code": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    name, flags = machine_line().split("\t")
    record: dict[str, Any] = {
        "machine": f"{name} ({flags})",
        "date": time.strftime("%Y-%m-%d"),
        "scheme": args.scheme,
        "cores": os.cpu_count(),
        "runs": {},
    }
    for size in (int(size) for size in args.sizes.split(",")):
        prefix = synthetic_corpus(args.hansards, size, args.work.resolve() / f"corpus-{size}")  # absolute: each code runs in its own folder
        for name, code in codes.items():  # alternated, size by size
            if name == "baseline" and str(size) not in args.baseline_sizes.split(","):
                continue
            out = args.work.resolve() / f"{name.replace(' ', '-')}-{size}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            record["runs"].setdefault(name, {})[str(size)] = measure(code, prefix, out, size, args.scheme)
            print(f"| {name}, {size:,} pairs: {record['runs'][name][str(size)]}", flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)  # written after each run: a long one stopped keeps the others
            args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
            args.out.with_suffix(".md").write_text("\n".join(table(record)) + "\n")


if __name__ == "__main__":
    main()
