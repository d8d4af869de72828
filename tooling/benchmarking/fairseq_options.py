"""The fairseq command lines the benchmark's sections run: the corpus's language pair, the
device, and the Trainer's options shared by every training variant."""

import argparse
from pathlib import Path


def binarized_pair(data: Path | None, program: str) -> tuple[str, str]:
    """The (source, target) languages of a fairseq-binarized folder, from its manifest or its file
    names (``hub.data_pair``); exits with one line when it is not a binarized folder of one pair.
    The load scripts use it too."""
    from rnnsearch_plugin.hub import data_pair

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
    """fairseq's -s/-t: the pair the data was prepared for (``hub.data_pair``)."""
    return ["-s", opts.pair[0], "-t", opts.pair[1]]


def trainer_options(opts: argparse.Namespace) -> list[str]:
    """fairseq-train's options on --data, every training variant's: Adam, clipping, --max-tokens."""
    return [
        str(opts.data),
        "--user-dir",
        "rnnsearch_plugin",
        "--task",
        "translation",
        *pair_options(opts),
        "--optimizer",
        "adam",
        "--lr",
        "0.002",
        "--clip-norm",
        "1.0",
        "--max-tokens",
        str(opts.max_tokens),
        "--seed",
        "1",
        "--num-workers",
        "0",
        "--data-buffer-size",
        "0",
        *device_flags(opts.device),
    ]


def generate_options(opts: argparse.Namespace, checkpoint: Path, beam: int) -> list[str]:
    """fairseq-generate's options on the test set of --data: ``beam``, every hypothesis ``--decode-length`` tokens."""
    length = str(opts.decode_length)
    return [
        *(str(opts.data), "--user-dir", "rnnsearch_plugin", *pair_options(opts), "--gen-subset", "test", "--path", str(checkpoint)),
        *("--beam", str(beam), "--batch-size", str(opts.gen_batch_size), "--min-len", length, "--max-len-a", "0", "--max-len-b", length),
        *("--num-workers", "0"),
    ]
