"""Shared fixtures: tiny models built on toy dictionaries, with weights spread out far enough
from B.1's near-zero start that every term of every equation matters."""
import os
import warnings
from types import SimpleNamespace

import pytest
import torch
from fairseq.data import Dictionary

import rnnsearch_plugin  # noqa: F401  (registers models, installs the batching fix)
from rnnsearch_plugin.model import RNNEncDecConfig, RNNEncDecModel, RNNSearchConfig, RNNSearchModel

warnings.filterwarnings("ignore", category=UserWarning)
SHARED_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


def toy_dictionary(size: int) -> Dictionary:
    dictionary = Dictionary()
    for index in range(size):
        dictionary.add_symbol(f"w{index}")
    return dictionary


def build(kind: str, readout_state: str = "previous", pool: int = 2, seed: int = 0) -> torch.nn.Module:
    """A float64 model of the given kind ("rnnsearch" or "rnnencdec") with spread-out weights."""
    torch.manual_seed(seed)
    model_class, config_class = {
        "rnnsearch": (RNNSearchModel, RNNSearchConfig),
        "rnnencdec": (RNNEncDecModel, RNNEncDecConfig),
    }[kind]
    cfg = config_class(
        encoder_embed_dim=5, encoder_hidden_size=6, decoder_embed_dim=4, decoder_hidden_size=7,
        decoder_out_embed_dim=3, maxout_pool_size=pool, readout_state=readout_state,
    )
    if kind == "rnnsearch":
        cfg.attention_hidden_size = 8
    task = SimpleNamespace(source_dictionary=toy_dictionary(11), target_dictionary=toy_dictionary(13))
    model = model_class.build_model(cfg, task).double().eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.6)
    return model


def pad_batch(sentences: list[list[int]], pad: int, left: bool) -> torch.Tensor:
    width = max(len(s) for s in sentences)
    rows = [([pad] * (width - len(s)) + s) if left else (s + [pad] * (width - len(s))) for s in sentences]
    return torch.tensor(rows)


@pytest.fixture(params=["rnnsearch", "rnnencdec"])
def kind(request) -> str:
    return request.param
