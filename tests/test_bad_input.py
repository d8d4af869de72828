"""User mistakes get one clear line, never a traceback; crafted checkpoints never run code."""
import pickle
import re
import shutil
from pathlib import Path

import pytest
import torch

from conftest import TINY, run


def interactive(multi30k: Path, checkpoint: Path, stdin: str, *options: str, check: bool = True):
    return run("fairseq-interactive", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en",
               "-t", "fr", "--path", str(checkpoint), "--beam", "2", "--bpe", "sentencepiece",
               "--sentencepiece-model", str(multi30k / "spm" / "spm.model"), *options, stdin=stdin, check=check)


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(error_lines) == 1, result.stderr[-2000:]
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


def test_missing_data_directory(tmp_path):
    result = run("fairseq-train", str(tmp_path / "no-such-data"), "--user-dir", "rnnsearch_plugin",
                 "--task", "translation", "--arch", "rnnsearch_small", "--max-tokens", "1000", "--max-update", "1",
                 check=False)
    assert_one_line_error(result, "fairseq-train: error:", "no-such-data")


def test_dictionary_that_does_not_match_the_checkpoint(multi30k, checkpoint, tmp_path):
    other = tmp_path / "bin"
    other.mkdir()
    for lang in ("en", "fr"):
        lines = (multi30k / "bin" / f"dict.{lang}.txt").read_text().splitlines()
        (other / f"dict.{lang}.txt").write_text("\n".join(lines[:-40]) + "\n")
    result = run("fairseq-interactive", str(other), "--user-dir", "rnnsearch_plugin", "-s", "en", "-t", "fr",
                 "--path", str(checkpoint), stdin="A dog .\n", check=False)
    assert_one_line_error(result, "source dictionary of", "use the data directory")


def test_resuming_with_another_architecture(multi30k, checkpoint, tmp_path):
    shutil.copy(checkpoint, tmp_path / "checkpoint_last.pt")  # an rnnsearch checkpoint
    result = run("fairseq-train", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "--task", "translation",
                 "-s", "en", "-t", "fr", "--arch", "rnnencdec_small", "--optimizer", "adam", "--max-tokens", "1000",
                 "--max-update", "1", "--save-dir", str(tmp_path), "--num-workers", "0", "--cpu", check=False)
    assert_one_line_error(result, "Cannot load model parameters", "Resume with the model options (--arch")


def test_empty_and_whitespace_lines_are_translated_in_place(multi30k, checkpoint):
    """Documented: an empty line is an empty sentence (just </s>) and gets its own output."""
    result = interactive(multi30k, checkpoint, "A dog runs .\n\n   \nA cat sleeps .\n")
    assert [int(i) for i in re.findall(r"^D-(\d+)\t", result.stdout, flags=re.M)] == [0, 1, 2, 3]


def test_every_line_gets_its_output_in_order_whatever_it_holds(multi30k, checkpoint, tmp_path):
    """Invalid UTF-8, characters and words outside the vocabulary, an empty line, a line over the
    source limit: one translation each, in order, and the lines after them are still served.
    Documented: invalid bytes become U+FFFD, an over-long line is truncated; both warn."""
    lines = [b"A dog runs .", b"\xff\xfe broken \xc3 bytes", "中文 zzqqxx ☃".encode(), b"",
             b"dog " * 1100, b"A cat sleeps ."]
    source = tmp_path / "input.txt"
    source.write_bytes(b"\n".join(lines) + b"\n")
    result = interactive(multi30k, checkpoint, "", "--input", str(source))
    assert [int(i) for i in re.findall(r"^D-(\d+)\t", result.stdout, flags=re.M)] == list(range(len(lines)))
    assert "input line 2 is not valid UTF-8; its invalid bytes are read as U+FFFD" in result.stderr
    assert re.search(r"a source line of 1\d{3} tokens .* is longer than --max-source-positions 1024; "
                     r"translating its first 1023 tokens", result.stderr)


