"""Your own parallel text, any language pair (``prepare_data.py text``): plain files by
fairseq-preprocess's prefix convention, or a tab-separated file of pairs.

    --train PREFIX           PREFIX.SRC and PREFIX.TGT, each gzipped (.gz) or not
    --valid PREFIX           the same; --test PREFIX[,PREFIX...] gives test, test1, ...
    --tsv FILE               one pair a line instead of --train: the source in column 1 and the
                             target in column 2 (--tsv-columns S,T), other columns ignored (as in
                             Tatoeba's and Anki's exports)

The training pairs are cleaned (``cleaning.py``; by default only empty pairs and duplicates are
dropped). Without --valid or --test, dev and test pairs are held out of them by hash
(``cleaning.HeldOut``), ``held_out`` each. Given dev and test sets are kept whole.
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Optional

from .cleaning import Cleaning, HeldOut, Pair, Split, clean
from .sources import ParallelText, Sources, TextFile
from .textio import DataError, stream_lines


def side(prefix: str, lang: str, langs: tuple[str, str], sources: Sources) -> TextFile:
    """The lines of PREFIX.LANG[.gz], recorded in ``sources`` (a folder of that name is refused there)."""
    path = next((path for path in (Path(f"{prefix}.{lang}"), Path(f"{prefix}.{lang}.gz")) if path.exists()), None)
    if path is None:
        raise DataError(f"{prefix}.{lang}[.gz] does not exist: {prefix} needs both sides, {prefix}.{langs[0]} and {prefix}.{langs[1]}")
    sources.record(path)
    return TextFile(path)


def parallel_files(prefix: str, langs: tuple[str, str], sources: Sources) -> ParallelText:
    files = [side(prefix, lang, langs, sources) for lang in langs]
    return ParallelText((str(files[0].path), str(files[1].path)), (files[0], files[1]))


class TsvPairs:
    """The two columns (1-based) of a tab-separated file, read anew at each iteration; a line
    without them is an error naming it."""

    def __init__(self, path: Path, columns: tuple[int, int], sources: Sources) -> None:
        self.path, self.columns = path, columns
        widest = max((len(row) for row in self.rows()), default=2)  # a first reading checks every line
        ignored = [c for c in range(1, widest + 1) if c not in columns]
        sources.record(path, columns={"source": columns[0], "target": columns[1], "ignored": ignored})

    def rows(self) -> Iterator[list[str]]:
        for number, line in enumerate(stream_lines(self.path), 1):
            row = line.split("\t")
            if len(row) < 2:
                raise DataError(f"{self.path} line {number} has no tab: each line must be SOURCE<TAB>TARGET[<TAB>...]")
            if len(row) < max(self.columns):
                raise DataError(f"{self.path} line {number} has {len(row)} columns, but --tsv-columns asks for column {max(self.columns)}")
            yield row

    def __iter__(self) -> Iterator[Pair]:
        return ((row[self.columns[0] - 1], row[self.columns[1] - 1]) for row in self.rows())


DEFAULT_CLEANING = Cleaning()


def own_text(
    sources: Sources,
    langs: tuple[str, str],
    train: Optional[str] = None,
    tsv: Optional[Path] = None,
    tsv_columns: tuple[int, int] = (1, 2),
    valid: Optional[str] = None,
    test: tuple[str, ...] = (),
    cleaning: Cleaning = DEFAULT_CLEANING,
    held_out: int = 1000,
) -> tuple[dict[str, Split], Counter]:
    """{split: (langs, pairs)} and what cleaning dropped, by reason (the module's docstring)."""
    if (train is None) == (tsv is None):
        raise DataError("give the training pairs as --train PREFIX (PREFIX.SRC and PREFIX.TGT) or as --tsv FILE, one of them")
    text = parallel_files(train, langs, sources) if train else TsvPairs(tsv, tsv_columns, sources)  # type: ignore[arg-type]
    dropped: Counter = Counter()
    read = [0]  # the pairs read, counted as cleaning reads them

    def counted() -> Iterator[Pair]:
        for pair in text:
            read[0] += 1
            yield pair

    cleaned = clean(counted(), langs, cleaning, dropped)
    split = HeldOut.split(cleaned, 0 if valid else held_out, 0 if test else held_out, dropped, sources.scratch_folder())
    splits: dict[str, Iterable[Pair]] = {"train": split.train()}
    if not valid:
        splits["valid"] = split.valid
    if not test:
        splits["test"] = split.test
    if valid:
        splits["valid"] = parallel_files(valid, langs, sources)
    for index, prefix in enumerate(test):
        splits[f"test{index or ''}"] = parallel_files(prefix, langs, sources)
    if next(split.train(), None) is None:
        hint = "lower --held-out, or give --valid and --test" if split.cleaned else "check the files and the cleaning options"
        raise DataError(
            f"the training split is empty after cleaning (kept {split.cleaned:,} of {read[0]:,} "
            f"pairs; dropped: {dict(dropped) or 'none'}): {hint}"
        )
    given = {"valid": valid, **{f"test{index or ''}": prefix for index, prefix in enumerate(test)}}
    for name, pairs in splits.items():
        if name != "train" and not any(True for _ in islice(pairs, 1)):
            if name in given:
                option = name.rstrip("0123456789")
                raise DataError(f"the {name} split is empty: {given[name]} holds no pairs; give a --{option} PREFIX whose files hold some")
            raise DataError(f"the {name} split is empty: give --{name} PREFIX, or a --held-out above 0")
    return {name: (langs, pairs) for name, pairs in splits.items()}, dropped
