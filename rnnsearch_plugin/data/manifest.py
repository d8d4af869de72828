"""The manifest a prepared folder holds beside its binarized data (``OUT/manifest.json``, written by
``scripts/prepare_data.py``), read as data: a data folder is shared like a checkpoint, so only the
fields the plugin writes are read, with the values it allows (the pair, a tokeniser and a subword
scheme, the scheme's model a file inside the folder); anything else, such as a ``--user-dir`` whose
code fairseq would import, is refused in one line (``UserInputError``) before anything loads.
"""

import re
from itertools import chain
from pathlib import Path
from typing import Any, Optional

from ..arguments import shown
from ..errors import UserInputError
from ..json_input import InvalidJSON, parse_json

MANIFEST = "manifest.json"  # beside the binarized folder, in the folder prepare_data.py made
LANGUAGE = re.compile(r"\w+")  # a language code, as fairseq's file names hold it ({split}.{src}-{tgt}...)
# What a manifest's detokenise_options may set (data/schemes.py's generate_options write them): the
# tokeniser, the subword scheme, and the option naming the scheme's model, a file inside the folder.
SUBWORD_MODELS = {"sentencepiece": "--sentencepiece-model", "subword_nmt": "--bpe-codes"}
CHOICES = {"--tokenizer": ("moses",), "--bpe": tuple(SUBWORD_MODELS)}


def read_manifest(data: Path) -> dict[str, Any]:
    """The manifest of the binarized folder ``data`` (``data/../manifest.json``; {} without one)."""
    path = data.parent / MANIFEST
    if not path.exists():
        return {}
    try:
        recorded = parse_json(path.read_text(encoding="utf-8"))
    except OSError as error:  # a folder, or a file this user may not read
        raise UserInputError(f"{path} cannot be read ({error.strerror}): prepare the data again (scripts/prepare_data.py)") from None
    except (UnicodeDecodeError, InvalidJSON) as error:
        raise UserInputError(f"{path} is not a manifest ({error}): prepare the data again (scripts/prepare_data.py)") from None
    if not isinstance(recorded, dict):
        raise UserInputError(f"{path} is not a manifest (a JSON object): prepare the data again (scripts/prepare_data.py)")
    return recorded


def data_pair(data: Path) -> Optional[tuple[str, str]]:
    """The (source, target) languages of a fairseq-binarized folder: its manifest's, else the one
    pair its files are named for (``{split}.{src}-{tgt}.{lang}.idx``); None when that says nothing."""
    recorded = read_manifest(data)
    if "source_lang" in recorded or "target_lang" in recorded:
        pair = recorded.get("source_lang"), recorded.get("target_lang")
        if not all(isinstance(lang, str) and LANGUAGE.fullmatch(lang) for lang in pair):
            raise UserInputError(
                f"{data.parent / MANIFEST}: source_lang and target_lang must be language codes (letters, digits, _), "
                f"not {shown(pair[0])} and {shown(pair[1])}"
            )
        return pair  # type: ignore[return-value]
    pairs = {(source, target) for _, source, target in binarized(data)}
    return next(iter(pairs)) if len(pairs) == 1 else None


def subword_options(data: Path) -> dict[str, str]:
    """from_pretrained's tokeniser and subword model, from the manifest's detokenise_options: only
    the options and values the plugin writes there, the model a file inside the prepared folder
    (named relative to it, or by an absolute path into it); UserInputError for anything else."""
    path, prepared = data.parent / MANIFEST, data.parent
    options = read_manifest(data).get("detokenise_options", [])
    if not isinstance(options, list) or len(options) % 2 or not all(isinstance(option, str) for option in options):
        raise UserInputError(f"{path}: detokenise_options must be a list of option names and their values, not {shown(options)}")
    given = dict(zip(options[::2], options[1::2]))
    model_option = SUBWORD_MODELS.get(given.get("--bpe", ""))  # the option naming the scheme's model
    known = [*CHOICES, *([model_option] if model_option else [])]
    for name, value in given.items():
        if name not in known:
            raise UserInputError(
                f"{path}: detokenise_options holds {shown(name)}, which a data folder may not set (only "
                f"{', '.join(known)}): remove it, or prepare the data again (scripts/prepare_data.py)"
            )
        if name in CHOICES and value not in CHOICES[name]:
            raise UserInputError(f"{path}: detokenise_options' {name} is {shown(value)}, not one of {', '.join(CHOICES[name])}")
    if model_option is not None:
        given[model_option] = str(inside(prepared, given.get(model_option), f"{path}: detokenise_options' {model_option}"))
    return options_to_kwargs(list(chain.from_iterable(given.items())))


def inside(folder: Path, name: Optional[str], what: str) -> Path:
    """The file ``name`` (relative to ``folder``, or absolute) names, which must lie inside ``folder``:
    a manifest names no file elsewhere, which fairseq would read."""
    if name is None:
        raise UserInputError(f"{what} is missing: prepare the data again (scripts/prepare_data.py)")
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise UserInputError(
            f"{what} {name} lies outside the prepared folder {folder}: name a file inside it, relative to "
            "the folder (scripts/prepare_data.py writes it so)"
        )
    if not path.is_file():
        raise UserInputError(f"{what} {name}: no such file in {folder}")
    return path


def options_to_kwargs(options: list[str]) -> dict[str, str]:
    """fairseq options with values ('--bpe', 'sentencepiece', ...) as from_pretrained kwargs."""
    return {name[2:].replace("-", "_"): value for name, value in zip(options[::2], options[1::2])}


def binarized(folder: Path) -> set[tuple[str, str, str]]:
    """(split, source, target) of each binarized file of ``folder``, by fairseq's names
    (``{split}.{src}-{tgt}.{lang}.idx``)."""
    names = (path.name.split(".") for path in folder.glob("*.*-*.*.idx"))
    return {(split, *pair.split("-", 1)) for split, pair, *_ in names}  # type: ignore[misc]
