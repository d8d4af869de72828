"""Statistical word aligners beside RNNsearch's attention (--aligner): eflomal (the default;
Östling & Tiedemann 2016, "Efficient Word Alignment with Markov Chain Monte Carlo"; the package's
defaults: IBM1, HMM and fertility, 3 samplers, NULL prior 0.2) or fast_align (Dyer, Chahuneau &
Smith 2013, "A Simple, Fast, and Effective Reparameterization of IBM Model 2"; its model in numpy,
``tooling/fast_align.py``, with fast_align's -d -o -v: the diagonal, its tension optimised,
variational Bayes) align word-level training pairs that
``scripts/prepare_data.py CORPUS --scheme word --out PREPARED`` wrote (PREPARED/word/train.{src,tgt}:
the pairs the model trains on, Moses-tokenised, after the --max-len filter), in each direction:

    # the alignment gold's links, to score with rnnsearch-aer (Hansards, English-French)
    python tooling/statistical_alignments.py --prepared WORK/hansards --gold ../shared/data/alignment-gold \\
        --out WORK/report/hansards.eflomal [--aligner eflomal|fast_align] [--pairs N] [--threads 1]
    # the training pairs' own links, for guided alignment (prepare_data.py --train-alignments FILE)
    python tooling/statistical_alignments.py --prepared WORK/hansards --training-alignments FILE \\
        [--aligner eflomal|fast_align] [--symmetrisation grow-diag-final-and] [--threads 1]

Either or both in one run; they are two runs of the aligner, as the two align differently written text.

--gold: the first --pairs training pairs (0, the default: all) plus the gold's 37 sentence pairs
(dev.e, dev.f), English the source and French the target whatever the folder's direction, as in
the gold (links "english-french"). The training pairs are brought to the gold's tokenisation (its
SOURCE.md: lowercased, tokenised, French contractions expanded), ``normalise``:
- both languages: lowercased, and every hyphen between two letters or digits split off as a word of
  its own (Moses' aggressive dash splitting: the gold writes "C - 49", "Colombie - Britannique",
  "permettez - moi", "cut - backs");
- French, the contracted articles (``CONTRACTIONS``): du -> de le, des -> de les, au -> à le,
  aux -> à les, always, the indefinite "des" too (the gold: "mobilisé de les appuis", "de les
  années"); and the elided words (``ELISIONS``, Moses splits "l'honneur" into "l' honneur")
  restored: l' -> le (always "le", as the gold writes it before feminine nouns too: "le égalité",
  "le administration", "le équité"), d' -> de, j' -> je, n' -> ne, s' -> se, c' -> ce, qu' -> que,
  jusqu' -> jusque, lorsqu' -> lorsque (all in the gold: "de une", "je ai", "ne empiète", "se
  interroger", "ce est", "que il", "jusque ici", "lorsque le homme"), and by the same rule, though
  the gold's 37 sentences hold none, m' -> me, t' -> te, puisqu' -> puisque, quoiqu' -> quoique,
  quelqu' -> quelque, presqu' -> presque, and s' before il or ils -> si ("s'il" is "si il").
  "aujourd' hui" stays two words, as in the gold. Left as they are: auquel, duquel and the like
  (not in the gold), English "'s" and "n't" (Moses splits them; the gold holds none).
The gold's sentences pass through ``normalise`` unchanged but for case; they are appended
lowercased (which moves no word), so their links count words exactly as the gold does. Written to
OUT, the gold's lines only (Pharaoh "i-j", 0-based, the English word first), ALIGNER the --aligner:
  ALIGNER.forward, ALIGNER.reverse   each direction's links (both aligners write them in
                                     source-target order; forward links each French word to at
                                     most one English word, reverse each English word to at most
                                     one French word)
  ALIGNER.intersect, ALIGNER.union, ALIGNER.grow-diag-final-and
                                     the two symmetrised (rnnsearch_plugin.analysis.links)
  ALIGNER.json                       the pairs, the aligner ("aligner"), its settings ("settings"),
                                     eflomal's version ("eflomal", eflomal only) and each step's wall
                                     time ("seconds") and processor time ("cpu_seconds", eflomal's
                                     program included)
``rnnsearch-aer --alignments OUT/ALIGNER.NAME --gold GOLD`` scores each file.

--training-alignments FILE: every training pair as prepared (any language pair, its own tokens,
lowercased by either aligner only to count words alike), in the folder's direction (manifest.json:
source_lang, target_lang): FILE holds, line for line with PREPARED/word/train.{src,tgt}, the
--symmetrisation of the two directions (or one direction's links alone: forward, reverse), "i-j"
with i the source and j the target word, 0-based; FILE.json the same report as ALIGNER.json.

eflomal is sampled, without a seed: a rerun gives slightly different links; it needs the package
(pip install '.[results]'), and one eflomal run per direction needed, each on --threads OpenMP
threads (default 1). fast_align here is deterministic, needs numpy only and runs on one thread.
"""