class Payload:
    """Unpickling this runs `touch MARKER`."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.fixture
def crafted(checkpoint, tmp_path) -> tuple[Path, Path]:
    state = torch.load(checkpoint, weights_only=True)
    marker = tmp_path / "payload-ran"
    state["extra_state"]["evil"] = Payload(marker)
    path = tmp_path / "crafted.pt"
    torch.save(state, path)
    return path, marker


def test_crafted_checkpoint_is_refused_by_generate_and_interactive(multi30k, checkpoint, crafted, monkeypatch):
    """Even with torch's weights-only default turned off by the environment."""
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    path, marker = crafted
    result = run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en",
                 "-t", "fr", "--path", str(path), "--gen-subset", "test", check=False)
    assert_one_line_error(result, "refused to load a checkpoint", "system")
    assert_one_line_error(interactive(multi30k, path, "A dog .\n", check=False), "refused to load")
    assert not marker.exists()
    newest_protocol = path.with_name("protocol5.pt")
    torch.save(torch.load(checkpoint, weights_only=True) | {"evil": Payload(marker)}, newest_protocol,
               pickle_protocol=pickle.HIGHEST_PROTOCOL)
    assert_one_line_error(interactive(multi30k, newest_protocol, "A dog .\n", check=False), "refused to load")
    assert not marker.exists()


def test_crafted_checkpoint_is_refused_by_the_python_api_and_averaging(multi30k, crafted, checkpoint, tmp_path,
                                                                       monkeypatch):
    """Even with torch's weights-only default turned off by the environment."""
    from rnnsearch_plugin import RNNSearchModel

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    path, marker = crafted
    with pytest.raises(pickle.UnpicklingError):
        RNNSearchModel.from_pretrained(str(path.parent), checkpoint_file=path.name,
                                       data_name_or_path=str(multi30k / "bin"))
    result = run("rnnsearch-average-checkpoints", "--inputs", str(checkpoint), str(path),
                 "--output", str(tmp_path / "avg.pt"), check=False)
    assert_one_line_error(result, "not a loadable fairseq checkpoint")
    assert not marker.exists() and not (tmp_path / "avg.pt").exists()


def test_averaging_real_checkpoints(checkpoint, tmp_path):
    state = torch.load(checkpoint, weights_only=True)
    shifted = dict(state, model={k: v + 1.0 for k, v in state["model"].items()})
    other = tmp_path / "shifted.pt"
    torch.save(shifted, other)
    run("rnnsearch-average-checkpoints", "--inputs", str(checkpoint), str(other), "--output", str(tmp_path / "avg.pt"))
    averaged = torch.load(tmp_path / "avg.pt", weights_only=True)["model"]
    for name, tensor in state["model"].items():
        torch.testing.assert_close(averaged[name], tensor + 0.5)


