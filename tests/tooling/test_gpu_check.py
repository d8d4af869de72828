"""tooling/gpu_check.sh, the GPU check, at toy sizes on the CPU (``--device cpu``), so
that it still runs whenever a GPU is at hand: every check passes and every figure the GPU run
reports is there; a check fails where what it checks went wrong; a stage over its limit is
stopped and failed. Its tests stage runs model tests the suite runs anyway, so here it is left out and only
what it names is checked to exist."""

import json
import re
import shutil
import subprocess
import sys
from argparse import Namespace

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
    beams = {f"ratio beam {beam}" for beam in gpu_check.SIZES["cpu"].beams}
    assert {"rnnsearch_small", "lstm", "ratio"} <= training.keys() and beams <= decode.keys()
    assert {"mfu_bfloat16_peak", "matmul_flops_per_second", "peak_mb"} <= paper["float32"].keys() & paper["bfloat16"].keys()
    assert "| paper |" in out.with_suffix(".md").read_text()
    assert "===== decode" in out.with_suffix(".log").read_text()


def test_a_stage_over_its_limit_is_stopped_and_reported_failed(tmp_path):
    with open(tmp_path / "log", "w") as log:
        result = gpu_check.run_stage("paper", Namespace(device="cpu", work=tmp_path), 0.5, log)
    assert not result["passed"] and result["error"] == "stopped after its limit of 0 s" and result["checks"] == []


def test_the_timing_checks_fail_on_a_run_that_measured_nothing(monkeypatch, tmp_path):
    """A worker that timed no tokens (rate 0) or broke (NaN) fails its check, as a failed import does."""
    sizes = gpu_check.SIZES["cpu"]
    for rate in (0.0, float("nan")):
        row = {"wps": rate, "model_flops_per_second": 0.0, "matmul_flops_per_second": 1.0}
        monkeypatch.setattr(gpu_check, "run_worker", lambda kind, job, row=row: dict(row))
        opts = Namespace(device="cpu", work=tmp_path, install_target=[])
        for stage in (gpu_check.stage_training, gpu_check.stage_paper):
            checks = stage(opts, sizes)["checks"]
            assert checks and not any(c["passed"] for c in checks), (stage.__name__, rate)
    monkeypatch.setattr(gpu_check.sys, "executable", shutil.which("false"))  # an interpreter where nothing imports
    (install,) = gpu_check.stage_install(Namespace(device="cpu", work=tmp_path, install_target=[]), sizes)["checks"]
    assert install["name"] == "fairseq imports" and not install["passed"]
