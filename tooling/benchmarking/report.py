"""``OUT/results.md``: the header (machine, matmul peaks, allocator, command) and one table per
section, each from the record its section wrote to ``OUT/results.json`` (older result files,
which lack a field, still render)."""

import statistics
from typing import Any

from .variants import PEER


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A markdown table and the blank line after it. The plugin is imported here rather than at
    the top, so that a measurement process (``benchmark.py --worker``) does not import it for this."""
    from rnnsearch_plugin.analysis.markdown import markdown_table

    return [*markdown_table(header, rows), ""]


def speed_cells(ours: list[float], peer: list[float], digits: int) -> list[str]:
    """The median of ``ours`` and its ratio to ``peer`` as "median (min-max)" over per-repeat
    ratios (runs alternated, so repeat r of each model ran side by side)."""
    ratios = [a / b for a, b in zip(ours, peer)]
    return [f"{statistics.median(ours):.{digits}f}", f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"]


def header(results: dict[str, Any]) -> list[str]:
    """The machine, library versions, matmul peaks, allocator and command of the run."""
    env = results["environment"]
    peaks = ", ".join(f"{dtype} {flops / 1e9:.0f} GFLOP/s" for dtype, flops in results.get("peaks", {}).items())
    peaks = f" Matmul peaks (4096^3, best of 5): {peaks}." if peaks else ""
    return [
        "# Benchmark results",
        "",
        f"{env['device']}; torch {env['torch']} ({env['threads']} threads), fairseq {env['fairseq']}, "
        f"Python {env['python']}; {env['date']}.",
        "",
        f"ISA flags: {env.get('isa_flags', 'not recorded')}.{peaks}",
        "",
        f"Allocator: `{env.get('allocator', 'glibc defaults')}`.",
        "",
        f"Command: `{results['command']}`" + (f"; then {results['updated']}" if "updated" in results else ""),
        "",
        "What each optimisation bought, and the spread between runs: `changes.md`.",
        "",
    ]


def train_table(train: dict[str, Any]) -> list[str]:
    """Target tokens/s against the lstm (first seen and seen before), the work per token, peak memory."""
    seen = all("wps_seen" in r for runs in train["runs"].values() for r in runs)  # older result files lack it
    speed_columns = ["tokens/s (median)", f"vs {PEER}: median (min-max)"]
    if seen:
        speed_columns += ["tokens/s, seen before", f"vs {PEER}, seen before"]
    rows = [train_row(train, name, seen) for name in train["runs"]]
    return [
        "## Training throughput (target tokens/s, fairseq's wps) and peak memory",
        "",
        f"Trainer options: `{train['command']} <model>`",
        "",
        *table(["model", "options", *speed_columns, "MFLOP per token", "GFLOP/s", "peak memory MB"], rows),
    ]


def train_row(train: dict[str, Any], name: str, seen: bool) -> list[str]:
    runs, peer = train["runs"][name], train["runs"][PEER]
    speed = speed_cells([r["wps"] for r in runs], [r["wps"] for r in peer], 0)
    if seen:
        speed += speed_cells([r["wps_seen"] for r in runs], [r["wps_seen"] for r in peer], 0)
    flops = next((r["flops_per_token"] for r in runs if r["flops_per_token"]), None)
    work = [f"{flops / 1e6:.1f}", f"{flops * statistics.median(r['wps'] for r in runs) / 1e9:.1f}"] if flops else ["-", "-"]
    return [f"`{name}`", f"`{train['models'][name]}`", *speed, *work, f"{statistics.median(r['peak_mb'] for r in runs):.0f}"]


def decode_table(decode: dict[str, Any]) -> list[str]:
    """Sentences/s of every decoder against the lstm, per beam."""
    rows = []
    for beam, per_model in decode["runs"].items():
        for name, runs in per_model.items():
            speed = speed_cells([r["sentences_per_second"] for r in runs], [r["sentences_per_second"] for r in per_model[PEER]], 1)
            rows.append([beam, f"`{name}`", f"`{decode['options'][name]}`" if decode.get("options", {}).get(name) else "", *speed])
    return [
        f"## Beam search (fairseq-generate, test set, batch {decode['batch_size']}, every hypothesis {decode['length']} tokens)",
        "",
        *table(["beam", "model", "options", "sentences/s (median)", f"vs {PEER}: median (min-max)"], rows),
    ]


def paper_table(paper: dict[str, Any]) -> list[str]:
    """The paper section's table: medians over alternated runs, and each ratio's median (min-max)."""
    runs = paper.get("runs") or {name: [r] for name, r in paper.items()}  # older result files: one run, no "runs"
    baseline, repeats = paper.get("baseline"), len(next(iter(runs.values())))
    columns = ["model, dtype, criterion", "s/update (median)", "speed-up: median (min-max)"]
    if baseline:
        columns.append(f"vs {baseline['commit']}: median (min-max)")
    return [
        "## Paper size: 30,000-word vocabularies, 80 pairs of length 50, Adadelta + clipping",
        "",
        f"Each variant ran {repeats} time{'s' * (repeats != 1)}, alternated with the others; medians. "
        "MFU against the matmul peak of the step's dtype, measured in the same process; the speed-up "
        "against the same architecture in float32 with cross_entropy (what the plugin did before "
        "chunked_cross_entropy and --amp)" + (", and against that of the baseline." if baseline else "."),
        *baseline_sentence(baseline),
        "",
        *table([*columns, "target tokens/s", "model GFLOP/s", "matmul GFLOP/s", "MFU"], [paper_row(runs, name, baseline) for name in runs]),
    ]


def paper_row(runs: dict[str, list[dict[str, float]]], name: str, baseline: dict[str, str] | None) -> list[str]:
    """A paper variant's medians, its speed-up against its architecture's float32 cross_entropy
    step, and with a baseline against that code's."""
    arch, variant_runs = name.split()[0], runs[name]
    peers = [runs[f"{arch} float32 cross_entropy"]]
    if baseline:
        peers.append(runs[f"{arch} float32 cross_entropy at {baseline['commit']}"])
    ratios = [speed_cells([r["wps"] for r in variant_runs], [r["wps"] for r in peer], 0)[1] for peer in peers]
    median = {
        key: statistics.median(r[key] for r in variant_runs)
        for key in ("seconds_per_update", "wps", "model_flops_per_second", "matmul_flops_per_second", "mfu")
    }
    return [
        f"`{name}`",
        f"{median['seconds_per_update']:.2f}",
        *ratios,
        f"{median['wps']:.0f}",
        f"{median['model_flops_per_second'] / 1e9:.1f}",
        f"{median['matmul_flops_per_second'] / 1e9:.1f}",
        f"{100 * median['mfu']:.0f}%",
    ]