import argparse
import json
import os
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fast_align import SETTINGS as FAST_ALIGN  # noqa: E402  (beside this script)
from fast_align import run_fast_align  # noqa: E402

from rnnsearch_plugin.analysis.links import SYMMETRISATIONS, Link, parse_pharaoh_line, pharaoh_line  # noqa: E402
from rnnsearch_plugin.data.textio import DataError, read_lines, write_atomic  # noqa: E402
from rnnsearch_plugin.data.word_links import ALIGNER as EFLOMAL  # noqa: E402
from rnnsearch_plugin.data.word_links import run_eflomal  # noqa: E402

CONTRACTIONS = {"du": "de le", "des": "de les", "au": "à le", "aux": "à les"}
ELISIONS = {
    "l'": "le",
    "d'": "de",
    "j'": "je",
    "m'": "me",
    "t'": "te",
    "n'": "ne",
    "s'": "se",
    "c'": "ce",
    "qu'": "que",
    "jusqu'": "jusque",
    "lorsqu'": "lorsque",
    "puisqu'": "puisque",
    "quoiqu'": "quoique",
    "quelqu'": "quelque",
    "presqu'": "presque",
}
SI = ("il", "ils")  # s' before these is "si", not "se"
HYPHEN = re.compile(r"(?<=[^\W_])-(?=[^\W_])")  # Moses' aggressive dash splitting: a hyphen between letters or digits
GOLD_FILES = {"en": "dev.e", "fr": "dev.f"}  # the gold's languages, English the source
DIRECTIONS = ("forward", "reverse")
OUTPUTS = (*DIRECTIONS, *SYMMETRISATIONS)  # what --gold writes and --symmetrisation chooses from
PREPARE = "python scripts/prepare_data.py CORPUS --scheme word --out FOLDER"


@dataclass(frozen=True)
class Aligner:
    """A statistical aligner: ``align(sources, targets, direction, path)`` (``run_eflomal``'s
    contract), its settings as the report records them, the installed package whose version the
    report records (None: this repository's own code), and whether --threads applies to it."""

    align: Callable[[list[str], list[str], str, Path], None]
    settings: dict
    package: str | None
    threaded: bool


ALIGNERS = {
    "eflomal": Aligner(run_eflomal, EFLOMAL, package="eflomal", threaded=True),
    "fast_align": Aligner(run_fast_align, asdict(FAST_ALIGN), package=None, threaded=False),
}


def normalise(line: str, lang: str) -> str:
    """A Moses-tokenised line in the gold's tokenisation: lowercased, hyphens split off, French
    contractions and elisions expanded (the module's docstring says which and why)."""
    words = HYPHEN.sub(" - ", line.lower()).split()
    if lang != "fr":
        return " ".join(words)
    expanded = []
    for word, following in zip(words, [*words[1:], ""]):
        if word == "s'" and following in SI:
            expanded.append("si")
        else:
            expanded.append(CONTRACTIONS.get(word) or ELISIONS.get(word, word))
    return " ".join(expanded)


def prepared_pair(prepared: Path) -> tuple[str, str]:
    """(source, target) of a folder prepare_data.py finished (its manifest.json)."""
    manifest = prepared / "manifest.json"
    if not manifest.is_file():
        raise DataError(f"{manifest} does not exist: prepare the corpus first ({PREPARE}), and give FOLDER as --prepared")
    entries = json.loads(manifest.read_text())
    if entries.get("scheme") != "word":
        raise DataError(f"{prepared} is prepared with the {entries.get('scheme')} scheme: word links need --scheme word")
    return entries["source_lang"], entries["target_lang"]


def training_pairs(prepared: Path, langs: Iterable[str], pairs: int = 0) -> dict[str, list[str]]:
    """{lang: the first ``pairs`` (0: all) training sentences of PREPARED/word/train.LANG}."""
    text = {}
    for lang in langs:
        path = prepared / "word" / f"train.{lang}"
        if not path.is_file():
            raise DataError(f"{path} does not exist: prepare the corpus ({PREPARE}) and give FOLDER as --prepared")
        with open(path, encoding="utf-8") as handle:
            text[lang] = [line.rstrip("\n") for line in islice(handle, pairs or None)]
    if len({len(lines) for lines in text.values()}) != 1:
        raise DataError(
            f"{prepared / 'word'} holds training files of {' and '.join(str(len(t)) for t in text.values())} "
            "lines: prepare the folder again"
        )
    return text


