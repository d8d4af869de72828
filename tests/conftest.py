"""Shared fixtures and helpers, for the test modules of every folder (tests/ mirrors the package):

- tiny models built on toy dictionaries, with weights spread out far enough from B.1's near-zero
  start that every term of every equation matters, and a batch of them (SOURCES, TARGETS);
- the session's Multi30k slice, a tiny RNNsearch checkpoint trained on it (and its evaluation), an
  RNNencdec one, the Python API on the first;
- fairseq's commands run as a user runs them (``run``, ``generate``, ``interactive``,
  ``train_command``), their common options (``fairseq_train``, ``fairseq_decode``, ``tiny_training``,
  ``sentencepiece``) and what their output holds (``lines_of``, ``losses_by_update``,
  ``assert_one_line_error``, ``assert_same_weights``, ``sacrebleu_cli``)."""

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from fairseq import checkpoint_utils
from fairseq.data import Dictionary

from rnnsearch_plugin import load  # importing the plugin registers the models (load installs its repairs)
from rnnsearch_plugin.data.textio import read_lines
from rnnsearch_plugin.models.attention import ATTENTIONS
from rnnsearch_plugin.models.rnnsearch import RNNEncDecConfig, RNNEncDecModel, RNNSearchConfig, RNNSearchModel

SHARED_DATA = os.environ.get("SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))


def toy_dictionary(size: int) -> Dictionary:
    dictionary = Dictionary()
    for index in range(size):
        dictionary.add_symbol(f"w{index}")
    return dictionary


def initialized(kind: str, vocab: tuple[int, int], attention_hidden_size: int, seed: int = 0, **sizes: object) -> torch.nn.Module:
    """A float32 model of the given kind ("rnnsearch" or "rnnencdec") on toy dictionaries of
    ``vocab`` = (source, target) entries, with the paper's initialisation (B.1), seeded."""
    torch.manual_seed(seed)
    model_class, config_class = {
        "rnnsearch": (RNNSearchModel, RNNSearchConfig),
        "rnnencdec": (RNNEncDecModel, RNNEncDecConfig),
    }[kind]
    cfg = config_class(**sizes)
    if kind == "rnnsearch":
        cfg.attention_hidden_size = attention_hidden_size
    task = SimpleNamespace(source_dictionary=toy_dictionary(vocab[0]), target_dictionary=toy_dictionary(vocab[1]))
    return model_class.build_model(cfg, task)


def build(kind: str, readout_state: str = "previous", pool: int = 2, seed: int = 0, **options: object) -> torch.nn.Module:
    """A float64 model of the given kind ("rnnsearch" or "rnnencdec") with spread-out weights;
    ``options``: more of its configuration (``attention="general"``)."""
    model = (
        initialized(
            kind,
            (11, 13),
            attention_hidden_size=8,
            seed=seed,
            encoder_embed_dim=5,
            encoder_hidden_size=6,
            decoder_embed_dim=4,
            decoder_hidden_size=7,
            decoder_out_embed_dim=3,
            maxout_pool_size=pool,
            readout_state=readout_state,
            **options,
        )
        .double()
        .eval()
    )
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.6)
    return model


SOURCES = [[4, 5, 6, 7, 2], [8, 9, 2], [10, 4, 11, 12, 13, 5, 2]]
TARGETS = [[2, 4, 5, 6, 7, 8], [2, 9, 10], [2, 11, 12, 13, 14, 15, 16, 4]]  # prev_output_tokens


def pad_batch(sentences: list[list[int]], pad: int, left: bool) -> torch.Tensor:
    width = max(len(s) for s in sentences)
    rows = [([pad] * (width - len(s)) + s) if left else (s + [pad] * (width - len(s))) for s in sentences]
    return torch.tensor(rows)


def pytest_addoption(parser) -> None:
    parser.addoption("--device", default="cpu", help="device of the model tests (cuda: tooling/gpu_check.sh); the default is cpu")


@pytest.fixture(scope="session")
def device(request) -> torch.device:
    """The ``--device`` the tests run on."""
    return torch.device(request.config.getoption("--device"))


@pytest.fixture(autouse=True)
def on_device(device):
    """Tensors and models made without a device go to ``--device`` (torch's default device), so
    that the model tests run unchanged on a GPU; on the CPU nothing changes."""
    if device.type == "cpu":
        yield
        return
    torch.set_default_device(device)
    yield
    torch.set_default_device(None)


