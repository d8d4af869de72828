"""Fonts that draw heatmap labels in any script: Latin, Greek, Cyrillic, Arabic, Hebrew, Chinese,
Japanese and Korean.

matplotlib's own font (DejaVu Sans) has no Chinese, Japanese or Korean, so the labels use Google's
Noto fonts as Debian packages them (``scripts/install_fonts.sh``: fonts-noto-core and
fonts-noto-cjk), looked up by file name among the system's fonts (``findSystemFonts``: fontconfig
and the usual folders) and registered with matplotlib's font manager when a heatmap is drawn, so
that neither a matplotlibrc nor a rebuilt font cache is needed. The families are given to
matplotlib as a list, which it falls back through glyph by glyph (matplotlib >= 3.6), ending with
its default family. matplotlib >= 3.11 lays text out with libraqm (bidi and shaping with
HarfBuzz), so Arabic and Hebrew words read right to left with their letters joined; a label's
language (BCP 47, as fairseq's language codes are) picks the regional forms of Han characters
(the ``locl`` feature of Noto Sans CJK).

Characters that none of these fonts has are drawn by matplotlib's Last Resort font as boxes; the
heatmap then logs one line naming them and the install command (``note_missing``).
"""

import logging
import unicodedata
from functools import cache
from pathlib import Path
from typing import Iterable

from matplotlib import font_manager

logger = logging.getLogger(__name__)

# Noto's file names, in the order matplotlib falls back through them: Latin, Greek and Cyrillic
# (fonts-noto-core), Arabic, Hebrew (fonts-noto-core), Chinese, Japanese and Korean (fonts-noto-cjk)
LABEL_FONT_FILES = ("NotoSans-Regular.ttf", "NotoSansArabic-Regular.ttf", "NotoSansHebrew-Regular.ttf", "NotoSansCJK-Regular.ttc")
INSTALL_FONTS = "bash scripts/install_fonts.sh (Debian: apt-get install fonts-noto-core fonts-noto-cjk)"


@cache
def label_families() -> tuple[str, ...]:
    """The families of the label fonts found on this system, each registered with matplotlib's
    font manager, then matplotlib's default family."""
    found = {Path(path).name: path for path in font_manager.findSystemFonts()}
    known = {Path(entry.fname).resolve() for entry in font_manager.fontManager.ttflist}
    families = []
    for name in LABEL_FONT_FILES:
        if name in found:
            if Path(found[name]).resolve() not in known:
                font_manager.fontManager.addfont(found[name])
            families.append(font_manager.get_font(found[name]).family_name)
    return (*families, font_manager.fontManager.defaultFamily["ttf"])


@cache
def covered(families: tuple[str, ...]) -> frozenset[int]:
    """The code points that the fonts matplotlib resolves for ``families`` have."""
    codepoints: set[int] = set()
    for family in families:
        path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        codepoints |= font_manager.get_font(path).get_charmap().keys()
    return frozenset(codepoints)


def drawn(character: str) -> bool:
    """Whether a character needs a glyph: not a space nor an invisible format character (ZWNJ,
    ZWJ, bidi marks), which libraqm handles without one."""
    return not character.isspace() and unicodedata.category(character) != "Cf"


def missing_characters(labels: Iterable[str], families: tuple[str, ...]) -> list[str]:
    """The characters of ``labels`` that no font of ``families`` has, in order of first use."""
    have = covered(families)
    return list(dict.fromkeys(c for label in labels for c in label if drawn(c) and ord(c) not in have))


def note_missing(labels: Iterable[str], families: tuple[str, ...]) -> bool:
    """Log one line when some characters of ``labels`` have no font (they are drawn as boxes),
    naming them and the install command; whether any was missing."""
    missing = missing_characters(labels, families)
    if missing:
        shown = " ".join(f"{c} (U+{ord(c):04X})" for c in missing[:5]) + (" ..." if len(missing) > 5 else "")
        logger.warning(
            f"{len(missing)} characters of the heatmap's labels are in no installed font and are drawn as "
            f"boxes: {shown}; install the Noto fonts: {INSTALL_FONTS}"
        )
    return bool(missing)
