"""scripts/recipe.py and the recipes of configs/: every config, written as fairseq-train options,
is parsed by fairseq into the values it sets, fairseq-hydra-train builds the model fairseq-train
does, and scripts/quickstart.sh trains what configs/quickstart.yaml says."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import BIN, REPO, assert_one_line_error, run
from fairseq import options
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.models import ARCH_MODEL_NAME_REGISTRY, MODEL_DATACLASS_REGISTRY
from omegaconf import OmegaConf

sys.path.insert(0, str(REPO / "scripts"))
from recipe import QUICKSTART, architecture_values, recipe_options  # noqa: E402

CONFIGS = sorted((REPO / "configs").glob("*.yaml"))


def settings(config: Path) -> dict[tuple[str, str], object]:
    """{(group, key): value} of every value ``config`` sets (not ``???``: the data, the command line's)."""
    written = OmegaConf.to_container(OmegaConf.load(config), resolve=False)
    return {(group, key): value for group, fields in written.items() for key, value in fields.items() if value != "???"}


def assert_holds(cfg, expected: dict[tuple[str, str], object]) -> None:
    """Each (group, key) of ``cfg`` (a fairseq configuration) holds the expected value."""
    for (group, key), value in expected.items():
        assert cfg[group][key] == value, (group, key, cfg[group][key], value)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.stem)
def test_fairseq_train_parses_every_config_into_the_values_it_sets(config, tmp_path):
    args = options.parse_args_and_arch(
        options.get_training_parser(), input_args=[str(tmp_path), "--user-dir", "rnnsearch_plugin", *recipe_options(config)]
    )
    assert_holds(convert_namespace_to_omegaconf(args), settings(config))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.stem)
def test_every_config_names_the_sizes_its_architecture_sets(config):
    """fairseq-hydra-train fills a model's fields from its dataclass, not from its architecture: a
    field the architecture sets otherwise must be in the config, or hydra builds another model."""
    model = settings(config)
    arch = model[("model", "_name")]
    defaults = MODEL_DATACLASS_REGISTRY[ARCH_MODEL_NAME_REGISTRY[arch]]()
    own = {key for key, value in architecture_values(arch).items() if getattr(defaults, key, value) != value}
    assert own <= {key for group, key in model if group == "model"}, own


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.stem)
def test_every_file_a_config_names_exists(config):
    named = re.findall(r"\b(?:scripts|configs|tooling|rnnsearch_plugin|docs)/[\w/.-]*\w", config.read_text())
    assert [path for path in named if not (REPO / path).exists()] == []


def test_options_follow_the_config_its_overrides_and_the_options_given(tmp_path):
    config = tmp_path / "recipe.yaml"
    config.write_text(
        "common:\n  seed: 3\n  amp: true\n  cpu: false\ntask:\n  _name: translation\n  data: ???\n"
        "lr_scheduler:\n  _name: fixed\noptimization:\n  lr: [0.5, 0.25]\n  max_update: 10\n"
    )
    assert recipe_options(config) == [
        *("--seed", "3", "--amp", "--task", "translation", "--lr-scheduler", "fixed", "--lr", "0.5,0.25", "--max-update", "10")
    ]
    changed = recipe_options(config, ["common.amp=false", "optimization.max_update=null", "common.seed=4"], ["--lr", "1", "--cpu"])
    assert changed == ["--seed", "4", "--task", "translation", "--lr-scheduler", "fixed", "--lr", "1", "--cpu"]
    printed = run(sys.executable, "scripts/recipe.py", str(config), "common.seed=5", "--", "--max-update", "3").stdout
    assert printed.split() == [
        "--seed",
        "5",
        "--amp",
        "--task",
        "translation",
        "--lr-scheduler",
        "fixed",
        "--lr",
        "0.5,0.25",
        "--max-update",
        "3",
    ]
    assert run(sys.executable, "scripts/recipe.py", str(config), "--get", "optimization.lr").stdout == "0.5,0.25\n"


