"""Figure 3 as a picture, its labels in any script."""

import logging
import re
import warnings

import numpy as np
import pytest
from fontTools.ttLib import TTFont
from matplotlib import font_manager, ft2font, rc_context
from matplotlib.image import imread

from rnnsearch_plugin.analysis import heatmap
from rnnsearch_plugin.analysis.fonts import INSTALL_FONTS, LABEL_FONT_FILES, label_families
from rnnsearch_plugin.analysis.heatmap import FONT_SIZE, plot_alignment, plot_alignment_grid


def toy_weights() -> np.ndarray:
    """5 target x 7 source words; cell (0, 0) is 1 (white), cell (1, 0) is 0 (black)."""
    weights = np.full((5, 7), 0.5)
    weights[0, 0], weights[1, 0] = 1.0, 0.0
    return weights


SOURCE_WORDS = ["the", "agreement", "on", "the", "European", "area", "</s>"]


TARGET_WORDS = ["l'", "accord", "sur", "la", "zone"]


def test_plot_alignment_png_has_the_documented_size_and_grayscale(tmp_path):
    path = tmp_path / "figure3.png"
    plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, path)
    image = imread(path)
    # width 1.5 + 0.3 * 7 + 0.2 = 3.8 in, height 1.5 + 0.3 * 5 + 0.2 = 3.2 in, at 100 dpi
    assert image.shape[:2] == (320, 380)
    # cell (row r, column c) centred at x = (1.5 + 0.3 (c + 0.5)) in, y = (1.5 + 0.3 (r + 0.5)) in
    np.testing.assert_allclose(image[165, 165, :3], 1.0, atol=0.02)  # weight 1: white
    np.testing.assert_allclose(image[195, 165, :3], 0.0, atol=0.02)  # weight 0: black
    np.testing.assert_allclose(image[195, 195, :3], 0.5, atol=0.02)  # weight 0.5: mid gray
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind

    titled = tmp_path / "titled.png"
    plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, titled, title="(a)")
    assert imread(titled).shape[:2] == (360, 380)  # + 0.4 in for the title


def test_plot_alignment_svg_and_grid(tmp_path):
    svg = tmp_path / "figure3.svg"
    plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, svg, title="(a)")
    text = svg.read_text()
    assert text.startswith("<?xml") and "<svg" in text and 'width="273.6pt"' in text  # 3.8 in
    grid = tmp_path / "grid.png"
    items = [
        (toy_weights(), SOURCE_WORDS, TARGET_WORDS, "(a)"),
        (toy_weights()[:3], SOURCE_WORDS, TARGET_WORDS[:3], "(b)"),
        (toy_weights(), SOURCE_WORDS, TARGET_WORDS, None),
    ]
    plot_alignment_grid(items, grid)
    # two columns of 3.8 in; rows 3.6 in (titled 5-word panel) and 3.2 in (untitled one)
    assert imread(grid).shape[:2] == (680, 760)
    with pytest.raises(ValueError, match="2 source labels"):
        plot_alignment(toy_weights(), SOURCE_WORDS[:2], TARGET_WORDS, tmp_path / "bad.png")
    with pytest.raises(ValueError, match="png or .svg"):
        plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, tmp_path / "figure.pdf")


# Labels in five scripts besides Latin: Cyrillic and Greek along the top, Chinese, Japanese,
# Korean, Arabic and Hebrew down the left.
SOURCE_SCRIPTS = ["Привет", "мир", "Γειά", "σου", "</s>"]
TARGET_SCRIPTS = ["你好", "世界", "こんにちは", "안녕하세요", "مرحبا", "שלום", "</s>"]


def noto_families() -> tuple[str, ...]:
    """The label fonts' families, or a skip naming the command that installs them."""
    families = label_families()
    if len(families) <= len(LABEL_FONT_FILES):  # one is missing (the last family is matplotlib's default)
        pytest.skip(f"the Noto fonts are not installed: {INSTALL_FONTS}")
    return families


def svg_label_families(path) -> set[str]:
    """The font-family lists of the SVG's text elements (written as text with svg.fonttype none)."""
    return set(re.findall(r"font-family: ([^;\"]*)", path.read_text()))


def test_labels_in_any_script_come_from_fonts_that_have_every_character(tmp_path):
    noto_families()
    path = tmp_path / "scripts.svg"
    with warnings.catch_warnings(record=True) as caught, rc_context({"svg.fonttype": "none"}):
        warnings.simplefilter("always")
        plot_alignment(np.full((7, 5), 0.5), SOURCE_SCRIPTS, TARGET_SCRIPTS, path, languages=("ru", "zh"))
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]
    (family_list,) = svg_label_families(path)  # one list for every label
    families = [name.strip().strip("'") for name in family_list.split(",")]
    # the font files matplotlib resolves for that list, read with fontTools
    files = font_manager.fontManager._find_fonts_by_props(font_manager.FontProperties(family=families))
    assert len(files) == len(families)
    cmap: set[int] = set()
    for file in files:
        font = TTFont(file.path, fontNumber=file.face_index)
        cmap |= font.getBestCmap().keys()
    uncovered = {c for label in SOURCE_SCRIPTS + TARGET_SCRIPTS for c in label if ord(c) not in cmap}
    assert not uncovered


def test_arabic_and_hebrew_labels_read_right_to_left_and_arabic_letters_join():
    """matplotlib >= 3.11 lays labels out with libraqm: the first letter of a right-to-left word
    is drawn rightmost, and Arabic letters take their joined forms."""
    files = font_manager.fontManager._find_fonts_by_props(font_manager.FontProperties(family=list(noto_families())))
    font = font_manager.get_font(files)
    font.set_size(FONT_SIZE, 100)
    for word in ("שלום", "مرحبا"):
        drawn = list(font._layout(word, ft2font.LoadFlags.NO_HINTING))
        assert [item.char for item in sorted(drawn, key=lambda item: item.x)] == list(reversed(word))
    isolated_ha = font.get_char_index(ord("ح"))  # the middle letter of مرحبا joins on both sides
    assert [item.glyph_index for item in font._layout("مرحبا", ft2font.LoadFlags.NO_HINTING) if item.char == "ح"] != [isolated_ha]


def test_the_labels_language_picks_the_regional_forms_of_han_characters(tmp_path):
    noto_families()
    for language in ("zh", "ja"):  # 直 is drawn differently in Chinese and in Japanese
        plot_alignment(np.full((1, 1), 0.5), ["直"], ["直"], tmp_path / f"{language}.png", languages=(language, language))
    assert not np.array_equal(imread(tmp_path / "zh.png"), imread(tmp_path / "ja.png"))


def test_characters_without_a_font_get_one_line_naming_the_install_command(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(heatmap, "label_families", lambda: ("DejaVu Sans",))  # as without the Noto fonts
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_alignment(np.full((7, 5), 0.5), SOURCE_SCRIPTS, TARGET_SCRIPTS, tmp_path / "boxes.png")
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]
    (note,) = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    # DejaVu Sans has Cyrillic, Greek, Arabic and Hebrew, but not the 4 + 5 + 5 characters of Chinese, Japanese, Korean
    assert note.startswith(
        "14 characters of the heatmap's labels are in no installed font and are drawn as boxes: "
        "你 (U+4F60) 好 (U+597D) 世 (U+4E16) 界 (U+754C) こ (U+3053) ..."
    )
    assert note.endswith(f"install the Noto fonts: {INSTALL_FONTS}") and "\n" not in note