def memory_table(memory: dict[str, Any]) -> list[str]:
    """Peak memory against sentence length, and the paper-size steps' peaks."""
    lengths = list(next(iter(memory["peak_mb"].values())))
    lines = [
        f"## Peak memory (MB) of one training step, {memory['sentences']} sentence pairs",
        "",
        f"The process's peak resident memory under `{memory.get('allocator', 'glibc defaults')}`, where it "
        "follows what the tensors hold (with kept memory it adds the heap's fragmentation; under glibc's "
        "defaults it moves with the order of earlier frees).",
        *baseline_sentence(memory.get("baseline")),
        "",
        *table(
            ["model \\ length", *lengths],
            [[f"`{arch}`", *(f"{per_length[n]:.0f}" for n in lengths)] for arch, per_length in memory["peak_mb"].items()],
        ),
    ]
    if "paper_peak_mb" not in memory:
        return lines
    rows = [
        [f"`{name}`", f"{r['peak_mb']:.0f}", f"{r['step_mb']:.0f}" if "step_mb" in r else "-"]
        for name, r in memory["paper_peak_mb"].items()
    ]  # a baseline's worker may not measure the latter
    return [
        *lines,
        "Paper size, 80 pairs of length 50, 30,000-word vocabularies: the process's peak, and the step's "
        "own (the peak less what the process held before the step: weights, gradients, Adadelta's "
        "state, the criterion's kept buffers).",
        "",
        *table(["model, dtype, criterion", "peak memory MB", "the step's own MB"], rows),
    ]


def allocator_table(allocator: dict[str, Any]) -> list[str]:
    """Tokens/s and peak memory under glibc's defaults against the kept-memory settings."""
    default, kept = allocator["settings"]
    rows = []
    for name, per_setting in allocator["runs"].items():
        speed = speed_cells([r["wps"] for r in per_setting[kept]], [r["wps"] for r in per_setting[default]], 0)
        peaks = (f"{statistics.median(r['peak_mb'] for r in per_setting[s]):.0f}" for s in (default, kept))
        rows.append([f"`{name}`", f"{statistics.median(r['wps'] for r in per_setting[default]):.0f}", *speed, *peaks])
    return [
        f"## Allocator: glibc's default malloc settings against `{kept}` (`scripts/activate.sh`)",
        "",
        f"Training as in the first table; {allocator['repeats']} alternated runs.",
        "",
        *table(
            [
                "model",
                "tokens/s, glibc defaults",
                "tokens/s, kept memory",
                "kept vs defaults: median (min-max)",
                "peak MB, defaults",
                "peak MB, kept",
            ],
            rows,
        ),
    ]


def baseline_sentence(baseline: dict[str, str] | None) -> list[str]:
    """The ``--baseline`` checkout a table's rows name, as a sentence of its own."""
    if not baseline:
        return []
    return [
        "",
        f'Baseline (`--baseline`): commit {baseline["commit"]}, "{baseline["subject"]}", measured by its own '
        "benchmark.py with its own plugin in the same run.",
    ]
