"""The corpora: where their raw files come from and how they become raw splits.

Each reader takes a ``Sources`` (a local folder, or the official locations) and the language
pair (source, target), and returns ``{split: Split}`` with fairseq's split names (train, valid,
test, test1, ...) and a count of what it dropped, by reason, which fills as the splits are read.
A ``Split`` is the languages of its pairs' two sides and the pairs, read once, one at a time.
``LANGUAGES`` names each named corpus's two languages in its default direction; it serves either
direction.
"""

from collections import Counter
from collections.abc import Iterable
from itertools import chain
from typing import Callable

from .cleaning import Pair, Split
from .hansards import clean_and_split
from .own_text import own_text
from .sources import ParallelText, Remote, Sources
from .textio import DataError

Splits = dict[str, Split]
BOTH = ("en", "fr")  # the named corpora's languages, in the order their pairs give them
LANGUAGES = {"multi30k": ("en", "fr"), "hansards": ("en", "fr"), "wmt14": ("en", "fr")}
MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}.gz"
MULTI30K_SPLITS = {"train": "train", "valid": "val", "test": "test_2016_flickr", "test1": "test_2017_flickr"}
HANSARDS_FILES = ("hansard.36.1.house", "hansard.36.2.house")
HANSARDS_ORIGIN = "https://www.isi.edu/natural-language/download/hansard/"
WMT14_DEV = "https://www.statmt.org/wmt14/dev.tgz"  # plain text dev/newstest201{2,3}.{en,fr}
WMT14_TEST = "https://www.statmt.org/wmt14/test-full.tgz"  # SGML, En-Fr in both directions
WMT14_SPLITS: dict[str, dict[str, dict[str, Remote]]] = {
    "valid": {stem: {lang: Remote(WMT14_DEV, f"dev/{stem}.{lang}") for lang in ("en", "fr")} for stem in ("newstest2012", "newstest2013")},
    "test": {
        "newstest2014": {
            "en": Remote(WMT14_TEST, "test-full/newstest2014-fren-src.en.sgm"),
            "fr": Remote(WMT14_TEST, "test-full/newstest2014-fren-ref.fr.sgm"),
        }
    },
}
SELECTED_BITEXT = "http://www-lium.univ-lemans.fr/~schwenk/cslm_joint_paper/data/bitexts.tgz"
WMT14_TRAIN: dict[str, list[tuple[str, str, str]]] = {  # name, archive URL, member path with {lang}
    "selected": [
        (part, SELECTED_BITEXT, f"bitexts.selected/{part}.{{lang}}.gz")
        for part in ("ep7_pc45", "nc9", "dev08_11", "crawl", "ccb2_pc30", "un2000_pc34")
    ],
    "full": [
        (member.rsplit("/", 1)[-1].removesuffix(".{lang}").removesuffix(".{lang}.gz"), url, member)
        for url, member in (
            ("https://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz", "training/europarl-v7.fr-en.{lang}"),
            ("https://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz", "commoncrawl.fr-en.{lang}"),
            ("https://www.statmt.org/wmt13/training-parallel-un.tgz", "un/undoc.2000.fr-en.{lang}"),
            ("https://www.statmt.org/wmt14/training-parallel-nc-v9.tgz", "training/news-commentary-v9.fr-en.{lang}"),
            ("https://www.statmt.org/wmt10/training-giga-fren.tar", "giga-fren.release2.fixed.{lang}.gz"),
        )
    ],
}


def check_pair(corpus: str, langs: tuple[str, str]) -> None:
    """A named corpus serves its two languages, in either order."""
    own = LANGUAGES[corpus]
    if sorted(langs) != sorted(own):
        raise DataError(
            f"{corpus} is {own[0]}-{own[1]}: --source-lang/--target-lang take {own[0]} and {own[1]}, "
            "in either order (prepare other pairs as the text corpus)"
        )


def concatenate(parts: list[ParallelText]) -> Iterable[Pair]:
    """Parallel parts, one after the other."""
    return chain.from_iterable(parts)


def multi30k(sources: Sources, langs: tuple[str, str]) -> tuple[Splits, Counter]:
    """Multi30k task 1, En-Fr: train (29,000), valid = val (1,014), test = test_2016_flickr,
    test1 = test_2017_flickr (1,000 each), from the official repository's raw files."""
    check_pair("multi30k", langs)
    return {
        split: (BOTH, sources.parallel(stem, {lang: Remote(MULTI30K_URL.format(name=f"{stem}.{lang}")) for lang in BOTH}))
        for split, stem in MULTI30K_SPLITS.items()
    }, Counter()


def hansards(sources: Sources, langs: tuple[str, str], held_out: int = 3000) -> tuple[Splits, Counter]:
    """The 36th Parliament's House debates (hansard.36.{1,2}.house.{en,fr}[.gz], UTF-8,
    line-aligned; the original release is ISI's, see ``HANSARDS_ORIGIN``), cleaned and split
    by ``hansards.clean_and_split`` into ``held_out`` dev and ``held_out`` test pairs and the
    rest for training."""
    check_pair("hansards", langs)
    if sources.local_dir is None:
        raise DataError(
            f"the Hansards are read from a local folder (the aligned release of {HANSARDS_ORIGIN}, "
            "converted to UTF-8 and concatenated, as ../shared/data/hansards): give it with --local-dir"
        )
    text = concatenate([sources.parallel(stem, {"en": None, "fr": None}) for stem in HANSARDS_FILES])
    splits, dropped = clean_and_split(text, sources.scratch_folder(), dev_size=held_out, test_size=held_out)
    return {name: (BOTH, pairs) for name, pairs in splits.items()}, dropped


def wmt14(sources: Sources, langs: tuple[str, str], train: str = "selected") -> tuple[Splits, Counter]:
    """WMT'14 En-Fr as in Section 4.1: valid = newstest2012 + newstest2013 (6,003 pairs),
    test = newstest2014 (3,003), train = the 348M-word selected bitext the paper used
    (``train="selected"``) or the five WMT'14 parallel corpora (``"full"``), concatenated.
    A local folder may hold train.{en,fr} instead of the training archives."""
    check_pair("wmt14", langs)
    splits: Splits = {}
    if sources.local("train.en", "train.en.gz"):
        splits["train"] = (BOTH, sources.parallel("train", {"en": None, "fr": None}))
    else:
        parts = [
            sources.parallel(name, {lang: Remote(url, member.format(lang=lang)) for lang in BOTH})
            for name, url, member in WMT14_TRAIN[train]
        ]
        splits["train"] = (BOTH, concatenate(parts))
    for split, sets in WMT14_SPLITS.items():
        splits[split] = (BOTH, concatenate([sources.parallel(stem, remotes) for stem, remotes in sets.items()]))
    return splits, Counter()


CORPORA: dict[str, Callable[..., tuple[Splits, Counter]]] = {
    "multi30k": multi30k,
    "hansards": hansards,
    "wmt14": wmt14,
    "text": own_text,
}
