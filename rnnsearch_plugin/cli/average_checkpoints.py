"""Average the parameters of several fairseq checkpoints, loading them weights-only.

    rnnsearch-average-checkpoints --inputs ckpt1.pt ckpt2.pt ... --output averaged.pt
    rnnsearch-average-checkpoints --inputs CHECKPOINT_DIR --num-update-checkpoints 5 --output averaged.pt

fairseq's scripts/average_checkpoints.py calls ``torch.load`` in a way that fails on
torch >= 2.6 for fairseq checkpoints. This command loads each file with the weights-only
unpickler (``load`` of ``fairseq_fixes/checkpoint_safety.py``, whatever
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` says), so a crafted checkpoint is refused instead of run,
and a damaged one is named as such. The
result keeps the first checkpoint's configuration and is written under a temporary name
and renamed when complete.
"""

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

import torch

from ..fairseq_fixes import checkpoint_safety


def fail(message: str) -> NoReturn:
    sys.exit(f"rnnsearch-average-checkpoints: error: {message}")


def load_weights_only(path: Path) -> dict[str, Any]:
    try:
        return checkpoint_safety.load(path, map_location="cpu")
    except checkpoint_safety.RefusedCheckpointError as error:
        fail(f"{path} is not a loadable fairseq checkpoint ({error.reason})")
    except checkpoint_safety.DamagedCheckpointError as error:
        fail(str(error))


def average(paths: list[Path]) -> dict[str, Any]:
    """The first checkpoint with its "model" replaced by the mean of all models."""
    first = load_weights_only(paths[0])
    total = {name: tensor.double() for name, tensor in first["model"].items()}
    for path in paths[1:]:
        model = load_weights_only(path)["model"]
        if model.keys() != total.keys():
            fail(f"{path} has other parameters than {paths[0]}")
        for name, tensor in model.items():
            total[name] += tensor.double()
    first["model"] = {name: (tensor / len(paths)).to(first["model"][name].dtype) for name, tensor in total.items()}
    first.pop("last_optimizer_state", None)
    return first


def last_update_checkpoints(directory: Path, count: int) -> list[Path]:
    pattern = re.compile(r"checkpoint_\d+_(\d+)\.pt$")
    found = sorted(((int(m[1]), p) for p in directory.iterdir() if (m := pattern.search(p.name))), reverse=True)
    if len(found) < count:
        fail(f"{directory} has {len(found)} checkpoint_E_U.pt files, fewer than {count}")
    return [path for _, path in found[:count]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="rnnsearch-average-checkpoints", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--inputs", nargs="+", type=Path, required=True, help="checkpoint files, or one folder")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--num-update-checkpoints", type=int, help="with a folder: average the last N checkpoint_E_U.pt")
    args = parser.parse_args(argv)
    checkpoint_safety.install()
    paths = args.inputs
    if len(paths) == 1 and paths[0].is_dir():
        if not args.num_update_checkpoints:
            parser.error("--num-update-checkpoints is needed with a folder")
        paths = last_update_checkpoints(paths[0], args.num_update_checkpoints)
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        fail(f"no such checkpoint file(s): {', '.join(missing)}")
    averaged = average(paths)
    temporary = args.output.with_name(args.output.name + ".part")
    torch.save(averaged, temporary)
    os.replace(temporary, args.output)
    print(f"averaged {len(paths)} checkpoints into {args.output}: {', '.join(map(str, paths))}")


if __name__ == "__main__":
    main()
