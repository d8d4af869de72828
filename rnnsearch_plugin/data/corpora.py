"""The corpora: where their raw files come from and how they become raw splits.

Each reader returns ``{split: (english lines, french lines)}`` with fairseq's split names
(train, valid, test, test1, ...) and a count of what it dropped, by reason. Files come
from ``local_dir`` when given (nothing is ever written there), else from the official
location, downloaded once into ``cache``.
"""
import os
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Callable, Optional

from .hansards import clean_and_split
from .textio import DataError, read_parallel

Splits = dict[str, tuple[list[str], list[str]]]
MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}.gz"
MULTI30K_SPLITS = {"train": "train", "valid": "val", "test": "test_2016_flickr", "test1": "test_2017_flickr"}
HANSARDS_FILES = ("hansard.36.1.house", "hansard.36.2.house")
WMT14_SPLITS = {"valid": ("newstest2012", "newstest2013"), "test": ("newstest2014",)}


def locate(name: str, local_dir: Optional[Path], cache: Path, url: Optional[str]) -> Path:
    """``name`` (e.g. 'train.en') or ``name.gz`` in ``local_dir``, else downloaded from ``url``."""
    if local_dir is not None:
        for candidate in (local_dir / f"{name}.gz", local_dir / name):
            if candidate.exists():
                return candidate
        raise DataError(f"{name}[.gz] is not in {local_dir}; point --local-dir at the corpus's raw files")
    if url is None:
        raise DataError(f"{name} has no public download location: give its folder with --local-dir")
    target = cache / f"{name}.gz"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        print(f"| downloading {url}", flush=True)
        try:
            urllib.request.urlretrieve(url, f"{target}.part")
        except OSError as error:
            raise DataError(f"downloading {url} failed ({error}); download it yourself and use --local-dir") from None
        os.replace(f"{target}.part", target)
    return target


def pair(stem: str, local_dir: Optional[Path], cache: Path, url: Optional[str] = None) -> tuple[list[str], list[str]]:
    paths = [locate(f"{stem}.{lang}", local_dir, cache, url and url.format(name=f"{stem}.{lang}")) for lang in ("en", "fr")]
    return read_parallel(*paths)


def multi30k(local_dir: Optional[Path], cache: Path) -> tuple[Splits, Counter]:
    """Multi30k task 1, En-Fr: train (29,000), valid = val (1,014), test = test_2016_flickr,
    test1 = test_2017_flickr (1,000 each)."""
    return {split: pair(stem, local_dir, cache, MULTI30K_URL) for split, stem in MULTI30K_SPLITS.items()}, Counter()


def hansards(local_dir: Optional[Path], cache: Path, held_out: int = 3000) -> tuple[Splits, Counter]:
    """The 36th Parliament's House debates, cleaned and split by ``hansards.clean_and_split``
    into ``held_out`` dev and ``held_out`` test pairs and the rest for training."""
    english, french = [], []
    for stem in HANSARDS_FILES:
        en, fr = pair(stem, local_dir, cache)
        english += en
        french += fr
    split = clean_and_split(english, french, dev_size=held_out, test_size=held_out)
    return split.splits, split.dropped


def wmt14(local_dir: Optional[Path], cache: Path) -> tuple[Splits, Counter]:
    """WMT'14 En-Fr as in Section 4.1: valid = newstest2012 + newstest2013, test = newstest2014,
    train = train.{en,fr} of ``local_dir`` (the WMT'14 parallel corpora, or the 348M-word
    selected bitext, concatenated and line-aligned)."""
    splits: Splits = {"train": pair("train", local_dir, cache)}
    for split, stems in WMT14_SPLITS.items():
        pairs = [pair(stem, local_dir, cache) for stem in stems]
        splits[split] = ([l for en, _ in pairs for l in en], [l for _, fr in pairs for l in fr])
    return splits, Counter()


CORPORA: dict[str, Callable[..., tuple[Splits, Counter]]] = {
    "multi30k": multi30k, "hansards": hansards, "wmt14": wmt14,
}
