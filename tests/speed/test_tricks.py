"""The CPU engine's choices (``speed/tricks.py``), made once when the model is built: which tricks
``--engine-tricks`` names, bfloat16 where ``--amp`` asks for it and the model runs on a CPU that has
bfloat16 arithmetic, and the record the model summary carries for ``analysis/training_log.py``.
That each trick left out gives the reference's numbers: ``tests/models/test_engines.py``."""

import pytest
import torch
from conftest import build

from rnnsearch_plugin.errors import UserInputError
from rnnsearch_plugin.speed import precision
from rnnsearch_plugin.speed.tricks import Tricks


def test_engine_tricks_names_the_tricks_that_stay_on():
    chosen = Tricks.chosen(" tanh-route,beam-reordering ", bfloat16=False)
    assert (chosen.tanh_route, chosen.energies_backward, chosen.beam_reordering) == (True, False, True)
    assert Tricks.chosen("all", bfloat16=False) == Tricks() and not any(vars(Tricks.chosen("none", bfloat16=False)).values())


@pytest.mark.parametrize("spec", ["tanh", "all,none", "all,tanh-route", "tanh_route"])
def test_an_unknown_or_contradictory_engine_tricks_is_refused_in_one_line(spec):
    with pytest.raises(UserInputError) as refused:
        build("rnnsearch", engine="cpu", engine_tricks=spec)
    assert "\n" not in str(refused.value) and "tanh-route, energies-backward, beam-reordering" in str(refused.value)


@pytest.mark.parametrize("cuda,cpu_option,on_cpu", [(False, False, True), (True, False, False), (True, True, True)])
def test_amp_means_bfloat16_where_the_model_runs_on_the_cpu(monkeypatch, cuda, cpu_option, on_cpu):
    """With CUDA, --amp is fairseq's own autocast on the GPU; --cpu keeps the model on the CPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(precision, "bfloat16_supported", lambda: True)
    assert build("rnnsearch", engine="cpu", amp=True, cpu=cpu_option).decoder.tricks.bfloat16 == on_cpu
    assert build("rnnsearch", engine="cpu", amp=False, cpu=cpu_option).decoder.tricks.bfloat16 is False


@pytest.mark.parametrize("bfloat16", [False, True])
def test_the_model_summary_carries_the_engines_choices(bfloat16):
    tricks = Tricks.chosen("energies-backward", bfloat16=bfloat16)
    lines = [line for line in str(build("rnnsearch", engine="cpu", engine_tricks="energies-backward")).splitlines() if "tricks=" in line]
    assert len(lines) == 1 and Tricks.in_summary(lines[0]) == Tricks.chosen("energies-backward", bfloat16=False)
    assert Tricks.in_summary(f"  {tricks.summary()}") == tricks and Tricks.in_summary("(encoder): CpuEncoder(") is None


def test_a_record_with_a_trick_since_removed_is_read_without_it():
    """A run logged before a trick was removed (its field in the record) still reads, with its precision."""
    record = 'tricks={"beam_reordering": true, "bfloat16": true, "energies_backward": true, "step_products": true, "tanh_route": false}'
    assert Tricks.in_summary(record) == Tricks(tanh_route=False, bfloat16=True)