@pytest.mark.parametrize(
    "text, override, fragment",
    [
        ("common:\n  seed: 1\n", "seed", "override 'seed' is not KEY=VALUE"),
        ("defaults:\n  - quickstart\n", "common.seed=1", "'defaults' is fairseq-hydra-train's own"),
        ("optimizer:\n  _name: adam\n  adam_betas: {a: 1}\n", "common.seed=1", "--adam-betas: {'a': 1} is not one fairseq-train value"),
        ("common:\n  seed: ${x}\n", "common.cpu=true", "--seed: '${x}' is not one fairseq-train value"),
        ("model:\n  _name: nope\n", "common.seed=1", "unknown architecture 'nope'"),
        ("- a\n", "common.seed=1", "is not a fairseq config"),
    ],
)
def test_what_cannot_be_options_is_refused_in_one_line(tmp_path, text, override, fragment):
    config = tmp_path / "recipe.yaml"
    config.write_text(text)
    assert_one_line_error(run(sys.executable, "scripts/recipe.py", str(config), override, check=False), fragment)


def quickstart_sandbox(root: Path) -> Path:
    """scripts/quickstart.sh with what it needs to train, beside stubs for its set-up, its data
    preparation (the data is given) and every command after training (each prints one S- line)."""
    for folder in ("scripts", "shims"):
        (root / folder).mkdir(parents=True)
    for name in ("quickstart.sh", "recipe.py", "train_progress.py"):
        shutil.copy(REPO / "scripts" / name, root / "scripts")
    (root / "scripts" / "setup.sh").write_text("")
    (root / "scripts" / "activate.sh").write_text("")
    (root / "scripts" / "prepare_data.py").write_text("")
    shutil.copytree(REPO / "configs", root / "configs")
    (root / "rnnsearch_plugin").symlink_to(REPO / "rnnsearch_plugin")
    for command in (
        "fairseq-generate",
        "rnnsearch-score",
        "fairseq-interactive",
        "rnnsearch-evaluate",
        "rnnsearch-heatmaps",
        "rnnsearch-aer",
    ):
        reads = "cat > /dev/null\n" if command == "fairseq-interactive" else ""  # its input, piped: read, not left to SIGPIPE
        (root / "shims" / command).write_text(f"#!/bin/sh\n{reads}echo S-0\n")
        (root / "shims" / command).chmod(0o755)
    return root


def test_the_quickstart_trains_what_its_config_says(multi30k, tmp_path):
    """The quickstart's own training step, 2 updates (MAX_UPDATE) on the session's Multi30k: the
    configuration fairseq saved with the model holds every value of configs/quickstart.yaml."""
    box = quickstart_sandbox(tmp_path / "box")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "data").symlink_to(multi30k)
    env = {
        **os.environ,
        "PATH": f"{box / 'shims'}:{BIN}:{os.environ['PATH']}",
        "WORK": str(tmp_path / "work"),
        "MAX_UPDATE": "2",
        "ALIGNMENT_GOLD_DIR": str(tmp_path / "no-gold"),
    }
    result = subprocess.run(["bash", str(box / "scripts" / "quickstart.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "| 2/5 training rnnsearch_small for 2 updates, at most 75 minutes" in result.stdout, result.stdout[-2000:]
    saved = tmp_path / "work" / "checkpoints" / "rnnsearch_small"
    cfg = torch.load(saved / "checkpoint_last.pt", weights_only=True)["cfg"]
    assert_holds(cfg, {**settings(QUICKSTART), ("optimization", "max_update"): 2})
    assert cfg["checkpoint"]["save_dir"] == str(saved) and cfg["common"]["log_file"] == str(saved / "train.log")
    assert cfg["optimization"]["stop_time_hours"] == 75 / 60 and (cfg["task"]["source_lang"], cfg["task"]["target_lang"]) == ("en", "fr")
