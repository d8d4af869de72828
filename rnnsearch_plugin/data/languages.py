"""What the data pipeline needs to know about a language, by its code (ISO 639-1 where there is
one, as fairseq's ``-s``/``-t`` and sacremoses use them): whether it separates words with spaces,
and whether Moses tokenisation (sacremoses) knows it."""

from functools import cache

# The paper's direction, English->French: prepare_data.py's default, and the pair of every folder
# whose manifest and fairseq files name none (as the first versions of the pipeline wrote them).
DEFAULT_PAIR = ("en", "fr")

# Written without spaces between words: lengths are counted in characters, and Moses
# tokenisation (which splits on spaces and punctuation) would leave whole sentences as one token.
UNSEGMENTED = frozenset({"zh", "yue", "ja", "th", "lo", "km", "my", "bo"})


@cache
def moses_languages() -> frozenset[str]:
    """The codes sacremoses has nonbreaking prefixes for, less those written without spaces."""
    from sacremoses.corpus import NonbreakingPrefixes

    return frozenset(NonbreakingPrefixes().available_langs.values()) - UNSEGMENTED


def length_unit(lang: str) -> str:
    """ "words", or "characters" for a language written without spaces."""
    return "characters" if lang in UNSEGMENTED else "words"


def length(text: str, lang: str) -> int:
    """A sentence's length in its language's own units: words where the language separates them
    with spaces, else characters (spaces left out)."""
    return len("".join(text.split())) if length_unit(lang) == "characters" else len(text.split())
