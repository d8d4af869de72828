"""Cleaning a parallel corpus, and its deterministic held-out split (the Hansards' and any corpus's),
streamed: memory holds a chunk of pairs, one 8-byte hash per kept pair, and the held-out pairs.

A pair is dropped, in this order, when:
  1. ``empty``: either side is empty or whitespace;
  2. a corpus's own reason, if it has one (the Hansards: ``not a sentence``);
  3. ``too long``: either side has more than ``max_words`` words (0: no limit);
  4. ``extreme ratio``: one side has more than ``max_ratio`` times the words of the other (0: no limit);
  5. ``duplicate``: the pair, whitespace collapsed, was seen before (unless duplicates are kept).
Lengths are in each language's own units (``languages.length``: words, or characters for
languages written without spaces). Duplicates are found by the first 8 bytes of the pair's SHA-256
(``Duplicates``): two different pairs share them with a probability of about n^2 / 2^65 in a corpus
of n pairs (1 in 20,000 for 40 million pairs).

The held-out split orders the unique pairs by the SHA-256 of "first<TAB>second" (the corpus's
own order of its languages, so that both directions hold out the same pairs): the first
``dev_size`` form dev, the next ``test_size`` test, the rest training; a training pair that shares
a side with dev or test is dropped (``overlaps dev/test``), so that no held-out sentence is seen
in training. It reads the cleaned pairs twice: once to choose the held-out pairs, once to write
training, from a temporary file that the system removes whatever happens.
"""

import hashlib
import heapq
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Callable, Optional

import numpy as np

from .languages import length

Pair = tuple[str, str]
Split = tuple[tuple[str, str], Iterable[Pair]]  # the languages of the pairs' two sides, and the pairs
CHUNK = 1 << 14  # pairs cleaned at a time
MERGE = 1 << 20  # hashes of recently kept pairs held apart before they join the sorted whole


@dataclass(frozen=True)
class Cleaning:
    """The cleaning of training pairs; the defaults keep every non-empty, unique pair."""

    max_words: int = 0
    max_ratio: float = 0.0
    keep_duplicates: bool = False


def drop_reason(
    pair: Pair, langs: tuple[str, str], cleaning: Cleaning, own_reason: Optional[Callable[[str, str], Optional[str]]]
) -> Optional[str]:
    if not pair[0] or not pair[1]:
        return "empty"
    if own_reason and (reason := own_reason(*pair)):
        return reason
    if not cleaning.max_words and not cleaning.max_ratio:
        return None
    words = [length(side, lang) for side, lang in zip(pair, langs)]
    if cleaning.max_words and max(words) > cleaning.max_words:
        return "too long"
    if cleaning.max_ratio and max(words) > cleaning.max_ratio * min(words):
        return "extreme ratio"
    return None


def digest(pair: Pair) -> bytes:
    """SHA-256 of "first<TAB>second": the held-out order, and (its first 8 bytes) the duplicate key."""
    return hashlib.sha256("\t".join(pair).encode()).digest()


class Duplicates:
    """The keys (8 bytes each) of the pairs kept so far: a sorted array, and the recent ones in a
    smaller sorted array merged into it every ``merge`` keys, so that each chunk costs a search,
    not a sort of everything seen."""

    def __init__(self, merge: int) -> None:
        self.merge = merge
        self.whole = np.empty(0, dtype=np.uint64)
        self.recent = np.empty(0, dtype=np.uint64)

    def first_seen(self, keys: np.ndarray) -> np.ndarray:
        """Whether each of ``keys`` (in corpus order) is seen for the first time; those are kept."""
        values, first = np.unique(keys, return_index=True)
        fresh = ~(contains(self.whole, values) | contains(self.recent, values))
        self.recent = merged(self.recent, values[fresh])
        if len(self.recent) >= self.merge:
            self.whole, self.recent = merged(self.whole, self.recent), self.recent[:0]
        kept = np.zeros(len(keys), dtype=bool)
        kept[first[fresh]] = True
        return kept


