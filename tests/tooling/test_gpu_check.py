"""tooling/gpu_check.sh, the GPU check, at toy sizes on the CPU (``--device cpu``), so
that it still runs whenever a GPU is at hand: every check passes, every figure the GPU run
reports is there and its ratios are those of its figures; a stage over its limit is stopped and
failed. Its tests stage runs model tests the suite runs anyway, so here it is left out and only
what it names is checked to exist."""

import json
import re
import subprocess
import sys
from argparse import Namespace

import pytest
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
    training, decode, paper = figures["training"], figures["decode"], figures["paper"]
    assert training["ratio"] == pytest.approx(training["rnnsearch_small"]["wps"] / training["lstm"]["wps"])
    beam5 = decode["rnnsearch_small beam 5"]["sentences_per_second"] / decode["lstm beam 5"]["sentences_per_second"]
    assert decode["ratio beam 5"] == pytest.approx(beam5)
    for dtype in ("float32", "bfloat16"):  # both against the bfloat16 peak its worker measured
        row = paper[dtype]
        assert row["mfu_bfloat16_peak"] == pytest.approx(row["model_flops_per_second"] / paper["bfloat16"]["matmul_flops_per_second"])
        assert row["mfu_bfloat16_peak"] > 0  # above 1 where bfloat16 is emulated (no AVX512-BF16 or AMX): its peak is low
    assert "| paper |" in out.with_suffix(".md").read_text()
    assert "===== decode" in out.with_suffix(".log").read_text()


def test_a_stage_over_its_limit_is_stopped_and_reported_failed(tmp_path):
    with open(tmp_path / "log", "w") as log:
        result = gpu_check.run_stage("paper", Namespace(device="cpu", work=tmp_path), 0.5, log)
    assert not result["passed"] and result["error"] == "stopped after its limit of 0 s" and result["checks"] == []
