"""The tuning trial with the lowest validation loss, for tooling/reproduce_results.sh:

    python tooling/best_trial.py work/results/checkpoints/multi30k/lstm.t1 work/results/checkpoints/multi30k/lstm.t2

prints the folder whose fairseq-train log (FOLDER/train.log) reached the lowest validation loss;
a tie goes to the folder named first (the earlier trial). All the trials must use the same loss
unit (per token or, with --sentence-avg, per sentence).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rnnsearch_plugin.analysis.training_log import read_training_log  # noqa: E402


def best_trial(folders: list[Path]) -> Path:
    losses = {}
    for folder in folders:
        log = folder / "train.log"
        if not log.is_file():
            raise ValueError(f"{log} does not exist: run the trial's stage first")
        training = read_training_log(log)
        if training["dev_nll"] is None:
            raise ValueError(f"{log} has no validation loss: the trial stopped before its first validation")
        losses[folder] = training
    units = {training["unit"] for training in losses.values()}
    if len(units) > 1:
        raise ValueError(f"the trials' losses are in different units ({', '.join(sorted(units))}): compare like with like")
    return min(losses, key=lambda folder: losses[folder]["dev_nll"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", type=Path, nargs="+", help="the trials' --save-dir folders")
    args = parser.parse_args()
    try:
        print(best_trial(args.folders))
    except ValueError as error:
        sys.exit(f"best_trial.py: error: {error}")


if __name__ == "__main__":
    main()
