"""What a fairseq-train run bounded by updates and capped in time has done, for the quickstart:

    fairseq-train ... --max-update 2000 --stop-time-hours 0.75 --log-format simple 2>&1 \\
        | python scripts/train_progress.py watch --max-update 2000 --minutes 45
    python scripts/train_progress.py summary CHECKPOINTS/train.log --max-update 2000 --minutes 45 --arch rnnsearch_small

``watch`` passes fairseq-train's console through, except its per-interval progress lines (they
stay whole in the --log-file), and prints one line a minute that a person can read: updates done,
updates per second, the latest validation loss and the time left. ``summary`` reads the finished
run's log and says in one line how many updates it made, how fast, against what a free 2-core
machine makes; and, when the model falls short (the time cap stopped it before its update budget,
or its best validation loss is above what a complete run reaches), a second line that says so and
what to do. It never fails the run: the model is still written, and the line says what it is.
"""

import argparse
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rnnsearch_plugin.analysis.training_log import Progress  # noqa: E402


@dataclass(frozen=True)
class Expectation:
    """What the quickstart's recipe reaches in its update budget on a free 2-core machine
    (nothing else computing), measured from fresh clones: docs/training.md, "The quickstart"."""

    updates_per_second: tuple[float, float]  # slowest and fastest processor measured
    dev_loss_limit: float  # bits per token; every complete run measured stayed well under it


EXPECTED = {"rnnsearch_small": Expectation(updates_per_second=(0.6, 3.3), dev_loss_limit=2.2)}
SLOW = 0.5  # a rate under half the slowest free machine's means something else was computing


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def progress_line(progress: Progress, max_update: int, cap_minutes: float, elapsed: float) -> str:
    """'| training: 812 / 2,000 updates, 1.21 updates/s, dev loss 2.310 (best 2.310), about 16.4 min left'"""
    dev = "no dev loss yet" if progress.dev_loss is None else (f"dev loss {progress.dev_loss:.3f} bits (best {progress.best_dev_loss:.3f})")
    rate = "starting" if progress.ups is None else f"{progress.ups:.2f} updates/s"
    left = cap_minutes * 60 - max(elapsed, progress.wall)
    if progress.ups:
        left = min(left, (max_update - progress.updates) / progress.ups)
    return f"| training: {progress.updates:,} / {max_update:,} updates, {rate}, {dev}, about {minutes(max(left, 0))} left"


def watch(lines: Iterable[str], out: TextIO, max_update: int, cap_minutes: float, every: float) -> Progress:
    """Echo ``lines`` but fairseq's per-interval ones, with a progress line every ``every`` seconds."""
    progress, start, done = Progress(), time.monotonic(), threading.Event()

    def report() -> None:
        while not done.wait(every):
            print(progress_line(progress, max_update, cap_minutes, time.monotonic() - start), file=out, flush=True)

    reporter = threading.Thread(target=report, daemon=True)
    reporter.start()
    for line in lines:
        progress.read(line)
        if "num_updates=" not in line:
            out.write(line)
            out.flush()
    done.set()
    reporter.join()
    return progress


def end_line(progress: Progress, max_update: int, expected: Optional[Expectation]) -> str:
    """'| trained 2,000 of 2,000 updates in 25.3 min (1.32 updates/s; a free 2-core machine makes 0.6-3.3), ...'"""
    best = "no dev loss" if progress.best_dev_loss is None else f"best dev loss {progress.best_dev_loss:.3f} bits"
    free = f"; a free 2-core machine makes {expected.updates_per_second[0]}-{expected.updates_per_second[1]}" if expected else ""
    return (
        f"| trained {progress.updates:,} of {max_update:,} updates in {minutes(progress.wall)} "
        f"({progress.rate:.2f} updates/s{free}), {best}"
    )


def shortfalls(progress: Progress, max_update: int, cap_minutes: float, expected: Optional[Expectation]) -> list[str]:
    """Why the model falls short of a complete run, if it does: the cap, the dev loss."""
    found = (
        [f"the {cap_minutes:g}-minute cap stopped it at {progress.updates:,} of {max_update:,} updates"]
        if progress.updates < max_update
        else []
    )
    if expected and (progress.best_dev_loss is None or progress.best_dev_loss > expected.dev_loss_limit):
        loss = "missing" if progress.best_dev_loss is None else f"{progress.best_dev_loss:.3f} bits"
        found.append(f"its best dev loss is {loss}, above the {expected.dev_loss_limit} that a complete run stays under")
    return found


def verdict(progress: Progress, max_update: int, cap_minutes: float, arch: str) -> list[str]:
    """The end-of-run line, and a second one when the model falls short of a complete run (what
    to do) or, complete, trained at under half a free machine's rate."""
    expected = EXPECTED.get(arch)
    slow = expected is not None and progress.rate < SLOW * expected.updates_per_second[0]
    capped, problems = progress.updates < max_update, shortfalls(progress, max_update, cap_minutes, expected)
    lines = [end_line(progress, max_update, expected)]
    if problems:
        remedy = (
            "run it on a free machine (the tests after it, not beside it), or with a longer TRAIN_MINUTES"
            if capped and slow
            else "run it with a longer TRAIN_MINUTES"
            if capped
            else f"train more updates (MAX_UPDATE above {max_update:,})"
        )
        lines.append(
            f"| WARNING: this model is weak ({'; '.join(problems)}), so its scores are not the recipe's: "
            f"{remedy}; the same WORK resumes where it stopped"
        )
    elif slow:
        lines.append(
            f"| note: it trained at {progress.rate:.2f} updates/s, under half a free machine's: something else "
            "was computing; the model is the complete one, it only took longer"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["watch", "summary"])
    parser.add_argument("log", type=Path, nargs="?", help="summary: the run's fairseq-train --log-file")
    parser.add_argument("--max-update", type=int, required=True, help="the run's update budget (--max-update)")
    parser.add_argument("--minutes", type=float, required=True, help="the run's time cap (--stop-time-hours x 60)")
    parser.add_argument("--arch", default="", help="summary: the model's --arch, for what a complete run reaches")
    parser.add_argument("--every", type=float, default=60.0, help="watch: seconds between progress lines")
    args = parser.parse_args()
    if args.mode == "watch":
        watch(sys.stdin, sys.stdout, args.max_update, args.minutes, args.every)
        return
    if args.log is None or not args.log.is_file():
        sys.exit(f"train_progress.py: error: {args.log} is not a fairseq-train log: give the run's --log-file")
    print("\n".join(verdict(Progress.of_log(args.log), args.max_update, args.minutes, args.arch)))


if __name__ == "__main__":
    main()
