"""Evaluate trained systems on a prepared test set as the paper does (Section 5, Table 1,
Figure 2, Table 2, Appendix C).

    rnnsearch-evaluate --prepared work/multi30k_spm --split test \\
        --system RNNsearch=checkpoints/rnnsearch/checkpoint_best.pt \\
        --system RNNencdec=checkpoints/rnnencdec/checkpoint_best.pt \\
        [--generated RNNsearch=test.out] [--train-log RNNsearch=train.log] --beam 5 --out report/
        [--max-len-a A --max-len-b B]     (fairseq-generate's cap on the length of every output)

For every system: translate the split's raw source with beam search (or reuse a fairseq-generate
output with --generated), then write to --out
  report.md / report.json   sacreBLEU and chrF2 with their signatures and the paper-style
                            tokenised BLEU (Table 1 "All"); the same on the sentences whose source
                            and reference have no <unk> under the model's dictionaries, translated
                            with <unk> forbidden in the search (Table 1 "No UNK"); Table 2 from the
                            logs; (report.json) each system's --arch, dropouts and readout state
  bleu_by_length.{csv,png,svg}  Figure 2: BLEU per source-length bucket, all systems (BLEU only)
  long_sentences.md         Appendix C: sources of --long words or more, reference and outputs
The pair is the prepared data's (its manifest; a folder whose manifest names none, as the first
versions wrote them, is En->Fr); a checkpoint of another pair is refused in one line. sacreBLEU tokenises for the target
language (zh, ja-mecab, ko-mecab, else 13a; char where MeCab is missing or the language has no
spaces). Lengths are the source language's Moses tokens, words, or characters where it has no spaces.
  translations/NAME.txt, NAME.no_unk.txt  the outputs, in source order
"""

import argparse
import csv
import io
import json
import math
import sys
from pathlib import Path
from typing import Any

from fairseq.utils import safe_getattr
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..analysis import bleu
from ..analysis.generate_output import ScoringError, aligned_hypotheses, read_hypotheses
from ..analysis.heatmap import save_atomic
from ..analysis.markdown import markdown_cell, markdown_table
from ..analysis.training_log import read_training_log
from ..data.languages import DEFAULT_PAIR, length_unit
from ..data.manifest import data_pair
from ..data.textio import DataError, read_lines, write_atomic
from ..hub import USER_ERRORS, RNNSearchHubInterface, load
from ..models.rnnsearch import resolved_dropout


def named(values: list[str], option: str) -> dict[str, Path]:
    pairs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise DataError(f"{option} {value!r}: write NAME=PATH")
        pairs[name] = Path(path)
    return pairs


def no_unk_subset(model: RNNSearchHubInterface, sources: list[str], references: list[str]) -> list[int]:
    """Table 1's "No UNK" sentences: neither the source nor the reference has a token outside
    the model's dictionaries."""
    return [
        i
        for i, (s, r) in enumerate(zip(sources, references))
        if model.src_dict.unk() not in model.encode(s).tolist() and model.tgt_dict.unk() not in model.encode_target(r).tolist()
    ]


SCHEDULE_OPTIONS = {"reduce_lr_on_plateau": ("lr_shrink", "lr_patience")}  # what the results script sets
DROPOUTS = ("encoder_dropout_in", "encoder_dropout_out", "decoder_dropout_in", "decoder_dropout_out")


