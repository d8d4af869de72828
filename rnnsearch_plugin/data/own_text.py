"""Your own parallel text, any language pair (``prepare_data.py text``): plain files by
fairseq-preprocess's prefix convention, or a tab-separated file of pairs.

    --train PREFIX           PREFIX.SRC and PREFIX.TGT, each gzipped (.gz) or not
    --valid PREFIX           the same; --test PREFIX[,PREFIX...] gives test, test1, ...
    --tsv FILE               one pair a line instead of --train: the source in column 1 and the
                             target in column 2 (--tsv-columns S,T), other columns ignored (as in
                             Tatoeba's and Anki's exports)

The training pairs are cleaned (``cleaning.py``; by default only empty pairs and duplicates are
dropped). Without --valid or --test, dev and test pairs are held out of them by hash
(``cleaning.hash_split``), ``held_out`` each. Given dev and test sets are kept whole.
"""

from collections import Counter
from pathlib import Path
from typing import Optional

from .cleaning import Cleaning, clean, hash_split, sides
from .sources import Sources, aligned
from .textio import DataError, read_lines


def side(prefix: str, lang: str, langs: tuple[str, str], sources: Sources) -> tuple[str, list[str]]:
    """The lines of PREFIX.LANG[.gz], recorded in ``sources`` (a folder of that name is refused there)."""
    path = next((path for path in (Path(f"{prefix}.{lang}"), Path(f"{prefix}.{lang}.gz")) if path.exists()), None)
    if path is None:
        raise DataError(f"{prefix}.{lang}[.gz] does not exist: {prefix} needs both sides, {prefix}.{langs[0]} and {prefix}.{langs[1]}")
    sources.record(path)
    return str(path), read_lines(path)


def parallel_files(prefix: str, langs: tuple[str, str], sources: Sources) -> dict[str, list[str]]:
    return aligned(dict(side(prefix, lang, langs, sources) for lang in langs), list(langs))


def tsv_pairs(path: Path, columns: tuple[int, int], langs: tuple[str, str], sources: Sources) -> dict[str, list[str]]:
    """The two columns (1-based) of a tab-separated file; a line without them is an error."""
    rows = [line.split("\t") for line in read_lines(path)]
    for number, row in enumerate(rows, 1):
        if len(row) < 2:
            raise DataError(f"{path} line {number} has no tab: each line must be SOURCE<TAB>TARGET[<TAB>...]")
        if len(row) < max(columns):
            raise DataError(f"{path} line {number} has {len(row)} columns, but --tsv-columns asks for column {max(columns)}")
    widest = max((len(row) for row in rows), default=2)
    sources.record(
        path, columns={"source": columns[0], "target": columns[1], "ignored": [c for c in range(1, widest + 1) if c not in columns]}
    )
    return {lang: [row[column - 1] for row in rows] for lang, column in zip(langs, columns)}


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
) -> tuple[dict[str, dict[str, list[str]]], Counter]:
    """{split: {language: lines}} and what cleaning dropped, by reason (the module's docstring)."""
    if (train is None) == (tsv is None):
        raise DataError("give the training pairs as --train PREFIX (PREFIX.SRC and PREFIX.TGT) or as --tsv FILE, one of them")
    text = parallel_files(train, langs, sources) if train else tsv_pairs(tsv, tsv_columns, langs, sources)  # type: ignore[arg-type]
    pairs, dropped = clean(text[langs[0]], text[langs[1]], langs, cleaning)
    splits = {
        name: dict(zip(langs, sides(split)))
        for name, split in hash_split(pairs, 0 if valid else held_out, 0 if test else held_out, dropped).items()
    }
    if valid:
        splits["valid"] = parallel_files(valid, langs, sources)
    for index, prefix in enumerate(test):
        splits[f"test{index or ''}"] = parallel_files(prefix, langs, sources)
    if not splits["train"][langs[0]]:
        hint = "lower --held-out, or give --valid and --test" if pairs else "check the files and the cleaning options"
        raise DataError(
            f"the training split is empty after cleaning (kept {len(pairs):,} of {len(text[langs[0]]):,} "
            f"pairs; dropped: {dict(dropped) or 'none'}): {hint}"
        )
    given = {"valid": valid, **{f"test{index or ''}": prefix for index, prefix in enumerate(test)}}
    for name, split in splits.items():
        if name != "train" and not split[langs[0]]:
            if name in given:
                option = name.rstrip("0123456789")
                raise DataError(f"the {name} split is empty: {given[name]} holds no pairs; give a --{option} PREFIX whose files hold some")
            raise DataError(f"the {name} split is empty: give --{name} PREFIX, or a --held-out above 0")
    return splits, dropped