@pytest.fixture(params=["reference", "cpu"])
def engine(request) -> str:
    """``--engine``: the reference (``models/``) and the CPU engine (``speed/cpu.py``), which the
    model tests run alike (``auto`` is one of them on each device)."""
    return request.param


@pytest.fixture(params=["rnnsearch", "rnnencdec"])
def kind(request) -> str:
    return request.param


VARIANTS = {
    "rnnsearch": {"kind": "rnnsearch"},
    **{f"rnnsearch-{name}": {"kind": "rnnsearch", "attention": name} for name in ATTENTIONS if name != "additive"},
    "rnnencdec": {"kind": "rnnencdec"},
}


@pytest.fixture(params=list(VARIANTS.values()), ids=list(VARIANTS))
def variant(request) -> dict[str, str]:
    """``build``'s arguments for each model and, for RNNsearch, each attention of ``--attention``
    that is not the default: the tests that every attention must pass take this."""
    return request.param


REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TINY = [
    "--encoder-embed-dim",
    "32",
    "--decoder-embed-dim",
    "32",
    "--encoder-hidden-size",
    "48",
    "--decoder-hidden-size",
    "48",
    "--attention-hidden-size",
    "32",
    "--decoder-out-embed-dim",
    "32",
]


def run(*command: str, cwd: Path = REPO, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    program = str(BIN / command[0]) if (BIN / command[0]).exists() else command[0]
    result = subprocess.run([program, *command[1:]], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"{command[0]} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


@contextmanager
def http_mirror(folder: Path, prefix: str) -> Iterator[str]:
    """An HTTP server on this machine serving the files of ``folder`` under ``/prefix``, as a
    mirror of an official host: its URL prefix."""
    handler = functools.partial(QuietHandler, prefix, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/{prefix}"
    finally:
        server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, prefix: str, *args, **kwargs) -> None:
        self.prefix = f"/{prefix}"
        super().__init__(*args, **kwargs)

    def translate_path(self, path: str) -> str:
        return super().translate_path(path.removeprefix(self.prefix))

    def log_message(self, *args) -> None:
        pass


def losses_by_update(log: str) -> dict[int, str]:
    """{update: loss} from fairseq's per-update JSON lines (the loss as fairseq prints it)."""
    records = (json.loads(line.split(" | train_inner | ", 1)[1]) for line in log.splitlines() if " | train_inner | " in line)
    return {int(record["num_updates"]): record["loss"] for record in records}


def run_to_end(command: list[str]) -> str:
    result = run(*command)
    return result.stdout + result.stderr


def fairseq_train(data: Path, *options: str, pair: tuple[str, str] = ("en", "fr")) -> list[str]:
    """The venv's fairseq-train on ``data`` with the plugin, the translation task and the language ``pair``, then ``options``."""
    task = ("--task", "translation", "-s", pair[0], "-t", pair[1])
    return [str(BIN / "fairseq-train"), str(data), "--user-dir", "rnnsearch_plugin", *task, *options]


def fairseq_decode(program: str, data: Path, path: Path | str, *options: str, pair: tuple[str, str] = ("en", "fr")) -> list[str]:
    """fairseq-generate or fairseq-interactive on ``data`` with the plugin, the ``pair`` and the checkpoint(s) ``path``."""
    return [program, str(data), "--user-dir", "rnnsearch_plugin", "-s", pair[0], "-t", pair[1], "--path", str(path), *options]


def tiny_training(save_dir: Path, updates: int, arch: str = "rnnsearch_small") -> list[str]:
    """fairseq-train's options for a few Adam updates of a tiny ``arch``, unvalidated, saved without optimizer state."""
    at = TINY.index("--attention-hidden-size")
    sizes = TINY if arch.startswith("rnnsearch") else TINY[:at] + TINY[at + 2 :]  # RNNencdec has no alignment model
    return [
        *("--arch", arch, *sizes, "--optimizer", "adam", "--max-tokens", "1000", "--max-update", str(updates)),
        *("--disable-validation", "--no-save-optimizer-state", "--save-dir", str(save_dir), "--num-workers", "0"),
    ]


def sentencepiece(multi30k: Path) -> list[str]:
    """fairseq-interactive's options to encode raw input with the session's subword model."""
    return ["--bpe", "sentencepiece", "--sentencepiece-model", str(multi30k / "spm" / "spm.model")]


def generate_command(multi30k: Path, checkpoint: Path, *extra: str) -> list[str]:
    """fairseq-generate on the session's Multi30k: beam 4, batches of 64, subwords removed, then ``extra``."""
    options = ("--beam", "4", "--batch-size", "64", "--remove-bpe", "sentencepiece", *extra)
    return fairseq_decode("fairseq-generate", multi30k / "bin", checkpoint, *options)


def generate(multi30k: Path, checkpoint: Path, *extra: str) -> str:
    """What ``generate_command`` prints."""
    return run(*generate_command(multi30k, checkpoint, *extra)).stdout


def interactive(
    multi30k: Path, checkpoint: Path, stdin: str, *options: str, check: bool = True, command: tuple[str, ...] = ("fairseq-interactive",)
):
    decode = fairseq_decode(command[-1], multi30k / "bin", checkpoint, "--beam", "2", *sentencepiece(multi30k), *options)
    return run(*command[:-1], *decode, stdin=stdin, check=check)


def lines_of(output: str, kind: str) -> dict[str, str]:
    return dict(re.findall(rf"^{kind}-(\d+)\t(.*)$", output, flags=re.M))


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(error_lines) == 1, result.stderr[-2000:]
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


def sacrebleu_cli(reference, hypotheses, *options: str) -> float:
    result = run("sacrebleu", str(reference), "-i", str(hypotheses), "-b", "-w", "4", *options)
    return float(result.stdout.strip())


UPDATES, SAVE_EVERY = 14, 4


def train_command(multi30k, save_dir) -> list[str]:
    """The paper's Adadelta + clipping (its accumulators must survive the restart), dropout
    (its random stream must too), and a checkpoint every SAVE_EVERY updates, mid-epoch."""
    return [
        *fairseq_train(multi30k / "bin"),
        "--arch",
        "rnnsearch_small",
        *TINY,
        "--dropout",
        "0.2",
        "--optimizer",
        "rnnsearch_adadelta",
        "--clip-norm",
        "1.0",
        "--max-tokens",
        "1000",
        "--max-update",
        str(UPDATES),
        "--save-interval-updates",
        str(SAVE_EVERY),
        "--no-epoch-checkpoints",
        "--disable-validation",
        "--save-dir",
        str(save_dir),
        "--num-workers",
        "0",
        "--data-buffer-size",
        "0",
        "--log-format",
        "json",
        "--log-interval",
        "1",
        "--seed",
        "5",
        "--cpu",
    ]


def assert_same_weights(checkpoint, expected_checkpoint) -> None:
    """Every parameter of two fairseq checkpoints equal to 1e-6."""
    actual, expected = (checkpoint_utils.load_checkpoint_to_cpu(str(c))["model"] for c in (checkpoint, expected_checkpoint))
    for name, value in expected.items():
        torch.testing.assert_close(actual[name], value, rtol=0, atol=1e-6, msg=name)


@pytest.fixture(scope="session")
def multi30k(tmp_path_factory) -> Path:
    """Multi30k En->Fr, 3,000 training pairs, full val (1,014 pairs) and tests."""
    out = tmp_path_factory.mktemp("multi30k")
    run(
        sys.executable,
        "scripts/prepare_data.py",
        "multi30k",
        "--scheme",
        "spm",
        "--out",
        str(out),
        "--train-lines",
        "3000",
        "--vocab-size",
        "1000",
        "--local-dir",
        os.path.join(SHARED_DATA, "multi30k"),
    )
    return out


@pytest.fixture(scope="session")
def checkpoint(multi30k, tmp_path_factory) -> Path:
    save_dir = tmp_path_factory.mktemp("checkpoints")
    run(
        *fairseq_train(multi30k / "bin"),
        "--arch",
        "rnnsearch_small",
        *TINY,
        "--dropout",
        "0.1",
        "--optimizer",
        "adam",
        "--lr",
        "0.003",
        "--clip-norm",
        "1.0",
        "--max-tokens",
        "1500",
        "--max-update",
        "300",
        "--save-dir",
        str(save_dir),
        "--no-epoch-checkpoints",
        "--num-workers",
        "0",
        "--data-buffer-size",
        "0",
        "--log-interval",
        "50",
        "--seed",
        "3",
        "--log-file",
        str(save_dir / "train.log"),
    )
    return save_dir / "checkpoint_last.pt"


def evaluate_tiny(multi30k: Path, checkpoint: Path, out: Path, *options: str) -> None:
    """rnnsearch-evaluate of the tiny checkpoint on Multi30k test_2017 into ``out``, with ``options``."""
    system = f"tiny={checkpoint}"
    run("rnnsearch-evaluate", "--prepared", str(multi30k), "--split", "test1", "--system", system, *options, "--out", str(out))


@pytest.fixture(scope="session")
def evaluation(multi30k, checkpoint, tmp_path_factory) -> tuple[Path, dict]:
    """rnnsearch-evaluate's report of the tiny checkpoint on Multi30k test_2017 (beam 3)."""
    out = tmp_path_factory.mktemp("evaluation")
    evaluate_tiny(multi30k, checkpoint, out, "--train-log", f"tiny={checkpoint.parent / 'train.log'}", "--beam", "3", "--long", "15")
    return out, json.loads((out / "report.json").read_text())


@pytest.fixture(scope="session")
def rnnencdec_checkpoint(multi30k, tmp_path_factory) -> Path:
    """An RNNencdec checkpoint after one update: enough to load and generate with."""
    save_dir = tmp_path_factory.mktemp("rnnencdec")
    run(*fairseq_train(multi30k / "bin"), *tiny_training(save_dir, 1, arch="rnnencdec_small"))
    return save_dir / "checkpoint_last.pt"


@pytest.fixture(scope="session")
def fr_en(tmp_path_factory):
    """Multi30k Fr->En (its first 300 lines of each file), the same En->Fr, and a tiny model trained
    Fr->En for 2 updates; both directions share the subword model and dictionaries."""
    folder = tmp_path_factory.mktemp("fr_en")
    local = folder / "multi30k"
    local.mkdir()
    for name in ("train", "val", "test_2016_flickr", "test_2017_flickr"):
        for lang in ("en", "fr"):
            lines = read_lines(Path(SHARED_DATA) / "multi30k" / f"{name}.{lang}.gz")[:300]
            (local / f"{name}.{lang}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    for source, target in (("fr", "en"), ("en", "fr")):
        run(
            sys.executable,
            "scripts/prepare_data.py",
            "multi30k",
            "-s",
            source,
            "-t",
            target,
            "--scheme",
            "spm",
            "--out",
            str(folder / f"{source}_{target}"),
            "--vocab-size",
            "500",
            "--local-dir",
            str(local),
        )
    run(*fairseq_train(folder / "fr_en" / "bin", pair=("fr", "en")), *tiny_training(folder / "ck", 2))
    return folder / "fr_en", folder / "ck" / "checkpoint_last.pt"


@pytest.fixture(scope="session")
def headed(multi30k, checkpoint, tmp_path_factory) -> tuple[Path, str]:
    """The session's checkpoint with a head trained alone for 20 updates by its own objective, and the training log."""
    save_dir = tmp_path_factory.mktemp("headed")
    result = run(
        *fairseq_train(multi30k / "bin"),
        *("--arch", "rnnsearch_small", *TINY, "--finetune-from-model", str(checkpoint)),
        *("--alignment-head", "--alignment-head-size", "16", "--train-alignment-head-only"),
        *("--criterion", "chunked_cross_entropy", "--alignment-likelihood-lambda", "1"),
        *("--optimizer", "adam", "--lr", "0.01", "--max-tokens", "1500", "--max-update", "20", "--log-interval", "5"),
        *("--log-format", "simple", "--disable-validation", "--no-save-optimizer-state", "--num-workers", "0"),
        *("--save-dir", str(save_dir)),
    )
    return save_dir / "checkpoint_last.pt", result.stdout + result.stderr


@pytest.fixture(scope="module")
def hub(multi30k, checkpoint):
    """The Python API on the session's checkpoint, one per test module (tests change its state)."""
    return load(checkpoint, multi30k / "bin")


def pytest_terminal_summary(terminalreporter) -> None:
    """End the run by naming each skipped test and its reason, which says what would run it (a
    command to install what it needs) or why it cannot run here (the processor lacks what it tests)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        terminalreporter.section(f"{len(skipped)} skipped: each, and what would run it")
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            terminalreporter.line(f"{report.nodeid}: {reason.removeprefix('Skipped: ')}")
