"""scripts/benchmark.py's sections come from one registry (``scripts/benchmarking/registry.py``):
an entry there is a --sections choice, runs, and adds its table to OUT/results.md, and a section
brings along the sections it reads."""
import json
import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import benchmark  # noqa: E402
from benchmarking.registry import SECTIONS, Section, to_run  # noqa: E402


def test_a_registered_section_is_chosen_run_and_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(SECTIONS, "echo", Section(run=lambda opts: {"repeats": opts.repeats},
                                                  table=lambda record: ["## Echo", "", f"repeats {record['repeats']}", ""],
                                                  default=False))
    with pytest.raises(SystemExit):
        benchmark.parse_args(["--sections", "paper,echoes"])
    assert "unknown sections ['echoes']: choose from train,decode,paper,memory,allocator,echo" in capsys.readouterr().err
    earlier = {"environment": {"device": "a CPU", "torch": "2", "threads": "1", "fairseq": "0.12", "python": "3.11",
                               "date": "2026-12-01 00:00 UTC"}, "command": "python scripts/benchmark.py", "peaks": {}}
    (tmp_path / "results.json").write_text(json.dumps(earlier))
    benchmark.main(["--out", str(tmp_path), "--sections", "echo", "--repeats", "7", "--update"])
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["echo"] == {"repeats": 7} and results["peaks"] == {}  # kept: no peaks worker ran
    assert (tmp_path / "results.md").read_text().endswith("## Echo\n\nrepeats 7\n")


def test_sections_run_in_the_registrys_order_with_those_they_read():
    assert to_run(["memory", "paper"]) == ["paper", "memory"]
    assert to_run(["memory", "decode"]) == ["train", "decode", "memory"]  # beam search translates train's checkpoints
    assert [name for name, section in SECTIONS.items() if section.default] == ["train", "decode", "paper", "memory"]