def damaged_copies(checkpoint: Path, folder: Path) -> dict[str, Path]:
    """The checkpoint cut short (a copy killed half-way), emptied, and with bytes of its
    pickle changed (a disk or transfer error)."""
    data = checkpoint.read_bytes()
    pickle_at = data.index(b"data.pkl") + 200
    garbled = bytearray(data)
    garbled[pickle_at:pickle_at + 64] = bytes(range(64))
    copies = {"truncated": data[: len(data) // 2], "empty": b"", "garbled": bytes(garbled)}
    for name, content in copies.items():
        (folder / f"{name}.pt").write_bytes(content)
    return {name: folder / f"{name}.pt" for name in copies}


def test_damaged_checkpoint_is_named_damaged_not_dangerous(multi30k, checkpoint, tmp_path):
    from fairseq import checkpoint_utils

    from rnnsearch_plugin.checkpoint_safety import DamagedCheckpointError

    copies = damaged_copies(checkpoint, tmp_path)
    for path in copies.values():
        with pytest.raises(DamagedCheckpointError, match=f"the checkpoint {path} is damaged"):
            checkpoint_utils.load_checkpoint_to_cpu(str(path))
    result = run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en",
                 "-t", "fr", "--path", str(copies["truncated"]), "--gen-subset", "test", check=False)
    assert_one_line_error(result, f"the checkpoint {copies['truncated']} is damaged (truncated or corrupted")
    assert "could run code" not in result.stderr


def raise_and_report(error: Exception, monkeypatch, capsys) -> tuple[list, str]:
    """Install the hook as in fairseq-train, then report ``error``: (what reached Python's own
    hook, what was printed)."""
    import sys

    from rnnsearch_plugin import cli_errors

    reached = []
    monkeypatch.setattr(sys, "argv", ["/venv/bin/fairseq-train"])
    monkeypatch.setattr(sys, "excepthook", lambda *report: reached.append(report[1]))
    cli_errors.install()
    try:
        raise error
    except Exception as raised:
        sys.excepthook(type(raised), raised, raised.__traceback__)
    return reached, capsys.readouterr().err


def test_full_traceback_on_request(monkeypatch, capsys):
    """HYDRA_FULL_ERROR=1, as for fairseq-hydra-train, gives a user mistake its traceback back."""
    missing = FileNotFoundError(2, "No such file or directory", "/no/such/data")
    reached, printed = raise_and_report(missing, monkeypatch, capsys)
    assert reached == [] and printed == "fairseq-train: error: No such file or directory: '/no/such/data' (check the data directory and file paths)\n"
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    reached, printed = raise_and_report(missing, monkeypatch, capsys)
    assert reached == [missing] and printed == ""


@pytest.mark.parametrize("error,one_line", [
    (FloatingPointError("gradients are Nan/Inf"), "training diverged"),
    (FloatingPointError("Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering "
                        "the learning rate, using gradient clipping or increasing the batch size."),
     "Minimum loss scale reached (0.0001)"),
    (FloatingPointError("Fatal error: gradients are inconsistent between workers."), None),
    (FileNotFoundError("no file name"), None),
    (pickle.UnpicklingError("invalid load key, 'x'."), None),
])
def test_only_the_users_mistakes_become_one_line(error, one_line, monkeypatch, capsys):
    """fp16's minimum-loss-scale stop is not called a divergence; what is not the user's input
    (workers that disagree, an error without the file it names, a pickle error that names no
    refused code) keeps its traceback."""
    reached, printed = raise_and_report(error, monkeypatch, capsys)
    if one_line is None:
        assert reached == [error] and printed == ""
    else:
        assert reached == [] and one_line in printed and len(printed.splitlines()) == 1
        assert ("diverged" in printed) == str(error).startswith("gradients are Nan/Inf")


@pytest.fixture(scope="module")
def rnnencdec_checkpoint(multi30k, tmp_path_factory) -> Path:
    """An RNNencdec checkpoint after one update: enough to load and generate with."""
    save_dir = tmp_path_factory.mktemp("rnnencdec")
    at = TINY.index("--attention-hidden-size")  # RNNencdec has no alignment model
    run("fairseq-train", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "--task", "translation",
        "-s", "en", "-t", "fr", "--arch", "rnnencdec_small", *TINY[:at], *TINY[at + 2:], "--optimizer", "adam",
        "--max-tokens", "1000", "--max-update", "1", "--disable-validation", "--no-save-optimizer-state",
        "--save-dir", str(save_dir), "--num-workers", "0")
    return save_dir / "checkpoint_last.pt"


def test_alignment_options_on_rnnencdec_stop_in_one_line(multi30k, rnnencdec_checkpoint):
    """--print-alignment and --replace-unk read the attention, which RNNencdec does not have."""
    generated = run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en", "-t",
                    "fr", "--path", str(rnnencdec_checkpoint), "--gen-subset", "test", "--print-alignment", check=False)
    assert_one_line_error(generated, "fairseq-generate: error: RNNencdec has no attention")
    replaced = interactive(multi30k, rnnencdec_checkpoint, "A dog .\n", "--replace-unk", "", check=False)
    assert_one_line_error(replaced, "fairseq-interactive: error: RNNencdec has no attention")


def test_replace_unk_names_the_option_it_needs(multi30k, checkpoint):
    """fairseq computes alignments only with --print-alignment: without it, --replace-unk would
    fail at the first <unk>. fairseq-generate's own check (raw text data) is one line too."""
    replaced = interactive(multi30k, checkpoint, "A dog .\n", "--replace-unk", "", check=False)
    assert_one_line_error(replaced, "--replace-unk copies the source word", "add --print-alignment")
    generated = run("fairseq-generate", str(multi30k / "bin"), "--user-dir", "rnnsearch_plugin", "-s", "en", "-t",
                    "fr", "--path", str(checkpoint), "--replace-unk", "", check=False)
    assert_one_line_error(generated, "fairseq-generate: error: --replace-unk requires a raw text dataset")
