"""Table 2 (training statistics) from a fairseq-train log (its console output or --log-file).

fairseq logs losses in bits (base 2); they are reported here in nats, the paper's unit:
per sentence when the run used --sentence-avg (Appendix B.2's cost), else per target token.
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..speed.tricks import Tricks

FIELD = re.compile(r"(?:^|\| )(\w+) ([^|]+?)(?= \||$)")
INNER_FIELD = re.compile(r"(\w+)=([^,\s]+)")  # fairseq's per-interval lines: 'loss=6.8, ups=1.2, num_updates=60, wall=50'
DEVICE = re.compile(r"rank\s+\d+: capabilities = .*name = (.+?)\s*$")
ALIGNMENT_LAMBDA = re.compile(r"'alignment_lambda': ([0-9.eE+-]+)")  # in the configuration fairseq-train logs first


def fields(line: str) -> dict[str, str]:
    """'... | train | epoch 003 | loss 3.9 | ...' (console) or 'epoch 003 | loss 3.9 | ...'
    (--log-file) -> {'epoch': '003', 'loss': '3.9', ...}"""
    return {key: value.strip() for key, value in FIELD.findall(line)}


def read_training_log(path: Path) -> dict:
    """Updates, epochs, wall-clock hours, device, precision, and the last training and best
    development negative log-likelihood (nats) of one fairseq-train log, and guided alignment's
    weight (--alignment-lambda, 0 when off). The precision is the one the engine's record in the
    model summary names: a checkpoint reloaded for evaluation runs in float32 unless asked."""
    train, valid, devices, sentence_avg, bfloat16 = [], [], [], False, False
    alignment_lambda: float | None = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if "valid on '" in line and "| loss " in line:
            valid.append(fields(line))
        elif "| train_wall " in line and "| loss " in line:  # the end-of-epoch summary
            train.append(fields(line))
        elif match := DEVICE.search(line):
            devices.append(match[1])
        elif "'sentence_avg': True" in line:
            sentence_avg = True
        elif tricks := Tricks.in_summary(line):  # the CPU engine's choices (CpuDecoder.extra_repr)
            bfloat16 = tricks.bfloat16
        if alignment_lambda is None and (match := ALIGNMENT_LAMBDA.search(line)):
            alignment_lambda = float(match[1])
    if not train:
        raise ValueError(f"{path} has no end-of-epoch training summary: is it the log of a fairseq-train run that finished an epoch?")
    last = train[-1]
    return {
        "updates": int(last["num_updates"]),
        "epochs": int(last["epoch"]),
        "wall_hours": float(last["wall"]) / 3600,
        "device": devices[0] if devices else "cpu",
        "unit": "nats per sentence" if sentence_avg else "nats per target token",
        "precision": "bfloat16 (--amp)" if bfloat16 else "float32",
        "train_nll": float(last.get("nll_loss", last["loss"])) * math.log(2),  # a guided run's loss adds its alignment term
        "dev_nll": min(float(v["loss"]) for v in valid) * math.log(2) if valid else None,
        "alignment_lambda": alignment_lambda or 0.0,  # guided alignment's weight (0: the paper's loss)
    }


@dataclass
class Progress:
    """How far a fairseq-train run has come, from its log lines as they are written: the updates,
    the training wall time (seconds, fairseq's ``wall``, which a resumed run carries on), the
    latest updates per second (fairseq's ``ups`` over the last --log-interval), and the latest and
    best validation losses (bits per token, or per sentence with --sentence-avg)."""

    updates: int = 0
    wall: float = 0.0
    ups: Optional[float] = None
    dev_loss: Optional[float] = None
    best_dev_loss: Optional[float] = None

    def read(self, line: str) -> None:
        """Take what one line of the console or of the --log-file says."""
        if "valid on 'valid'" in line and "| loss " in line:
            self.dev_loss = float(fields(line)["loss"])
            self.best_dev_loss = min(self.dev_loss, self.best_dev_loss or math.inf)
            return
        found = (
            dict(INNER_FIELD.findall(line))
            if "num_updates=" in line
            else (fields(line) if "| train_wall " in line and "| num_updates " in line else {})
        )
        if "num_updates" in found:
            self.updates = int(found["num_updates"])
            self.wall = float(found.get("wall", self.wall))
            self.ups = float(found["ups"]) if "ups" in found else self.ups

    @property
    def rate(self) -> float:
        """Updates per second of the whole run's wall time (validation and saving included)."""
        return self.updates / self.wall if self.wall else 0.0

    @classmethod
    def of_log(cls, path: Path) -> "Progress":
        progress = cls()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            progress.read(line)
        return progress
