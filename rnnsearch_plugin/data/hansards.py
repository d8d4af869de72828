"""Cleaning and a deterministic split of the Canadian Hansards (36th Parliament, En-Fr).

A pair is dropped, in this order, when:
  1. ``empty``: either side is empty or whitespace;
  2. ``not a sentence``: the English side has fewer than 3 words or does not end like a
     sentence (. ! ? ; or a closing quote): headings ("ELECTION OF SPEAKER"), dates, speaker
     lines ("Mr. Charlie Penson:"), procedural notes ("(Motion agreed to)");
  3. ``too long``: either side has more than ``max_words`` words (default 100);
  4. ``extreme ratio``: one side has more than ``max_ratio`` (3) times the words of the other;
  5. ``duplicate``: the exact pair was seen before.
The unique pairs are then ordered by the SHA-256 of "english<TAB>french": the first
``dev_size`` (3,000) form dev, the next ``test_size`` (3,000) test, the rest training; a
training pair whose English or French side also occurs in dev or test is dropped
(``overlaps dev/test``), so no dev/test sentence is seen in training.
"""
import hashlib
from collections import Counter
from dataclasses import dataclass, field

SENTENCE_ENDS = tuple('.!?;"\'»”’')


@dataclass
class HansardsSplit:
    splits: dict[str, tuple[list[str], list[str]]]
    dropped: Counter = field(default_factory=Counter)


def drop_reason(english: str, french: str, max_words: int, max_ratio: float) -> str | None:
    english, french = english.strip(), french.strip()
    if not english or not french:
        return "empty"
    if len(english.split()) < 3 or not english.endswith(SENTENCE_ENDS):
        return "not a sentence"
    words = len(english.split()), len(french.split())
    if max(words) > max_words:
        return "too long"
    if max(words) > max_ratio * min(words):
        return "extreme ratio"
    return None


def clean_and_split(
    english: list[str], french: list[str], dev_size: int = 3000, test_size: int = 3000,
    max_words: int = 100, max_ratio: float = 3.0,
) -> HansardsSplit:
    dropped: Counter = Counter()
    unique: dict[tuple[str, str], None] = {}
    for en, fr in zip(english, french):
        reason = drop_reason(en, fr, max_words, max_ratio)
        pair = (" ".join(en.split()), " ".join(fr.split()))
        if reason is None and pair in unique:
            reason = "duplicate"
        if reason:
            dropped[reason] += 1
        else:
            unique[pair] = None
    ordered = sorted(unique, key=lambda pair: hashlib.sha256("\t".join(pair).encode()).digest())
    dev, test = ordered[:dev_size], ordered[dev_size : dev_size + test_size]
    held_out = {side for pair in dev + test for side in pair}
    train = [pair for pair in ordered[dev_size + test_size :] if pair[0] not in held_out and pair[1] not in held_out]
    dropped["overlaps dev/test"] = len(ordered) - dev_size - test_size - len(train)
    original_order = {pair: index for index, pair in enumerate(unique)}
    train.sort(key=original_order.__getitem__)  # training text keeps the corpus order
    splits = {"train": train, "valid": dev, "test": test}
    return HansardsSplit({name: _sides(pairs) for name, pairs in splits.items()}, dropped)


def _sides(pairs: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    return [english for english, _ in pairs], [french for _, french in pairs]
