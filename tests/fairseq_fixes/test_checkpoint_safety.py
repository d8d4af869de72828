"""Crafted checkpoints never run code, damaged ones are named damaged (``fairseq_fixes/checkpoint_safety.py``)."""

import pickle
from pathlib import Path

import pytest
import torch
from conftest import SHARED_DATA, assert_one_line_error, fairseq_decode, interactive, run


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
    result = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", path),
        "--gen-subset",
        "test",
        check=False,
    )
    assert_one_line_error(result, "refused to load a checkpoint", "system")
    assert_one_line_error(interactive(multi30k, path, "A dog .\n", check=False), "refused to load")
    assert not marker.exists()
    newest_protocol = path.with_name("protocol5.pt")
    torch.save(
        torch.load(checkpoint, weights_only=True) | {"evil": Payload(marker)}, newest_protocol, pickle_protocol=pickle.HIGHEST_PROTOCOL
    )
    assert_one_line_error(interactive(multi30k, newest_protocol, "A dog .\n", check=False), "refused to load")
    assert not marker.exists()


def test_fairseq_alone_with_weights_only_turned_off_runs_the_payload(multi30k, crafted, monkeypatch):
    """The risk docs/behaviour.md names: without ``--user-dir rnnsearch_plugin`` no repair is installed,
    and fairseq's own loading, with torch's weights-only default turned off by the environment, unpickles
    the payload. When this fails, fairseq loads weights-only by itself: update that paragraph."""
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    path, marker = crafted
    run("fairseq-generate", str(multi30k / "bin"), "-s", "en", "-t", "fr", "--path", str(path), "--gen-subset", "test", check=False)
    assert marker.exists()


def test_crafted_checkpoint_is_refused_by_the_python_api_and_averaging(multi30k, crafted, checkpoint, tmp_path, monkeypatch):
    """Even with torch's weights-only default turned off by the environment."""
    from rnnsearch_plugin import RNNSearchModel

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    path, marker = crafted
    with pytest.raises(pickle.UnpicklingError):
        RNNSearchModel.from_pretrained(str(path.parent), checkpoint_file=path.name, data_name_or_path=str(multi30k / "bin"))
    result = run("rnnsearch-average-checkpoints", "--inputs", str(checkpoint), str(path), "--output", str(tmp_path / "avg.pt"), check=False)
    assert_one_line_error(result, "not a loadable fairseq checkpoint")
    assert not marker.exists() and not (tmp_path / "avg.pt").exists()


def damaged_copies(checkpoint: Path, folder: Path) -> dict[str, Path]:
    """The checkpoint cut short (a copy killed half-way), emptied, and with bytes of its
    pickle changed (a disk or transfer error)."""
    data = checkpoint.read_bytes()
    pickle_at = data.index(b"data.pkl") + 200
    garbled = bytearray(data)
    garbled[pickle_at : pickle_at + 64] = bytes(range(64))
    copies = {"truncated": data[: len(data) // 2], "empty": b"", "garbled": bytes(garbled)}
    for name, content in copies.items():
        (folder / f"{name}.pt").write_bytes(content)
    return {name: folder / f"{name}.pt" for name in copies}


def test_damaged_checkpoint_is_named_damaged_not_dangerous(multi30k, checkpoint, tmp_path):
    from fairseq import checkpoint_utils

    from rnnsearch_plugin.fairseq_fixes import checkpoint_safety
    from rnnsearch_plugin.fairseq_fixes.checkpoint_safety import DamagedCheckpointError

    checkpoint_safety.install()
    copies = damaged_copies(checkpoint, tmp_path)
    for path in copies.values():
        with pytest.raises(DamagedCheckpointError, match=f"the checkpoint {path} is damaged"):
            checkpoint_utils.load_checkpoint_to_cpu(str(path))
    result = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", copies["truncated"]),
        "--gen-subset",
        "test",
        check=False,
    )
    assert_one_line_error(result, f"the checkpoint {copies['truncated']} is damaged (truncated or corrupted")
    assert "could run code" not in result.stderr


def test_crafted_checkpoint_is_refused_by_heatmaps_aer_and_evaluate_in_one_line(multi30k, crafted, tmp_path, monkeypatch):
    """Run as a user runs them, even with torch's weights-only default turned off: one line, nothing written."""
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    path, marker = crafted
    model = ["--path", str(path), "--data", str(multi30k / "bin")]
    commands = {
        "rnnsearch-heatmaps": [*model, "--input", str(multi30k / "raw" / "test.en"), "--out", str(tmp_path / "heatmaps")],
        "rnnsearch-aer": [*model, "--gold", str(Path(SHARED_DATA) / "alignment-gold"), "--out", str(tmp_path / "aer")],
        "rnnsearch-evaluate": ["--prepared", str(multi30k), "--system", f"crafted={path}", "--out", str(tmp_path / "evaluate")],
    }
    for command, options in commands.items():
        result = run(command, *options, check=False)
        assert_one_line_error(result, f"{command}: error: refused to load a checkpoint", "system")
        assert "RefusedCheckpointError" not in result.stderr
    assert not marker.exists()
    assert not [file for name in ("heatmaps", "aer", "evaluate") for file in (tmp_path / name).rglob("*") if file.is_file()]
