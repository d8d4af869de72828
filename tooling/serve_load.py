"""Load test of rnnsearch-serve: concurrent clients on the loopback, every answer checked.

    taskset -c 1 python tooling/serve_load.py --data work/quickstart/data \\
        --checkpoint work/quickstart/checkpoints/rnnsearch_small/checkpoint_best.pt --out benchmarks

Starts rnnsearch-serve on a free port of 127.0.0.1 (nothing else is ever addressed), then
``--clients`` threads send ``--requests`` POST /translate requests between them, each of
1-``--max-per-request`` sentences drawn (seeded) from ``DATA/raw/test.SRC`` (the data's source
language, any pair), with beam ``--beam`` and the soft alignment in subword pieces; the run stops
after ``--time-limit`` seconds whatever is left. It records each request's latency and the
server's peak resident memory (VmHWM), then translates the same test set with fairseq-generate
(same checkpoint, same beam, --print-alignment soft) and checks that every sentence of every
response has the source pieces of its S- line, the hypothesis pieces of its H- line, its score
(H- prints it in base 2) and the weights of its A- line. Writes ``OUT/serve_load.json`` and ``.md``.
"""

import argparse
import json
import math
import os
import random
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np
from benchmarking.fairseq_options import binarized_pair  # tooling/ is on the path when this script runs
from benchmarking.workers import process_memory_mb

SCORE_TOLERANCE = 1e-4  # base-2 score per token: batches of other sizes differ by float rounding only
WEIGHT_TOLERANCE = 1e-5  # both print alpha_ij to 6 decimals


