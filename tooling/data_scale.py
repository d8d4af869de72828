"""The data pipeline at scale: ``scripts/prepare_data.py text --scheme spm`` on synthetic parallel
corpora of growing size, each stage's peak resident memory (the whole process tree's) and pairs per
second, and the same for a baseline checkout's pipeline, alternated size by size on one machine.

    python tooling/data_scale.py --hansards ../shared/data/hansards --sizes 100000,1000000,4000000 \
        --work work/data-scale --out benchmarks/data-scale [--baseline DIR]

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
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from machine import machine_line

REPO = Path(__file__).resolve().parent.parent
STAGES = {  # the line that starts a stage, and its name
    "| reading": "read, clean, split",
    "| learning": "learn the subword model",
    "| encoding": "encode",
    "| fairseq-preprocess": "binarise",
    "| writing the manifest": "count, report",
}
WMT14 = {"selected bitext": 12_000_000, "full corpora": 40_000_000}


def hansards_pairs(folder: Path) -> Iterator[tuple[str, str]]:
    for part in ("hansard.36.1.house", "hansard.36.2.house"):
        with (
            gzip.open(folder / f"{part}.en.gz", "rt", encoding="utf-8") as en,
            gzip.open(folder / f"{part}.fr.gz", "rt", encoding="utf-8") as fr,
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
    with open(f"{prefix}.en", "w", encoding="utf-8") as en, open(f"{prefix}.fr", "w", encoding="utf-8") as fr:
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


def tree_rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants, in kB, from /proc."""
    parents, rss = {}, {}
    for stat in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in stat.read_text().splitlines() if ":" in line)
        except OSError:
            continue  # the process ended meanwhile
        parents[int(stat.parent.name)] = int(fields["PPid"])
        rss[int(stat.parent.name)] = int(fields.get("VmRSS", "0 kB").split()[0])
    tree, grown = {pid}, True
    while grown:
        grown = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grown = True
    return sum(rss.get(member, 0) for member in tree)


def measure(code: Path, prefix: Path, out: Path, pairs: int) -> dict[str, dict[str, float]]:
    """Each stage of one run of ``code``'s prepare_data.py: seconds, pairs per second, peak MB."""
    command = [sys.executable, str(code / "scripts" / "prepare_data.py"), "text", "--source-lang", "en", "--target-lang", "fr"]
    command += ["--train", str(prefix), "--scheme", "spm", "--vocab-size", "8000", "--out", str(out)]
    process = subprocess.Popen(command, cwd=code, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stages: dict[str, dict[str, float]] = {}
    current: dict[str, Optional[str]] = {"stage": None}
    started = {"at": time.monotonic()}

    def sample() -> None:
        while process.poll() is None:
            stage = current["stage"]
            if stage is not None:
                stages[stage]["peak_mb"] = max(stages[stage]["peak_mb"], tree_rss_kb(process.pid) / 1024)
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


def table(record: dict[str, Any]) -> list[str]:
    lines = [
        "# The data pipeline at scale",
        "",
        f"{record['machine']}, {record['date']}; `prepare_data.py text --scheme spm --vocab-size 8000` on synthetic Hansards "
        "corpora (tooling/data_scale.py). Peak resident memory of the whole process tree per stage, and pairs per second.",
        "",
        "| code | pairs | stage | seconds | pairs/s | peak MB |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for code, runs in record["runs"].items():
        for size, stages in runs.items():
            for stage, figures in stages.items():
                rate, peak = f"{figures['pairs_per_second']:,.0f}", f"{figures['peak_mb']:,.0f}"
                lines.append(f"| {code} | {int(size):,} | {stage} | {figures['seconds']:.1f} | {rate} | {peak} |")
    for code, runs in record["runs"].items():
        sizes = [int(size) for size in runs]
        if len(sizes) < 2:
            continue
        peaks = [max(stage["peak_mb"] for stage in stages.values()) for stages in runs.values()]
        seconds = [sum(stage["seconds"] for stage in stages.values()) for stages in runs.values()]
        (memory_0, memory_per_pair), (time_0, time_per_pair) = slope(sizes, peaks), slope(sizes, seconds)
        lines += [
            "",
            f"**{code}**: peak memory {memory_0:,.0f} MB + {memory_per_pair * 1e6:,.1f} MB per million pairs; "
            f"time {time_0:,.0f} s + {time_per_pair * 1e6:,.0f} s per million pairs. Extrapolated:",
        ]
        lines += [
            f"- {name} ({pairs / 1e6:.0f} million pairs): {memory_0 + memory_per_pair * pairs:,.0f} MB, "
            f"{(time_0 + time_per_pair * pairs) / 3600:.1f} hours"
            for name, pairs in WMT14.items()
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hansards", type=Path, required=True)
    parser.add_argument("--sizes", default="100000,1000000,4000000")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True, help="OUT.json and OUT.md")
    parser.add_argument("--baseline", type=Path, help="a checkout of the code to compare with (git worktree add DIR REV)")
    args = parser.parse_args()
    codes = {"this code": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    name, flags = machine_line().split("\t")
    record: dict[str, Any] = {"machine": f"{name} ({flags})", "date": time.strftime("%Y-%m-%d"), "runs": {}}
    for size in (int(size) for size in args.sizes.split(",")):
        prefix = synthetic_corpus(args.hansards, size, args.work / f"corpus-{size}")
        for name, code in codes.items():  # alternated, size by size
            out = args.work / f"{name.replace(' ', '-')}-{size}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            record["runs"].setdefault(name, {})[str(size)] = measure(code, prefix, out, size)
            print(f"| {name}, {size:,} pairs: {record['runs'][name][str(size)]}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    args.out.with_suffix(".md").write_text("\n".join(table(record)) + "\n")


if __name__ == "__main__":
    main()