def model_options(model: RNNSearchHubInterface) -> dict[str, Any]:
    """The options tooling/reproduce_results.sh sets or chooses on the validation sets, as the
    checkpoint's run used them: its architecture, each dropout it has (an unset one is --dropout's),
    its readout state, and the training run's optimizer, learning rate, its schedule, batch
    options where set (B.2's recipe; True = a flag) and seed, e.g.
    {"arch": "rnnsearch_small", "encoder_dropout_in": 0.5, ..., "optimizer": "adam", "lr": "0.003",
    "lr_scheduler": "reduce_lr_on_plateau", "lr_shrink": 0.5, "lr_patience": 0, "seed": 1}.
    Not --amp: loading sets it to the decoding precision; the training log names the training's."""
    cfg = model.cfg.model
    options = {"arch": safe_getattr(cfg, "arch", None) or safe_getattr(cfg, "_name", None)}
    for name in DROPOUTS:
        if name in cfg:  # a Namespace (fairseq's own models) or a DictConfig
            options[name] = resolved_dropout(cfg, name)
    if "readout_state" in cfg:
        options["readout_state"] = str(cfg.readout_state)
    options["optimizer"] = model.cfg.optimizer._name
    options["lr"] = ",".join(str(lr) for lr in model.cfg.optimization.lr)  # fairseq's --lr syntax
    schedule = model.cfg.lr_scheduler
    options["lr_scheduler"] = schedule._name
    options |= {name: schedule[name] for name in SCHEDULE_OPTIONS.get(schedule._name, ())}
    if model.cfg.dataset.batch_size:
        options["batch_size"] = model.cfg.dataset.batch_size
    if model.cfg.optimization.sentence_avg:
        options["sentence_avg"] = True
    options["seed"] = model.cfg.common.seed
    return options


def evaluate_system(
    model: RNNSearchHubInterface, sources: list[str], references: list[str], beam: int, generated: Path | None, target: str, lowercase: bool
) -> dict[str, Any]:
    """One system's row of Table 1: sacreBLEU (tokenised for TARGET, the target language), chrF2 and
    the tokenised BLEU, on every sentence and on the No UNK subset."""
    if generated is not None:
        hypotheses = aligned_hypotheses(read_hypotheses(generated), len(references))
    else:
        hypotheses = model.translate(sources, beam=beam)
    subset = no_unk_subset(model, sources, references)
    constrained = model.translate([sources[i] for i in subset], beam=beam, unkpen=math.inf) if subset else []
    subset_references = [references[i] for i in subset]
    score, signature = bleu.detokenised(hypotheses, references, target)
    chrf, chrf_signature = bleu.chrf(hypotheses, references)
    return {
        "options": model_options(model),
        "hypotheses": hypotheses,
        "no_unk_hypotheses": constrained,
        "no_unk_ids": subset,
        "sacrebleu": score,
        "signature": signature,
        "chrf": chrf,
        "chrf_signature": chrf_signature,
        "tokenised_bleu": bleu.tokenised(hypotheses, references, target, lowercase),
        "no_unk_sentences": len(subset),
        "no_unk_sacrebleu": bleu.detokenised(constrained, subset_references, target)[0] if subset else None,
        "no_unk_chrf": bleu.chrf(constrained, subset_references)[0] if subset else None,
        "no_unk_tokenised_bleu": bleu.tokenised(constrained, subset_references, target, lowercase) if subset else None,
    }


def plot_by_length(rows: dict[str, list[dict]], unit: str, path: Path) -> None:
    """Figure 2: BLEU against source length in UNIT, one line per system, each bucket's number of
    sentences under its name (PNG and SVG)."""
    figure = Figure(figsize=(6, 4))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, buckets in rows.items():
        kept = [b for b in buckets if b["bleu"] is not None]
        axes.plot([f"{b['bucket']}\n({b['sentences']})" for b in kept], [b["bleu"] for b in kept], marker="o", label=name)
    axes.set_xlabel(f"source sentence length in {unit}")
    axes.set_ylabel("BLEU (sacreBLEU)")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    for suffix in ("png", "svg"):
        save_atomic(figure, path.with_suffix(f".{suffix}"), suffix)


def table_notes(results: dict[str, dict], target: str, note: str | None) -> str:
    """The report's line under Table 1: both signatures (one sacreBLEU setting for every system),
    the tokeniser's note (``bleu.sacrebleu_tokenizer``), what the other columns are."""
    first = next(iter(results.values()))
    parts = [f"sacreBLEU signature: `{first['signature']}`; chrF2 signature: `{first['chrf_signature']}`."]
    if note:
        parts.append(f"sacreBLEU: {note}.")
    moses = (
        "Moses tokens, no smoothing (multi-bleu.perl)" if first["tokenised_bleu"] is not None else f"none, Moses does not tokenise {target}"
    )
    parts.append(f"Tokenised BLEU: {moses}.")
    parts.append("No UNK: sentences without <unk> in source or reference, translated with <unk> forbidden in the search.")
    return " ".join(parts)