@contextmanager
def serving(
    checkpoint: Path, data: Path, *options: str, log: Path, cwd: Optional[Path] = None, timeout: float = 300
) -> Iterator[tuple[str, subprocess.Popen]]:
    """rnnsearch-serve on a free port of 127.0.0.1: its address ("http://127.0.0.1:PORT/") and
    process; its log (stderr) goes to ``log``. Stopped with SIGINT (Ctrl-C) at the end."""
    command = [
        str(Path(sys.executable).parent / "rnnsearch-serve"),
        "--path",
        str(checkpoint),
        "--data",
        str(data),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        *options,
    ]
    with open(log, "w") as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=cwd)
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    match = re.search(r"listening on (http://\S+/)", process.stdout.readline() if ready else "")
    try:
        if match is None:
            raise RuntimeError(f"rnnsearch-serve did not start within {timeout} s:\n{log.read_text()[-3000:]}")
        yield match[1], process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def call(address: str, path: str, body: Any = None, timeout: float = 300) -> tuple[int, Any]:
    """(HTTP status, decoded JSON) of GET ``path``, or of POST when there is a body (bytes as
    they are, anything else as JSON)."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(address + path, data=data, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def plan(count: int, sentences: int, largest: int, seed: int) -> list[list[int]]:
    """``count`` requests, each 1-``largest`` distinct sentence numbers."""
    generator = random.Random(seed)
    return [generator.sample(range(sentences), generator.randint(1, largest)) for _ in range(count)]


def load(address: str, sentences: list[str], requests: list[list[int]], opts: argparse.Namespace) -> list[dict[str, Any]]:
    """Every request sent by ``opts.clients`` threads until done or out of time: what each got."""
    results: list[dict[str, Any]] = []
    pending = iter(enumerate(requests))
    lock = threading.Lock()
    deadline = time.monotonic() + opts.time_limit

    def client() -> None:
        while time.monotonic() < deadline:
            with lock:
                number, ids = next(pending, (None, None))
            if ids is None:
                return
            start = time.perf_counter()
            status, answer = call(address, "translate", {"sentences": [sentences[i] for i in ids], "beam": opts.beam, "pieces": True})
            with lock:
                results.append({"request": number, "ids": ids, "status": status, "answer": answer, "seconds": time.perf_counter() - start})

    threads = [threading.Thread(target=client) for _ in range(opts.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def generated(opts: argparse.Namespace) -> dict[int, dict[str, Any]]:
    """fairseq-generate's S-, H- and A- lines of the test set: {id: source pieces, pieces,
    base-2 score, weights}."""
    from rnnsearch_plugin.analysis.alignment import parse_soft_alignments

    output = subprocess.run(
        [
            str(Path(sys.executable).parent / "fairseq-generate"),
            str(opts.data / "bin"),
            "--user-dir",
            "rnnsearch_plugin",
            "-s",
            opts.pair[0],
            "-t",
            opts.pair[1],
            "--gen-subset",
            "test",
            "--path",
            str(opts.checkpoint),
            "--beam",
            str(opts.beam),
            "--batch-size",
            "128",
            "--cpu",
            "--print-alignment",
            "soft",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    lines: dict[int, dict[str, Any]] = {}
    for number, weights in parse_soft_alignments(output).items():
        lines.setdefault(number, {})["weights"] = weights
    for line in output:
        kind, _, rest = line.partition("-")
        if kind in ("S", "H"):
            number, *fields = rest.split("\t")
            entry = lines.setdefault(int(number), {})
            if kind == "S":
                entry["source"] = fields[0].split()
            else:
                entry["score"], entry["tokens"] = float(fields[0]), fields[1].split()
    return lines


def mismatches(results: list[dict[str, Any]], reference: dict[int, dict[str, Any]]) -> list[str]:
    """What differs between the server's answers and fairseq-generate's, one line each."""
    found = []
    for result in results:
        if result["status"] != 200:
            found.append(f"request {result['request']}: HTTP {result['status']} {result['answer']}")
            continue
        for number, translation in zip(result["ids"], result["answer"]["translations"], strict=True):
            best, expected = translation["hypotheses"][0], reference[number]
            weights = np.array(best["alignment"]["weights"])
            if (
                translation["source_tokens"] != expected["source"]
                or best["tokens"] != expected["tokens"]
                or abs(best["score"] / math.log(2) - expected["score"]) > SCORE_TOLERANCE
                or weights.shape != expected["weights"].shape
                or np.abs(weights - expected["weights"]).max() > WEIGHT_TOLERANCE
            ):
                found.append(
                    f"request {result['request']}, sentence {number}: {best['tokens']} {best['score']:.5f} "
                    f"against fairseq-generate's {expected['tokens']} {expected['score'] * math.log(2):.5f}"
                )
    return found


def figures(results: list[dict[str, Any]], run: dict[str, Any], errors: list[str], opts: argparse.Namespace) -> dict[str, Any]:
    """The report, from the answers and what ``main`` measured of the run (wall time, the server's
    peak memory, its /health, the machine's load average)."""
    wall, queue = run["wall"], run["health"]["queue"]
    latencies = sorted(result["seconds"] for result in results)
    sentences = sum(len(result["ids"]) for result in results)
    return {
        "requests": len(results),
        "requests_planned": opts.requests,
        "sentences": sentences,
        "max_per_request": opts.max_per_request,
        "clients": opts.clients,
        "cpu_cores": len(os.sched_getaffinity(0)),
        "machine_load_average": run["load_average"],
        "machine_cores": os.cpu_count(),
        "beam": opts.beam,
        "checkpoint": str(opts.checkpoint),
        "wall_seconds": wall,
        "requests_per_second": len(results) / wall,
        "sentences_per_second": sentences / wall,
        "latency_median_ms": 1000 * statistics.median(latencies),
        "latency_p95_ms": 1000 * latencies[max(0, math.ceil(0.95 * len(latencies)) - 1)],
        "peak_resident_mb": run["peak_mb"],
        "batches": queue["batches"],
        "sentences_per_batch": queue["sentences"] / max(1, queue["batches"]),
        "mismatches": len(errors),
        "mismatch_examples": errors[:10],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def markdown(result: dict[str, Any]) -> str:
    from rnnsearch_plugin.analysis.markdown import markdown_table

    checked = (
        "every response matched fairseq-generate"
        if not result["mismatches"]
        else f"**{result['mismatches']} sentences differed from fairseq-generate**"
    )
    return "\n".join(
        [
            "# rnnsearch-serve under load",
            "",
            f"{result['requests']:,} of {result['requests_planned']:,} requests ({result['sentences']:,} sentences, "
            f"1-{result['max_per_request']} each) from {result['clients']} concurrent clients on the loopback, clients and "
            f"server on {result['cpu_cores']} CPU core(s) (the machine's 5-minute load average {result['machine_load_average']:.1f} "
            f"on {result['machine_cores']} cores); beam {result['beam']}, alignments in pieces; checkpoint "
            f"`{Path(result['checkpoint']).name}`; {result['date']}. Checked against fairseq-generate (same beam and "
            f"checkpoint; source pieces, hypothesis pieces, score and soft alignment): {checked}.",
            "",
            *markdown_table(
                ["requests/s", "sentences/s", "median latency", "95th percentile", "peak resident MB", "sentences per batch"],
                [
                    [
                        f"{result['requests_per_second']:.1f}",
                        f"{result['sentences_per_second']:.1f}",
                        f"{result['latency_median_ms']:.0f} ms",
                        f"{result['latency_p95_ms']:.0f} ms",
                        f"{result['peak_resident_mb']:.0f}",
                        f"{result['sentences_per_batch']:.1f}",
                    ]
                ],
            ),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="prepare_data.py output (bin/ and raw/)")
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--max-per-request", type=int, default=5)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=1800, help="seconds of sending, at most")
    opts = parser.parse_args()
    opts.pair = binarized_pair(opts.data / "bin", "serve_load")
    sentences = (opts.data / "raw" / f"test.{opts.pair[0]}").read_text(encoding="utf-8").splitlines()
    requests = plan(opts.requests, len(sentences), opts.max_per_request, opts.seed)
    opts.out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as temporary,
        serving(opts.checkpoint, opts.data / "bin", "--cpu", log=Path(temporary) / "serve.log") as (address, process),
    ):
        start = time.perf_counter()
        results = load(address, sentences, requests, opts)
        run = {
            "wall": time.perf_counter() - start,
            "peak_mb": process_memory_mb("VmHWM", str(process.pid)),
            "health": call(address, "health")[1],
            "load_average": os.getloadavg()[1],
        }
    result = figures(results, run, mismatches(results, generated(opts)), opts)
    (opts.out / "serve_load.json").write_text(json.dumps(result, indent=1) + "\n")
    (opts.out / "serve_load.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