def gold_pairs(gold: Path) -> dict[str, list[str]]:
    """{lang: the gold's sentences, lowercased}, English (dev.e) and French (dev.f)."""
    paths = {lang: gold / name for lang, name in GOLD_FILES.items()}
    missing = [str(path) for path in paths.values() if not path.is_file()]
    if missing:
        raise DataError(
            f"no alignment gold: {', '.join(missing)} missing; give --gold the folder holding dev.e and "
            "dev.f (../shared/data/alignment-gold)"
        )
    text = {lang: [" ".join(line.lower().split()) for line in read_lines(path)] for lang, path in paths.items()}
    if len(text["en"]) != len(text["fr"]) or not text["en"]:
        raise DataError(
            f"{gold}: dev.e has {len(text['en'])} lines and dev.f {len(text['fr'])}: "
            "give a gold standard with one line per sentence pair in each"
        )
    return text


class Clock:
    """The wall time and the processor time (this process's and its children's, eflomal's program)
    of each named step, in seconds: on a busy machine the first grows, the second does not."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}
        self.start = os.times()

    def lap(self, step: str) -> None:
        now = os.times()
        self.seconds[step] = round(now.elapsed - self.start.elapsed, 2)
        self.cpu_seconds[step] = round(sum(now[:4]) - sum(self.start[:4]), 2)
        self.start = now


def aligned(aligner: str, sources: list[str], targets: list[str], directions: Iterable[str], folder: Path, clock: Clock) -> dict[str, Path]:
    """{direction: FOLDER/direction}, the aligner's links of every pair in that direction, in
    source-target order ("reverse" links each source word to at most one target word)."""
    files = {}
    for direction in directions:
        files[direction] = folder / direction
        ALIGNERS[aligner].align(sources, targets, direction, files[direction])
        clock.lap(f"align {direction}")
    return files


def parsed(lines: Iterable[str], sources: list[str], targets: list[str], path: Path, first: int = 1) -> Iterator[set[Link]]:
    """The links of each line, checked within its pair; ``first``: the line number of the first
    (in an error's file:line)."""
    for number, (line, source, target) in enumerate(zip(lines, sources, targets, strict=True), first):
        yield {link for link, _ in parse_pharaoh_line(line, f"{path}:{number}", len(source.split()), len(target.split()))}


def combined(name: str, links: dict[str, Iterable[set[Link]]], sources: list[str], targets: list[str]) -> Iterator[str]:
    """Pharaoh lines of ``name``: one direction's links, or the two symmetrised (``SYMMETRISATIONS``)."""
    if name in DIRECTIONS:
        yield from map(pharaoh_line, links[name])
        return
    for forward, reverse, source, target in zip(links["forward"], links["reverse"], sources, targets, strict=True):
        yield pharaoh_line(SYMMETRISATIONS[name](forward, reverse, len(source.split()), len(target.split())))


def report(aligner: str, clock: Clock, threads: int, **entries: object) -> dict:
    """What ALIGNER.json and FILE.json record: the aligner, its package's version (eflomal's) and its
    settings among them."""
    package = ALIGNERS[aligner].package
    return {
        **entries,
        "aligner": aligner,
        **({package: version(package)} if package else {}),
        "settings": ALIGNERS[aligner].settings,
        "threads": threads,
        "seconds": clock.seconds,
        "cpu_seconds": clock.cpu_seconds,
    }


def gold_alignments(prepared: Path, gold_folder: Path, out: Path, pairs: int, threads: int, aligner: str) -> dict:
    """OUT/ALIGNER.* (the module's docstring); returns what ALIGNER.json records."""
    clock = Clock()
    gold = gold_pairs(gold_folder)
    train = training_pairs(prepared, GOLD_FILES, pairs)
    corpus = {lang: [normalise(line, lang) for line in train[lang]] + gold[lang] for lang in GOLD_FILES}
    clock.lap("read and normalise")
    first = len(train["en"]) + 1  # the gold's first line in the aligner's output
    with tempfile.TemporaryDirectory() as folder:
        files = aligned(aligner, corpus["en"], corpus["fr"], DIRECTIONS, Path(folder), clock)
        links = {
            direction: list(parsed(read_lines(path)[first - 1 :], gold["en"], gold["fr"], path, first)) for direction, path in files.items()
        }
    for name in OUTPUTS:
        write_atomic(out / f"{aligner}.{name}", list(combined(name, links, gold["en"], gold["fr"])))
    clock.lap("symmetrise")
    return report(
        aligner,
        clock,
        threads,
        training_pairs=len(train["en"]),
        gold_pairs=len(gold["en"]),
        source="en",
        target="fr",
        training_data=str(prepared / "word" / "train.{en,fr}"),
    )


def training_alignments(prepared: Path, path: Path, symmetrisation: str, threads: int, aligner: str) -> dict:
    """FILE: the --symmetrisation of every prepared training pair (the module's docstring);
    returns what FILE.json records."""
    clock = Clock()
    langs = prepared_pair(prepared)
    sources, targets = training_pairs(prepared, langs).values()
    clock.lap("read")
    with tempfile.TemporaryDirectory() as folder:
        directions = [symmetrisation] if symmetrisation in DIRECTIONS else DIRECTIONS
        files = aligned(aligner, sources, targets, directions, Path(folder), clock)
        handles = {direction: open(file, encoding="utf-8") for direction, file in files.items()}
        try:
            links = {direction: parsed(handle, sources, targets, files[direction]) for direction, handle in handles.items()}
            lines = list(combined(symmetrisation, links, sources, targets))
        finally:
            for handle in handles.values():
                handle.close()
    write_atomic(path, lines)
    clock.lap("write" if symmetrisation in DIRECTIONS else "symmetrise")
    return report(
        aligner,
        clock,
        threads,
        training_pairs=len(lines),
        source=langs[0],
        target=langs[1],
        training_data=str(prepared / "word" / f"train.{{{langs[0]},{langs[1]}}}"),
        symmetrisation=symmetrisation,
        links=sum(line.count("-") for line in lines),
    )


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prepared", type=Path, required=True, help="a folder prepare_data.py prepared with --scheme word (its --out)")
    parser.add_argument("--gold", type=Path, help="the alignment gold's folder (dev.e, dev.f): align it, with --out")
    parser.add_argument("--aligner", choices=ALIGNERS, default="eflomal", help="the statistical aligner (default: eflomal)")
    parser.add_argument("--out", type=Path, help="folder for the gold's ALIGNER.* (created)")
    parser.add_argument("--pairs", type=int, default=0, help="--gold: the first N training pairs beside the gold's (0: all)")
    parser.add_argument(
        "--training-alignments",
        type=Path,
        metavar="FILE",
        help="write every prepared training pair's links here (and the report to FILE.json)",
    )
    parser.add_argument(
        "--symmetrisation",
        choices=OUTPUTS,
        default="grow-diag-final-and",
        help="--training-alignments: the two directions' combination, or one direction alone",
    )
    parser.add_argument("--threads", type=int, default=1, help="eflomal's OpenMP threads (fast_align runs on one)")
    args = parser.parse_args()
    if not (args.gold or args.training_alignments):
        parser.error("give --gold GOLD --out OUT (the gold's links), --training-alignments FILE (the training pairs'), or both")
    if bool(args.gold) != bool(args.out):
        parser.error("--gold and --out go together: the gold's links are written to OUT")
    if args.pairs < 0 or args.threads < 1:
        parser.error("--pairs must be 0 or more and --threads 1 or more")
    if args.threads != 1 and not ALIGNERS[args.aligner].threaded:
        parser.error(f"--threads is eflomal's: {args.aligner} runs on one thread")
    return args


def main() -> None:
    args = arguments()
    package = ALIGNERS[args.aligner].package
    if package:
        try:
            version(package)
        except PackageNotFoundError:
            sys.exit(
                f"statistical_alignments.py: error: {package} is not installed: pip install '.[results]' (scripts/setup.sh installs it)"
            )
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # read by each eflomal program started
    try:
        if args.gold:
            entries = gold_alignments(args.prepared, args.gold, args.out, args.pairs, args.threads, args.aligner)
            written(args.out / f"{args.aligner}.json", entries, f"the gold's links in {args.out}/{args.aligner}.*")
        if args.training_alignments:
            path = args.training_alignments
            entries = training_alignments(args.prepared, path, args.symmetrisation, args.threads, args.aligner)
            written(path.with_name(path.name + ".json"), entries, f"their links in {path}")
    except DataError as error:
        sys.exit(f"statistical_alignments.py: error: {error}")


def written(path: Path, entries: dict, what: str) -> None:
    """Write the report ``entries`` to ``path`` and say so."""
    path.write_text(json.dumps(entries, indent=1) + "\n")
    print(f"| {entries['aligner']} aligned {entries['training_pairs']:,} training pairs, {what} (seconds: {entries['seconds']})")


if __name__ == "__main__":
    main()
