"""Cleaning a parallel corpus, and its deterministic held-out split (the Hansards' and any corpus's).

A pair is dropped, in this order, when:
  1. ``empty``: either side is empty or whitespace;
  2. a corpus's own reason, if it has one (the Hansards: ``not a sentence``);
  3. ``too long``: either side has more than ``max_words`` words (0: no limit);
  4. ``extreme ratio``: one side has more than ``max_ratio`` times the words of the other (0: no limit);
  5. ``duplicate``: the pair, whitespace collapsed, was seen before (unless duplicates are kept).
Lengths are in each language's own units (``languages.length``: words, or characters for
languages written without spaces).

The held-out split orders the unique pairs by the SHA-256 of "first<TAB>second" (the corpus's
own order of its languages, so that both directions hold out the same pairs): the first
``dev_size`` form dev, the next ``test_size`` test, the rest training; a training pair that shares
a side with dev or test is dropped (``overlaps dev/test``), so that no held-out sentence is seen
in training.
"""

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional

from .languages import length

Pair = tuple[str, str]


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
    words = [length(side, lang) for side, lang in zip(pair, langs)]
    if cleaning.max_words and max(words) > cleaning.max_words:
        return "too long"
    if cleaning.max_ratio and max(words) > cleaning.max_ratio * min(words):
        return "extreme ratio"
    return None


def clean(
    first: list[str],
    second: list[str],
    langs: tuple[str, str],
    cleaning: Cleaning,
    own_reason: Optional[Callable[[str, str], Optional[str]]] = None,
) -> tuple[list[Pair], Counter]:
    """The pairs that pass (whitespace collapsed, in corpus order) and what was dropped, by reason."""
    dropped: Counter = Counter()
    kept: list[Pair] = []
    seen: set[Pair] = set()
    for a, b in zip(first, second):
        pair = (" ".join(a.split()), " ".join(b.split()))
        reason = drop_reason(pair, langs, cleaning, own_reason)
        if reason is None and pair in seen and not cleaning.keep_duplicates:
            reason = "duplicate"
        if reason:
            dropped[reason] += 1
        else:
            kept.append(pair)
            seen.add(pair)
    return kept, dropped


def hash_split(pairs: list[Pair], dev_size: int, test_size: int, dropped: Counter) -> dict[str, list[Pair]]:
    """{"train", "valid", "test"} as the module's docstring says; a size of 0 holds out no such
    split (it is given otherwise). Training keeps the corpus order; ``dropped`` counts the overlaps."""
    unique = list(dict.fromkeys(pairs))
    ordered = sorted(unique, key=lambda pair: hashlib.sha256("\t".join(pair).encode()).digest())
    dev, test = ordered[:dev_size], ordered[dev_size : dev_size + test_size]
    held_out_pairs = set(dev + test)
    held_out = {side for pair in held_out_pairs for side in pair}
    train = [pair for pair in pairs if pair not in held_out_pairs]
    kept = [pair for pair in train if pair[0] not in held_out and pair[1] not in held_out]
    if dev_size or test_size:
        dropped["overlaps dev/test"] = len(train) - len(kept)
    return {"train": kept, **({"valid": dev} if dev_size else {}), **({"test": test} if test_size else {})}


def sides(pairs: list[Pair]) -> tuple[list[str], list[str]]:
    return [a for a, _ in pairs], [b for _, b in pairs]
