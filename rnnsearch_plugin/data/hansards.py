"""Cleaning and a deterministic split of the Canadian Hansards (36th Parliament, En-Fr).

``cleaning.clean`` with the Hansards' own reason and limits: a pair is dropped, in this order, when
  1. ``empty``: either side is empty or whitespace;
  2. ``not a sentence``: the English side has fewer than 3 words or does not end like a
     sentence (. ! ? ; or a closing quote): headings ("ELECTION OF SPEAKER"), dates, speaker
     lines ("Mr. Charlie Penson:"), procedural notes ("(Motion agreed to)");
  3. ``too long``: either side has more than ``max_words`` words (default 100);
  4. ``extreme ratio``: one side has more than ``max_ratio`` (3) times the words of the other;
  5. ``duplicate``: the exact pair was seen before.
``cleaning.HeldOut`` then orders the unique pairs by the SHA-256 of "english<TAB>french": the
first ``dev_size`` (3,000) form dev, the next ``test_size`` (3,000) test, the rest training; a
training pair whose English or French side also occurs in dev or test is dropped
(``overlaps dev/test``), so no dev/test sentence is seen in training.
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Optional

from .cleaning import Cleaning, HeldOut, Pair, clean

SENTENCE_ENDS = tuple(".!?;\"'»”’")


def not_a_sentence(english: str, french: str) -> Optional[str]:
    return "not a sentence" if len(english.split()) < 3 or not english.endswith(SENTENCE_ENDS) else None


def clean_and_split(
    pairs: Iterable[Pair],
    scratch: Path,
    dev_size: int = 3000,
    test_size: int = 3000,
    max_words: int = 100,
    max_ratio: float = 3.0,
) -> tuple[dict[str, Iterable[Pair]], Counter]:
    """The (English, French) ``pairs`` cleaned and split: {"train", "valid", "test"}, training
    read once as it is written, and what was dropped, by reason (complete once training is read);
    ``scratch``: the folder of the cleaned pairs' temporary file."""
    dropped: Counter = Counter()
    cleaned = clean(pairs, ("en", "fr"), Cleaning(max_words, max_ratio), dropped, not_a_sentence)
    held_out = HeldOut.split(cleaned, dev_size, test_size, dropped, scratch)
    train: Iterator[Pair] = held_out.train()
    return {"train": train, "valid": held_out.valid, "test": held_out.test}, dropped
