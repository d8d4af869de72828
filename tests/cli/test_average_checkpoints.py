"""rnnsearch-average-checkpoints on real checkpoints (crafted and damaged ones: fairseq_fixes/test_checkpoint_safety.py)."""

import torch
from conftest import run


def test_averaging_real_checkpoints(checkpoint, tmp_path):
    state = torch.load(checkpoint, weights_only=True)
    shifted = dict(state, model={k: v + 1.0 for k, v in state["model"].items()})
    other = tmp_path / "shifted.pt"
    torch.save(shifted, other)
    run("rnnsearch-average-checkpoints", "--inputs", str(checkpoint), str(other), "--output", str(tmp_path / "avg.pt"))
    averaged = torch.load(tmp_path / "avg.pt", weights_only=True)["model"]
    for name, tensor in state["model"].items():
        torch.testing.assert_close(averaged[name], tensor + 0.5)
