"""Figure 3 as a picture."""
import numpy as np
import pytest
from matplotlib.image import imread

from rnnsearch_plugin.analysis.heatmap import plot_alignment, plot_alignment_grid


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
    items = [(toy_weights(), SOURCE_WORDS, TARGET_WORDS, "(a)"), (toy_weights()[:3], SOURCE_WORDS, TARGET_WORDS[:3], "(b)"),
             (toy_weights(), SOURCE_WORDS, TARGET_WORDS, None)]
    plot_alignment_grid(items, grid)
    # two columns of 3.8 in; rows 3.6 in (titled 5-word panel) and 3.2 in (untitled one)
    assert imread(grid).shape[:2] == (680, 760)
    with pytest.raises(ValueError, match="2 source labels"):
        plot_alignment(toy_weights(), SOURCE_WORDS[:2], TARGET_WORDS, tmp_path / "bad.png")
    with pytest.raises(ValueError, match="png or .svg"):
        plot_alignment(toy_weights(), SOURCE_WORDS, TARGET_WORDS, tmp_path / "figure.pdf")
