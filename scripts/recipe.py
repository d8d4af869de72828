"""The training recipes of configs/ as fairseq-train options, so that the quickstart and every
script that trains a recipe read it there rather than spelling it out: one option or value a line
(bash: ``mapfile -t``).

    python scripts/recipe.py configs/quickstart.yaml [KEY=VALUE ...] [-- OPTION ...]
    python scripts/recipe.py configs/quickstart.yaml --get optimization.max_update

A config is a fairseq-hydra-train config (``--config-dir configs --config-name NAME``): fairseq's
groups and their fields. A group's ``_name`` is its option (``model``'s ``--arch``, ``task``'s
``--task``, ``lr_scheduler``'s ``--lr-scheduler``), every other key ``--key-with-dashes VALUE``;
``true`` is a bare flag, ``false``, ``null`` and ``???`` (what the command line gives, the data)
leave the option out, and a list is its items joined by commas (``lr: [0.002]``: ``--lr 0.002``).
The model's fields that only restate what its architecture sets by itself are left out:
fairseq-hydra-train takes an architecture's name but not its sizes, so a config restates them,
while fairseq-train's ``--arch`` sets them, or, in the place of the config's, another
architecture's own.

KEY=VALUE changes the config as fairseq-hydra-train's overrides do (a YAML value; ``null`` leaves
the option out). The OPTIONs after ``--`` take the place of the config's options of the same name
and follow the others, so that each option is given once. What a config or an override cannot say
as fairseq-train options is refused in one line."""

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

import yaml
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "configs" / "quickstart.yaml"  # the quickstart's recipe, which the published results' trainings share
NAME_OPTION = {"model": "--arch"}  # a group's _name: --GROUP, but the model's
HYDRA_ONLY = ("defaults", "hydra")  # hydra's own keys, no fairseq option


class RecipeError(ValueError):
    """What a config or an override cannot say as fairseq-train options (the message: one line)."""


def load(config: Path, overrides: Sequence[str] = ()) -> DictConfig:
    """``config`` with hydra-style ``KEY=VALUE`` ``overrides``."""
    malformed = [override for override in overrides if "=" not in override or override.startswith("=")]
    if malformed:
        raise RecipeError(f"override '{malformed[0]}' is not KEY=VALUE (e.g. optimization.max_update=100, common.amp=false)")
    try:
        loaded = OmegaConf.load(config)
        if not isinstance(loaded, DictConfig):
            raise RecipeError(f"{config} is not a fairseq config: its top level is not a mapping of groups")
        return OmegaConf.merge(loaded, OmegaConf.from_dotlist(list(overrides)))  # type: ignore[return-value]
    except FileNotFoundError:
        raise RecipeError(
            f"no config {config}: give one of {', '.join(sorted(p.name for p in (REPO / 'configs').glob('*.yaml')))}"
        ) from None
    except (OmegaConfBaseException, yaml.YAMLError) as error:
        raise RecipeError(f"{config}: {' '.join(str(error).split())}") from None


def architecture_values(arch: str) -> dict[str, Any]:
    """What fairseq-train's ``--arch`` sets by itself: its architecture function on an empty namespace."""
    from fairseq.models import ARCH_CONFIG_REGISTRY

    import rnnsearch_plugin  # noqa: F401  (registers the plugin's architectures)

    if arch not in ARCH_CONFIG_REGISTRY:
        raise RecipeError(f"unknown architecture '{arch}' (model._name): fairseq and the plugin have no such --arch")
    namespace = argparse.Namespace()
    ARCH_CONFIG_REGISTRY[arch](namespace)
    return vars(namespace)


def words(option: str, value: Any) -> list[str]:
    """One option's words on the command line: none, the bare flag, or the option and its value."""
    if value is None or value is False or value == "???":
        return []
    if value is True:
        return [option]
    if isinstance(value, list) and value and all(isinstance(item, (int, float, str)) and not isinstance(item, bool) for item in value):
        return [option, ",".join(str(item) for item in value)]
    if isinstance(value, (dict, list)) or (isinstance(value, str) and "${" in value) or value == "":
        raise RecipeError(f"{option}: {value!r} is not one fairseq-train value (a nested group, an empty list or string, an interpolation)")
    return [option, str(value)]


def group_options(group: str, section: Any, restated: dict[str, Any]) -> list[str]:
    """A group's options, its _name first as written; the ``restated`` model fields left out."""
    if group in HYDRA_ONLY:
        raise RecipeError(f"'{group}' is fairseq-hydra-train's own: write the recipe's values in the config itself")
    fields = section if isinstance(section, dict) else {"_name": section}
    options = []
    for key, value in fields.items():
        if key in restated and restated[key] == value:
            continue
        option = NAME_OPTION.get(group, f"--{group.replace('_', '-')}") if key == "_name" else f"--{key.replace('_', '-')}"
        options += words(option, value)
    return options


def replaced(options: list[str], given: Sequence[str]) -> list[str]:
    """``options`` but those ``given`` names, then ``given``."""
    names = {word for word in given if word.startswith("--")}
    kept, dropping = [], False
    for word in options:
        if word.startswith("--"):
            dropping = word in names
        if not dropping:
            kept.append(word)
    return [*kept, *given]


def restated(config: Path) -> dict[str, Any]:
    """The model fields of ``config`` that only restate what its architecture sets by itself."""
    model = OmegaConf.to_container(load(config)).get("model")  # type: ignore[union-attr]
    if not isinstance(model, dict) or not model.get("_name"):
        return {}
    own = architecture_values(model["_name"])
    return {key: value for key, value in model.items() if key != "_name" and key in own and own[key] == value}


def recipe_options(config: Path, overrides: Sequence[str] = (), given: Sequence[str] = ()) -> list[str]:
    """fairseq-train's options for ``config`` with ``overrides`` (KEY=VALUE), the ``given`` options
    in the place of its own of the same name."""
    cfg = OmegaConf.to_container(load(config, overrides), resolve=False)
    options = []
    for group, section in cfg.items():  # type: ignore[union-attr]
        options += group_options(str(group), section, restated(config) if group == "model" and section else {})
    return replaced(options, given)


def value(config: Path, key: str, overrides: Sequence[str] = ()) -> str:
    """One value of ``config`` with ``overrides``, as its option takes it (a list: joined by commas)."""
    found = OmegaConf.select(load(config, overrides), key, default=None, throw_on_missing=False)
    shown = words("", OmegaConf.to_container(found) if OmegaConf.is_config(found) else found)
    if len(shown) != 2:
        raise RecipeError(f"{config} sets no value for {key}")
    return shown[1]


def main(argv: list[str]) -> int:
    ours, given = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(prog="recipe.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path, help="a config of configs/, e.g. configs/quickstart.yaml")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="changes to the config, as fairseq-hydra-train takes them")
    parser.add_argument("--get", metavar="KEY", help="print this one value (e.g. model._name) instead of the options")
    opts = parser.parse_args(ours)
    sys.path.insert(0, str(REPO))  # the plugin of this checkout, as fairseq-train's --user-dir rnnsearch_plugin loads it
    try:
        lines = [value(opts.config, opts.get, opts.overrides)] if opts.get else recipe_options(opts.config, opts.overrides, given)
    except RecipeError as error:
        print(f"recipe.py: error: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
