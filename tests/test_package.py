"""The package as users reach it: the names they import and register, the commands setup.cfg installs, the
files a non-editable install ships, and an import graph without circles."""

import ast
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
from conftest import REPO
from fairseq.criterions import CRITERION_REGISTRY
from fairseq.models import ARCH_MODEL_REGISTRY, MODEL_REGISTRY
from fairseq.optim import OPTIMIZER_REGISTRY

import rnnsearch_plugin

PACKAGE = REPO / "rnnsearch_plugin"
COMMANDS = {
    "rnnsearch-score",
    "rnnsearch-average-checkpoints",
    "rnnsearch-evaluate",
    "rnnsearch-heatmaps",
    "rnnsearch-aer",
    "rnnsearch-align",
    "rnnsearch-serve",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The plugin's modules that ``path`` imports anywhere in it (lazy imports included)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names}
    return found & modules


def test_the_plugins_imports_form_no_circle():
    """Parent packages aside (Python imports a module's packages first, whatever it imports)."""
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: imported_modules(path, set(paths)) - {name} for name, path in paths.items()}
    circles, finished = [], set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            circles.append(trail[trail.index(name) :] + [name])
        elif name not in finished:
            for imported in sorted(graph[name]):
                if not name.startswith(imported + "."):
                    visit(imported, [*trail, name])
            finished.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert circles == []


def test_what_users_import_register_and_run_is_there():
    assert set(rnnsearch_plugin.__all__) == {
        "RNNSearchModel",
        "RNNEncDecModel",
        "PaperAdadelta",
        "ChunkedCrossEntropyCriterion",
        "load",
        "RNNSearchHubInterface",
        "Alignment",
    }
    assert all(getattr(rnnsearch_plugin, name) for name in rnnsearch_plugin.__all__)
    assert MODEL_REGISTRY["rnnsearch"] is rnnsearch_plugin.RNNSearchModel
    assert MODEL_REGISTRY["rnnencdec"] is rnnsearch_plugin.RNNEncDecModel
    assert {arch: ARCH_MODEL_REGISTRY[arch].__name__ for arch in ARCH_MODEL_REGISTRY if arch.startswith("rnn")} == {
        "rnnsearch": "RNNSearchModel",
        "rnnsearch_wmt14": "RNNSearchModel",
        "rnnsearch_small": "RNNSearchModel",
        "rnnencdec": "RNNEncDecModel",
        "rnnencdec_wmt14": "RNNEncDecModel",
        "rnnencdec_small": "RNNEncDecModel",
    }
    assert OPTIMIZER_REGISTRY["rnnsearch_adadelta"] is rnnsearch_plugin.PaperAdadelta
    assert CRITERION_REGISTRY["chunked_cross_entropy"] is rnnsearch_plugin.ChunkedCrossEntropyCriterion
    commands = {
        entry.name: entry
        for entry in metadata.entry_points(group="console_scripts")
        if entry.dist is not None and entry.dist.name == "rnnsearch-plugin"
    }
    assert set(commands) == COMMANDS
    assert all(callable(entry.load()) for entry in commands.values())


def test_the_installed_package_holds_the_source_trees_files_and_no_others():
    """What ``pip install .`` (scripts/setup.sh) put in the environment: every module and the
    server's static files, and no module of an earlier layout; an editable install
    (CONTRIBUTING.md) is the source tree itself."""
    direct_url = metadata.distribution("rnnsearch-plugin").read_text("direct_url.json")
    if direct_url and json.loads(direct_url).get("dir_info", {}).get("editable"):
        assert Path(rnnsearch_plugin.__file__).resolve().parent == PACKAGE
        return
    installed = {
        Path(*file.parts[1:])
        for file in metadata.files("rnnsearch-plugin")
        if file.parts[0] == "rnnsearch_plugin" and "__pycache__" not in file.parts
    }
    source = {path.relative_to(PACKAGE) for path in PACKAGE.rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    assert installed == source


def test_setup_waits_for_a_set_up_already_running_in_the_same_clone(tmp_path: Path) -> None:
    """The README's two commands both start with scripts/setup.sh; started together in a fresh clone,
    the second must wait rather than race the first's creation of .venv. Here python3 -m venv would
    fail at once (PYTHON=false), so the script only stays alive while it waits for the lock."""
    script = tmp_path / "scripts" / "setup.sh"
    script.parent.mkdir()
    shutil.copy(REPO / "scripts" / "setup.sh", script)
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    with script.open() as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen(
            ["bash", str(script)], env={**env, "PYTHON": "false"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(1.5)
        assert waiting.poll() is None
        assert not (tmp_path / ".venv").exists()
    assert waiting.wait(timeout=30) != 0  # released: it went on, and `false -m venv` failed


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_finds_nothing(command):
    """pyproject.toml's lint rules and ruff's format over the whole repository (``ruff format .`` fixes the latter)."""
    result = subprocess.run([sys.executable, "-m", "ruff", *command, "--no-cache", "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