def merged(ordered: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sorted arrays ``ordered`` and ``values``, which share no value, as one sorted array (a
    merge: a copy, where a sort of the whole would cost its logarithm again)."""
    return np.insert(ordered, np.searchsorted(ordered, values), values)


def contains(ordered: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in the sorted array ``ordered``."""
    where = np.searchsorted(ordered, values).clip(max=max(len(ordered) - 1, 0))
    return ordered[where] == values if len(ordered) else np.zeros(len(values), dtype=bool)


def clean(
    pairs: Iterable[Pair],
    langs: tuple[str, str],
    cleaning: Cleaning,
    dropped: Counter,
    own_reason: Optional[Callable[[str, str], Optional[str]]] = None,
) -> Iterator[tuple[Pair, bytes]]:
    """The pairs that pass (whitespace collapsed, in corpus order) with their ``digest``; ``dropped``
    counts the others by reason, in the order the reasons first occur."""
    duplicates = None if cleaning.keep_duplicates else Duplicates(MERGE)
    stream = iter(pairs)
    while chunk := [(" ".join(a.split()), " ".join(b.split())) for a, b in islice(stream, CHUNK)]:
        reasons = [drop_reason(pair, langs, cleaning, own_reason) for pair in chunk]
        digests = {index: digest(pair) for index, (pair, reason) in enumerate(zip(chunk, reasons)) if reason is None}
        if duplicates is not None and digests:
            keys = np.frombuffer(b"".join(value[:8] for value in digests.values()), dtype=np.uint64)
            for index, kept in zip(list(digests), duplicates.first_seen(keys)):
                if not kept:
                    reasons[index] = "duplicate"
        for index, (pair, reason) in enumerate(zip(chunk, reasons)):
            if reason:
                dropped[reason] += 1
            else:
                yield pair, digests[index]


@dataclass
class HeldOut:
    """The held-out pairs of a corpus's cleaned pairs and its training pairs, as the module's
    docstring says: ``split`` reads the pairs once, ``train`` reads them again."""

    valid: list[Pair]
    test: list[Pair]
    cleaned: int  # the pairs that passed cleaning
    store: IO[str]  # they, one "first<TAB>second" a line (whitespace collapsed: no tab within a side)
    dropped: Counter
    holds_out: bool  # whether a split is held out at all

    @classmethod
    def split(cls, cleaned: Iterable[tuple[Pair, bytes]], dev_size: int, test_size: int, dropped: Counter, folder: Path) -> "HeldOut":
        """``cleaned`` (``clean``'s pairs and digests) kept in a temporary file in ``folder``; the
        ``dev_size + test_size`` unique pairs of smallest digest held out."""
        size = dev_size + test_size
        largest_first: list[tuple[int, Pair]] = []  # the held-out candidates, their digests negated
        candidates: set[Pair] = set()
        store = tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n", dir=folder)
        count = 0
        for pair, value in cleaned:
            store.write(f"{pair[0]}\t{pair[1]}\n")
            count += 1
            if size and pair not in candidates:
                entry = (-int.from_bytes(value, "big"), pair)
                if len(largest_first) < size:
                    heapq.heappush(largest_first, entry)
                    candidates.add(pair)
                elif entry > largest_first[0]:
                    candidates.discard(heapq.heapreplace(largest_first, entry)[1])
                    candidates.add(pair)
        ordered = [pair for _, pair in sorted(largest_first, reverse=True)]
        return cls(ordered[:dev_size], ordered[dev_size:], count, store, dropped, size > 0)

    def train(self) -> Iterator[Pair]:
        """The cleaned pairs, in corpus order, less the held-out pairs and those sharing a side with
        one (counted as ``overlaps dev/test`` when a split is held out)."""
        held_out_pairs = set(self.valid + self.test)
        held_out = {side for pair in held_out_pairs for side in pair}
        overlaps = 0
        self.store.seek(0)
        for line in self.store:
            pair: Pair = tuple(line.removesuffix("\n").split("\t"))  # type: ignore[assignment]
            if pair in held_out_pairs:
                continue
            if pair[0] in held_out or pair[1] in held_out:
                overlaps += 1
                continue
            yield pair
        if self.holds_out:
            self.dropped["overlaps dev/test"] = overlaps
