"""tooling/gpu_check.sh, the GPU check, at toy sizes on the CPU (``--device cpu``), so
that it still runs whenever a GPU is at hand: every check passes and every figure the GPU run
reports is there. Its tests stage runs model tests the suite runs anyway, so here it is left out
and only what it names is checked to exist."""

import json
import re
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tooling"))
import gpu_check  # noqa: E402


def test_the_tests_it_runs_on_the_gpu_exist():
    for node in gpu_check.MODEL_TESTS:
        path, _, function = node.partition("::")
        source = (REPO / path).read_text()
        assert not function or re.search(rf"^def {function}\(", source, re.M), node


def test_cpu_run_passes_and_reports_every_figure(tmp_path):
    out = tmp_path / "results-cpu"
    stages = [stage for stage in gpu_check.DEFAULT_STAGES if stage != "tests"]
    result = subprocess.run(
        [
            "bash",
            "tooling/gpu_check.sh",
            "--device",
            "cpu",
            "--out",
            str(out),
            "--work",
            str(tmp_path / "work"),
            "--stages",
            ",".join(stages),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(out.with_suffix(".json").read_text())
    failed = [c for stage in report["stages"] for c in stage["checks"] if not c["passed"]]
    assert result.returncode == 0 and report["passed"] and not failed, (failed, result.stdout[-3000:])
    assert [stage["stage"] for stage in report["stages"]] == stages
    figures = {stage["stage"]: stage["figures"] for stage in report["stages"]}
    assert figures["install"] == {}  # fairseq imports here: nothing installed
    assert all(len(run["losses"]) >= 2 for run in figures["precision"].values())
    assert figures["training"]["ratio"] > 0 and figures["training"]["lstm"]["wps"] > 0
    for dtype in ("float32", "bfloat16"):
        row = figures["paper"][dtype]
        assert row["wps"] > 0 and row["peak_mb"] > 0 and row["mfu_bfloat16_peak"] > 0
    assert figures["decode"]["ratio beam 5"] > 0
    assert "| paper |" in out.with_suffix(".md").read_text()
    assert "===== decode" in out.with_suffix(".log").read_text()
