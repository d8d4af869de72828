"""A data folder is shared like a checkpoint: ``load`` (and rnnsearch-serve through it) reads its
manifest.json as data, the options it passes to fairseq limited to a tokeniser, a subword scheme and
the scheme's model inside the folder; anything else is refused in one line, and runs nothing."""

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import assert_one_line_error, run

from rnnsearch_plugin import load


@pytest.fixture
def shared(multi30k, tmp_path) -> Path:
    """The session's prepared folder (binarized data, subword model, manifest) copied elsewhere, as
    one is shared."""
    folder = tmp_path / "shared"
    shutil.copytree(multi30k / "bin", folder / "bin")
    (folder / "spm").mkdir()
    shutil.copyfile(multi30k / "spm" / "spm.model", folder / "spm" / "spm.model")
    shutil.copyfile(multi30k / "manifest.json", folder / "manifest.json")
    return folder


def edit_manifest(folder: Path, **entries: Any) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps(manifest | entries))


def refusal(checkpoint: Path, folder: Path) -> str:
    """``load``'s one-line ValueError on ``folder``'s data."""
    with pytest.raises(ValueError) as refused:
        load(checkpoint, folder / "bin")
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_user_dir_in_the_manifest_runs_no_code(shared, checkpoint, tmp_path):
    module = tmp_path / "innocent_looking"
    module.mkdir()
    marker = tmp_path / "module-ran"
    (module / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    options = json.loads((shared / "manifest.json").read_text())["detokenise_options"]
    edit_manifest(shared, detokenise_options=[*options, "--user-dir", str(module)])
    assert 'detokenise_options holds "--user-dir", which a data folder may not set' in refusal(checkpoint, shared)
    assert not marker.exists()
    # --max-sentence-tokens over the model's limit: a server that did load the model stops at once instead of serving
    served = run(
        "rnnsearch-serve",
        "--path",
        str(checkpoint),
        "--data",
        str(shared / "bin"),
        "--port",
        "0",
        "--max-sentence-tokens",
        "5000",
        check=False,
    )
    assert served.returncode == 1 and "Traceback" not in served.stderr, served.stderr[-2000:]
    assert (
        served.stderr.strip().splitlines()[-1].startswith(f"rnnsearch-serve: error: {shared / 'manifest.json'}: detokenise_options holds")
    )
    assert not marker.exists()


@pytest.mark.parametrize(
    "entries, message",
    [
        ({"detokenise_options": ["--bpe", "sentencepiece", "--sentencepiece-model", "{outside}"]}, "lies outside the prepared folder"),
        (
            {"detokenise_options": ["--bpe", "sentencepiece", "--sentencepiece-model", "../outside.model"]},
            "lies outside the prepared folder",
        ),
        ({"detokenise_options": ["--bpe", "sentencepiece"]}, "--sentencepiece-model is missing"),
        ({"detokenise_options": ["--bpe", "gpt2"]}, '--bpe is "gpt2", not one of sentencepiece, subword_nmt'),
        ({"detokenise_options": ["--tokenizer", "nltk"]}, '--tokenizer is "nltk", not one of moses'),
        ({"detokenise_options": "--bpe sentencepiece"}, "detokenise_options must be a list of option names and their values"),
        ({"source_lang": "../../elsewhere"}, "source_lang and target_lang must be language codes"),
    ],
)
def test_a_manifest_naming_what_the_plugin_does_not_write_is_refused(shared, checkpoint, tmp_path, entries, message):
    (tmp_path / "outside.model").write_bytes((shared / "spm" / "spm.model").read_bytes())  # a real subword model, elsewhere
    edit_manifest(shared, **json.loads(json.dumps(entries).replace("{outside}", str(tmp_path / "outside.model"))))
    refused = refusal(checkpoint, shared)
    assert refused.startswith(f"{shared / 'manifest.json'}: ") and message in refused


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000 + "]" * 100_000, "is not a manifest (arrays or objects nested more than about"),
        ('{"pairs": ' + "7" * 5_000 + "}", f"is not a manifest (an integer of more than {sys.get_int_max_str_digits():,} digits)"),
        ("pairs: 3", "is not a manifest (Expecting value at line 1 column 1)"),
        (None, "cannot be read (Is a directory)"),  # a folder named manifest.json
    ],
    ids=["nested 100,000 deep", "a 5,000-digit number", "not JSON", "a folder"],
)
def test_a_manifest_python_cannot_read_is_refused_in_one_line(shared, checkpoint, text, message):
    """What Python's JSON parser or the file system raise (RecursionError, the int-string limit's
    ValueError, IsADirectoryError) is the one-line refusal of ``load`` and rnnsearch-serve."""
    path = shared / "manifest.json"
    path.unlink()
    if text is None:
        path.mkdir()
    else:
        path.write_text(text)
    refused = refusal(checkpoint, shared)
    assert refused.startswith(f"{path} ") and message in refused and refused.endswith("prepare the data again (scripts/prepare_data.py)")
    served = run("rnnsearch-serve", "--path", str(checkpoint), "--data", str(shared / "bin"), "--port", "0", check=False)
    assert_one_line_error(served, f"rnnsearch-serve: error: {refused}")


def test_a_copied_folder_loads_its_own_subword_model(shared, checkpoint, hub):
    """prepare_data.py names the subword model relative to the folder: a copy reads its own; a
    manifest naming it by an absolute path into the folder (as earlier versions wrote it) loads too."""
    sentences = ["A dog runs on the beach.", "Two men play football."]
    copied = load(checkpoint, shared / "bin")
    assert copied.cfg.bpe.sentencepiece_model == str(shared / "spm" / "spm.model")
    assert copied.translate(sentences, beam=2) == hub.translate(sentences, beam=2)
    edit_manifest(shared, detokenise_options=["--bpe", "sentencepiece", "--sentencepiece-model", str(shared / "spm" / "spm.model")])
    assert load(checkpoint, shared / "bin").translate(sentences, beam=2) == hub.translate(sentences, beam=2)
