"""A blank sentence: one with no visible character, which says nothing and so has the empty
translation (``fairseq_fixes/empty_source.py``). Besides the empty string and whitespace, that is
a sentence made only of separators (spaces, line and paragraph separators), control characters,
format characters (zero-width spaces and joiners, direction marks and overrides, a byte order
mark) and marks with no character to mark (a combining accent alone): the subword model reads
some of these as pieces, from which the model would make a sentence up. The Python API and
rnnsearch-serve (``hub.py``'s ``encode``), fairseq-interactive (``fairseq_fixes/interactive_input.py``)
and rnnsearch-align's input check all ask ``is_blank``.
"""

import unicodedata

INVISIBLE = ("Z", "Cc", "Cf", "M")  # Unicode general categories (or their first letter) that show nothing alone


def is_blank(sentence: str) -> bool:
    """Whether ``sentence`` holds no visible character (the empty string included)."""
    return all(unicodedata.category(character).startswith(INVISIBLE) for character in sentence)
