"""tooling/benchmark.py's sections come from one registry (``tooling/benchmarking/registry.py``):
an entry there is a --sections choice, runs, and adds its table to OUT/results.md, and a section
brings along the sections it reads."""

import dataclasses
import json
import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "tooling"))
import benchmark  # noqa: E402
from benchmarking.registry import SECTIONS, Section, to_run  # noqa: E402


def test_a_registered_section_is_chosen_run_and_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(
        SECTIONS,
        "echo",
        Section(
            run=lambda opts: {"repeats": opts.repeats},
            table=lambda record: ["## Echo", "", f"repeats {record['repeats']}", ""],
            default=False,
        ),
    )
    with pytest.raises(SystemExit):
        benchmark.parse_args(["--sections", "paper,echoes"])
    assert "unknown sections ['echoes']: choose from train,decode,paper,memory,allocator,tricks,echo" in capsys.readouterr().err
    earlier = {
        "environment": {
            "device": "a CPU",
            "torch": "2",
            "threads": "1",
            "fairseq": "0.12",
            "python": "3.11",
            "date": "2026-12-01 00:00 UTC",
        },
        "command": "python tooling/benchmark.py",
        "peaks": {},
    }
    (tmp_path / "results.json").write_text(json.dumps(earlier))
    benchmark.main(["--out", str(tmp_path), "--sections", "echo", "--repeats", "7", "--update"])
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["echo"] == {"repeats": 7} and results["peaks"] == {}  # kept: no peaks worker ran
    assert (tmp_path / "results.md").read_text().endswith("## Echo\n\nrepeats 7\n")


def test_two_invocations_on_two_cores_share_the_tricks_record_step_by_step(tmp_path, monkeypatch):
    """With --update each invocation reads OUT/results.json when it ends: the steps the other one
    wrote meanwhile stay, beside its own, and the report shows both."""
    from benchmarking import tricks

    def measured(opts):
        return {"runs": {step: {tricks.ALL_ON: [1.0] * opts.repeats} for step in opts.trick_steps}, "repeats": opts.repeats}

    monkeypatch.setitem(SECTIONS, "tricks", dataclasses.replace(SECTIONS["tricks"], run=measured, data=False))
    monkeypatch.setattr(benchmark, "run_worker", lambda kind, job: pytest.fail("the tricks need no matmul peaks"))
    for steps in ("paper,memory", "train"):
        benchmark.main(["--out", str(tmp_path), "--sections", "tricks", "--trick-steps", steps, "--repeats", "2", "--update"])
    results = json.loads((tmp_path / "results.json").read_text())
    assert list(results["tricks"]["runs"]) == ["paper", "memory", "train"] and "peaks" not in results
    assert [line for line in (tmp_path / "results.md").read_text().splitlines() if line.startswith("### ")] == [
        "### paper (s/update)",
        "### memory (peak MB)",
        "### train (target tokens/s)",
    ]
    benchmark.main(["--out", str(tmp_path), "--sections", "tricks", "--trick-steps", "memory", "--repeats", "3", "--update"])
    assert list(json.loads((tmp_path / "results.json").read_text())["tricks"]["runs"]) == ["memory"]  # other repeats: replaced
    with pytest.raises(SystemExit, match="2"):  # the beam step translates the train step's checkpoint, not yet saved
        benchmark.parse_args(["--out", str(tmp_path), "--sections", "tricks", "--trick-steps", "beam"])


def test_sections_run_in_the_registrys_order_with_those_they_read():
    assert to_run(["memory", "paper"]) == ["paper", "memory"]
    assert to_run(["memory", "decode"]) == ["train", "decode", "memory"]  # beam search translates train's checkpoints
    assert [name for name, section in SECTIONS.items() if section.default] == ["train", "decode", "paper", "memory"]


def test_every_engine_trick_is_measured_switched_off_by_the_public_option_alone():
    """The tricks section measures every trick of the engine (``speed/tricks.py``), each switched
    off through --engine-tricks: the engine that option builds has that trick off and every other on."""
    from benchmarking.tricks import TRICKS, engine_tricks

    from rnnsearch_plugin.speed.tricks import Tricks

    assert set(Tricks.names()) <= TRICKS.keys()
    for trick in Tricks.names():
        chosen = Tricks.chosen(engine_tricks(trick), bfloat16=False)
        assert [name for name in Tricks.names() if not getattr(chosen, name.replace("-", "_"))] == [trick]
    assert Tricks.chosen(engine_tricks(None), bfloat16=False) == Tricks()


def test_before_and_after_compare_each_run_with_the_lstm_of_the_same_repeat():
    import compare_benchmarks

    def results(ours: list[float], peer: list[float], seconds: float) -> dict:
        train = {name: [{"wps": w, "wps_seen": 2 * w} for w in values] for name, values in (("lstm", peer), ("rnnsearch_small", ours))}
        decode = {
            "5": {name: [{"sentences_per_second": w} for w in values] for name, values in (("lstm", peer), ("rnnsearch_small", ours))}
        }
        paper = {"rnnsearch_wmt14 bfloat16": [{"seconds_per_update": seconds}]}
        environment = {"device": "cpu", "isa_flags": "avx2", "torch": "2", "threads": "2", "date": "today"}
        memory = {"sentences": 64, "peak_mb": {"rnnsearch_small chunked_cross_entropy": {"20": 10 * seconds}}}
        return {
            "environment": environment,
            "train": {"runs": train},
            "decode": {"runs": decode},
            "paper": {"runs": paper},
            "memory": memory,
        }

    page = compare_benchmarks.report(results([150, 220, 90], [100, 200, 100], 4.0), results([300, 210], [200, 200], 2.0), ("old", "new"))
    assert "| `rnnsearch_small` | 1.10 | 1.27 | 1.10 | 1.27 |" in page  # medians of 1.5, 1.1, 0.9 and of 1.5, 1.05
    assert "| 5 | `rnnsearch_small` | 1.10 | 1.27 |" in page and "| `rnnsearch_wmt14 bfloat16` | 4.00 | 2.00 | 2.00 |" in page
    assert "| `rnnsearch_small chunked_cross_entropy` | 20 | 40 | 20 |" in page

    def tables(page: str) -> list[str]:
        return [line for line in page.splitlines() if line.startswith("|")]

    names = ("old", "new")
    split_before = [results([150], [100], 4.0), results([220, 90], [200, 100], 4.0)]
    pooled_after = compare_benchmarks.pooled([results([300], [200], 2.0), results([210], [200], 2.0)])
    pooled_page = compare_benchmarks.report(compare_benchmarks.pooled(split_before), pooled_after, names)
    assert tables(pooled_page) == tables(page)  # one repeat per invocation, pooled: the same medians
    assert "(3 and 2 of training)" in pooled_page
    without_memory = [{section: value for section, value in run.items() if section != "memory"} for run in split_before]
    memory_alone = {"environment": split_before[0]["environment"], "memory": split_before[0]["memory"]}  # --sections memory
    each_section_from_its_runs = compare_benchmarks.pooled([*without_memory, memory_alone])
    assert tables(compare_benchmarks.report(each_section_from_its_runs, pooled_after, names)) == tables(page)