def write_report(
    out: Path,
    args: argparse.Namespace,
    pair: tuple[str, str],
    note: str | None,
    sources: list[str],
    references: list[str],
    results: dict[str, dict],
    logs: dict[str, Path],
) -> None:
    """The files the module's docstring lists; source lengths (Figure 2, Appendix C) in the source
    language's own units (``bleu.source_length_unit``), PAIR being (source, target) and NOTE the
    target's tokeniser note (``bleu.sacrebleu_tokenizer``)."""
    source, target = pair
    lengths, unit = bleu.source_lengths(sources, source), bleu.source_length_unit(source)
    by_length = {name: bleu.by_length(r["hypotheses"], references, lengths, args.buckets, target) for name, r in results.items()}
    csv_buffer = io.StringIO()
    writer = csv.writer(csv_buffer, lineterminator="\n")
    writer.writerow(["system", "bucket", "sentences", "bleu"])
    for name, rows in by_length.items():
        writer.writerows([name, r["bucket"], r["sentences"], "" if r["bleu"] is None else f"{r['bleu']:.2f}"] for r in rows)
    write_atomic(out / "bleu_by_length.csv", csv_buffer.getvalue().splitlines())
    plot_by_length(by_length, unit, out / "bleu_by_length.png")
    long_ids = [i for i, n in enumerate(lengths) if n >= args.long]
    write_atomic(
        out / "long_sentences.md",
        [
            f"# Sources of {args.long} {length_unit(source)} or more ({len(long_ids)} of {len(sources)}), {args.split}, beam {args.beam}",
            "",
            *markdown_table(
                ["id", "source", "reference", *results],
                [[i, sources[i], references[i], *(r["hypotheses"][i] for r in results.values())] for i in long_ids],
            ),
        ],
    )
    training = {name: read_training_log(path) for name, path in logs.items()}
    lines = [
        f"# {args.prepared.name}, {source}->{target}, split {args.split} ({len(sources)} sentences), beam {args.beam}",
        "",
        "## BLEU and chrF (Table 1)",
        "",
        *markdown_table(
            [
                "system",
                "sacreBLEU",
                "chrF2",
                "tokenised BLEU" + (" (lowercased)" if args.lowercase else ""),
                "No UNK: sentences",
                "No UNK: sacreBLEU",
                "No UNK: chrF2",
                "No UNK: tokenised BLEU",
            ],
            [
                [
                    n,
                    r["sacrebleu"],
                    r["chrf"],
                    r["tokenised_bleu"],
                    r["no_unk_sentences"],
                    r["no_unk_sacrebleu"],
                    r["no_unk_chrf"],
                    r["no_unk_tokenised_bleu"],
                ]
                for n, r in results.items()
            ],
        ),
        "",
        table_notes(results, target, note),
        "",
        f"## BLEU by source length in {unit} (Figure 2, sacreBLEU only)",
        "",
        "![BLEU by length](bleu_by_length.png)",
        "",
        *markdown_table(["bucket", *by_length], [[rows[0]["bucket"], *map(bleu.bucket_cell, rows)] for rows in zip(*by_length.values())]),
        "",
        "Long sentences side by side (Appendix C): [long_sentences.md](long_sentences.md).",
    ]
    if training:
        lines += [
            "",
            "## Training (Table 2)",
            "",
            *markdown_table(
                ["system", "updates", "epochs", "hours", "device", "precision", "train NLL", "dev NLL (best)", "unit"],
                [
                    [n, t["updates"], t["epochs"], t["wall_hours"], t["device"], t["precision"], t["train_nll"], t["dev_nll"], t["unit"]]
                    for n, t in training.items()
                ],
            ),
        ]
    write_atomic(out / "report.md", lines)
    summary = {name: {k: v for k, v in r.items() if not k.endswith("hypotheses")} for name, r in results.items()}
    write_atomic(
        out / "report.json",
        [
            json.dumps(
                {
                    "split": args.split,
                    "beam": args.beam,
                    "source_lang": source,
                    "target_lang": target,
                    "tokenizer_note": note,
                    "length_unit": unit,
                    "systems": summary,
                    "by_length": by_length,
                    "training": training,
                },
                indent=2,
            )
        ],
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rnnsearch-evaluate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prepared", type=Path, required=True, help="the --out folder of scripts/prepare_data.py")
    parser.add_argument("--split", default="test", help="fairseq split name (test, test1, valid)")
    parser.add_argument("--system", action="append", required=True, help="NAME=CHECKPOINT (repeat for each system)")
    parser.add_argument("--generated", action="append", default=[], help="NAME=FAIRSEQ_GENERATE_OUTPUT to reuse")
    parser.add_argument("--train-log", action="append", default=[], help="NAME=FAIRSEQ_TRAIN_LOG for Table 2")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument(
        "--max-len-a", type=float, default=0.0, help="as fairseq-generate's: outputs of at most a x source length + b tokens"
    )
    parser.add_argument("--max-len-b", type=int, default=200, help="as fairseq-generate's (default 200)")
    parser.add_argument(
        "--buckets",
        type=lambda v: [int(x) for x in v.split(",") if x],
        default=[10, 20, 30, 40, 50, 60],
        help="bucket edges of source length (default 10,20,...,60: 0-10, ..., 60+)",
    )
    parser.add_argument(
        "--long", type=int, default=30, help="Appendix C: sources of this many words (characters where the source has no spaces) or more"
    )
    parser.add_argument("--lowercase", action="store_true", help="lowercase the tokenised BLEU")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        systems, generated = named(args.system, "--system"), named(args.generated, "--generated")
        logs = named(args.train_log, "--train-log")
        unknown = (generated.keys() | logs.keys()) - systems.keys()
        if unknown:
            raise DataError(f"{sorted(unknown)} named in --generated/--train-log but not in --system")
        source, target = data_pair(args.prepared / "bin") or DEFAULT_PAIR  # a manifest naming no pair: En->Fr
        note = bleu.sacrebleu_tokenizer(target)[1]
        if note:
            print(f"rnnsearch-evaluate: note: {note}", file=sys.stderr)
        sources = read_lines(args.prepared / "raw" / f"{args.split}.{source}")
        references = read_lines(args.prepared / "raw" / f"{args.split}.{target}")
        results = {}
        for name, checkpoint in systems.items():
            print(f"| {name}: translating {len(sources)} sentences of {args.split} ({source}->{target}, beam {args.beam})", flush=True)
            model = load(checkpoint, args.prepared / "bin", max_len_a=args.max_len_a, max_len_b=args.max_len_b)
            results[name] = evaluate_system(model, sources, references, args.beam, generated.get(name), target, args.lowercase)
            write_atomic(args.out / "translations" / f"{name}.txt", results[name]["hypotheses"])
            write_atomic(args.out / "translations" / f"{name}.no_unk.txt", results[name]["no_unk_hypotheses"])
        write_report(args.out, args, (source, target), note, sources, references, results, logs)
    except (*USER_ERRORS, ScoringError) as error:
        sys.exit(f"rnnsearch-evaluate: error: {error}")
    for name, r in results.items():
        print(
            f"| {name}: sacreBLEU {r['sacrebleu']:.2f}, chrF2 {r['chrf']:.2f}, tokenised BLEU "
            f"{markdown_cell(r['tokenised_bleu'])}, No UNK ({r['no_unk_sentences']} sentences) "
            f"{markdown_cell(r['no_unk_sacrebleu'])}"
        )
    print(f"| wrote {args.out}/report.md")


if __name__ == "__main__":  # python -m rnnsearch_plugin.cli.evaluate: as rnnsearch-evaluate, bar the lines
    from .commands import configure_logging  # matplotlib logged at DEBUG while this module was imported

    configure_logging()
    main()
