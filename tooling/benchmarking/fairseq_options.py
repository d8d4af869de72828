"""The fairseq command lines the benchmark's sections run: the corpus's language pair, the
device, and the Trainer's options shared by every training variant, the quickstart's recipe's
(configs/quickstart.yaml, through scripts/recipe.py)."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from recipe import QUICKSTART, load, recipe_options  # noqa: E402

QUICKSTART_BATCH: int = load(QUICKSTART).dataset.max_tokens  # --max-tokens of the recipe: the benchmark's and the GPU check's
# What a timed run of fairseq's Trainer takes from the quickstart's recipe: its optimizer, rate, clipping,
# batches, seed and data loading; not its model, criterion and precision (each variant's), nor how
# long it trains, validates, saves and logs, nor its schedule (fixed, fairseq's default)
TIMED_RUN = (
    "model=null",
    "criterion=null",
    "common.amp=false",
    "lr_scheduler=null",
    "optimization.max_update=null",
    "dataset.validate_interval_updates=null",
    "checkpoint=null",
    "common.log_format=null",
    "common.log_interval=null",
)


def binarized_pair(data: Path | None, program: str) -> tuple[str, str]:
    """The (source, target) languages of a fairseq-binarized folder, from its manifest or its file
    names (``data.manifest.data_pair``); exits with one line when it is not a binarized folder of one pair.
    The load scripts use it too."""
    from rnnsearch_plugin.data.manifest import data_pair

    pair = data_pair(data) if data is not None and data.is_dir() else None
    if pair is None or not all((data / f"dict.{lang}.txt").exists() for lang in pair):  # type: ignore[operator]
        raise SystemExit(
            f"{program}: error: {data} is not a binarized folder of one language pair (the bin/ of scripts/prepare_data.py's --out)"
        )
    return pair


def device_flags(device: str) -> list[str]:
    """fairseq's --cpu where the benchmark runs on the CPU."""
    return ["--cpu"] if device == "cpu" else []


def pair_options(opts: argparse.Namespace) -> list[str]:
    """fairseq's -s/-t: the pair the data was prepared for (``data.manifest.data_pair``)."""
    return ["-s", opts.pair[0], "-t", opts.pair[1]]


def trainer_options(opts: argparse.Namespace) -> list[str]:
    """fairseq-train's options on --data, every training variant's: the quickstart's recipe's
    (``TIMED_RUN``) with --max-tokens."""
    given = ["--max-tokens", str(opts.max_tokens), *device_flags(opts.device)]
    return [str(opts.data), "--user-dir", "rnnsearch_plugin", *pair_options(opts), *recipe_options(QUICKSTART, TIMED_RUN, given)]


def generate_options(opts: argparse.Namespace, checkpoint: Path, beam: int) -> list[str]:
    """fairseq-generate's options on the test set of --data: ``beam``, every hypothesis ``--decode-length`` tokens."""
    length = str(opts.decode_length)
    return [
        *(str(opts.data), "--user-dir", "rnnsearch_plugin", *pair_options(opts), "--gen-subset", "test", "--path", str(checkpoint)),
        *("--beam", str(beam), "--batch-size", str(opts.gen_batch_size), "--min-len", length, "--max-len-a", "0", "--max-len-b", length),
        *("--num-workers", "0"),
    ]
