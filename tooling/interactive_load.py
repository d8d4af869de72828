"""Load test of fairseq-interactive: N lines through a pipe, memory and throughput as it goes.

    python tooling/interactive_load.py --data work/quickstart/data --checkpoint CKPT --out benchmarks

Feeds the encoded test sentences (``DATA/SCHEME/test.SRC``, the manifest's scheme and source
language, repeated) to one fairseq-interactive process through its standard input, for the pair
of the data (any pair), reads its translations as they come,
and every ``--every`` translations records the process's resident memory (VmRSS, and the
peak VmHWM) and the throughput of the last chunk. Checks one translation per line, in order.
Writes ``OUT/interactive_load.json`` and ``.md``.
"""

import argparse
import json
import subprocess
import sys
import threading
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any, Iterator

from benchmarking.fairseq_options import binarized_pair  # tooling/ is on the path when this script runs
from benchmarking.workers import process_memory_mb


def feed(stream: Any, lines: Iterator[str]) -> None:
    for line in lines:
        stream.write(line + "\n")
    stream.close()


def measure(opts: argparse.Namespace) -> list[dict[str, float]]:
    source, target = binarized_pair(opts.data / "bin", "interactive_load")
    scheme = json.loads((opts.data / "manifest.json").read_text())["scheme"]
    sentences = (opts.data / scheme / f"test.{source}").read_text(encoding="utf-8").splitlines()
    command = [
        str(Path(sys.executable).parent / "fairseq-interactive"),
        str(opts.data / "bin"),
        "--user-dir",
        "rnnsearch_plugin",
        "-s",
        source,
        "-t",
        target,
        "--path",
        str(opts.checkpoint),
        "--beam",
        str(opts.beam),
        "--buffer-size",
        str(opts.buffer_size),
        "--batch-size",
        str(opts.buffer_size),
        "--cpu",
    ]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8"
    )
    threading.Thread(target=feed, args=(process.stdin, islice(cycle(sentences), opts.lines)), daemon=True).start()
    chunks, translated, start = [], 0, time.perf_counter()
    chunk_start = start
    for line in process.stdout:
        if not line.startswith("D-"):
            continue
        assert int(line[2 : line.index("\t")]) == translated, f"translation {translated} out of order: {line[:40]}"
        translated += 1
        if translated % opts.every == 0:
            now = time.perf_counter()
            chunks.append(
                {
                    "lines": translated,
                    "lines_per_second": opts.every / (now - chunk_start),
                    **{field: process_memory_mb(field, str(process.pid)) for field in ("VmRSS", "VmHWM")},
                }
            )
            chunk_start = now
    if process.wait() != 0 or translated != opts.lines:
        raise SystemExit(f"interactive_load: {translated} of {opts.lines} lines translated (exit {process.returncode})")
    return chunks


def markdown(opts: argparse.Namespace, chunks: list[dict[str, float]]) -> str:
    from rnnsearch_plugin.analysis.markdown import markdown_table

    rows = [[f"{c['lines']:,}", f"{c['lines_per_second']:.1f}", f"{c['VmRSS']:.0f}", f"{c['VmHWM']:.0f}"] for c in chunks]
    return "\n".join(
        [
            "# fairseq-interactive under load",
            "",
            f"{opts.lines:,} lines through one process's standard input; beam {opts.beam}, "
            f"--buffer-size {opts.buffer_size}; checkpoint `{opts.checkpoint.name}`; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
            "",
            *markdown_table(["lines translated", "lines/s (last chunk)", "resident MB", "peak MB"], rows),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="prepare_data.py output (bin/, the scheme's folder, manifest.json)")
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--buffer-size", type=int, default=100)
    opts = parser.parse_args()
    chunks = measure(opts)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "interactive_load.json").write_text(json.dumps(chunks, indent=1) + "\n")
    (opts.out / "interactive_load.md").write_text(markdown(opts, chunks))
    print(markdown(opts, chunks))


if __name__ == "__main__":
    main()
