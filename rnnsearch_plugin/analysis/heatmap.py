"""Soft alignments drawn as in Figure 3 of the paper: source words along the top (labels
rotated 90 degrees), target words down the left, alpha_ij in grayscale (0 black, 1 white).

Size: every word gets CELL = 0.3 inch along its axis, so labels stay readable at any length
of sentence. One heatmap is

    width  = LABELS + CELL * S + EDGE                     = 1.5 + 0.3 S + 0.2 inches
    height = [TITLE +] LABELS + CELL * T + EDGE           = [0.4 +] 1.5 + 0.3 T + 0.2 inches

at DPI = 100 (S source words, T target words; LABELS holds the word labels, EDGE is the blank
margin right and below, TITLE the strip for a title when there is one). A grid puts such
panels in rows and columns, each grid column as wide as its widest panel and each grid row as
high as its highest. The figure is drawn with the Agg canvas of its own (no pyplot, no global
backend switch) and written as PNG or SVG, by the path's suffix, atomically.

Labels in any script: the Noto fonts of ``fonts.py`` with per-glyph fallback, laid out by libraqm
(Arabic and Hebrew read right to left, letters joined), each axis's labels tagged with its
language when given (the regional forms of Han characters); a character no installed font has is
named in one logged line with the install command, never left as a silent box.
"""

import math
import os
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .fonts import label_families, note_missing

CELL = 0.3  # inches per word, along both axes
LABELS = 1.5  # inches for the word labels, left of the matrix (target) and above it (source)
EDGE = 0.2  # inches of blank margin right of and below the matrix
TITLE = 0.4  # inches for the title strip above the source labels
DPI = 100
FONT_SIZE = 9  # points: a cell is 0.3 inch = 21.6 points, so neighbouring labels never touch
FORMATS = {".png": "png", ".svg": "svg"}

MISSING_GLYPH = "Glyph .* missing from font"  # matplotlib's warning, one per character
Panel = tuple[np.ndarray, list[str], list[str], Optional[str]]  # weights T x S, source, target, title
Languages = Optional[tuple[str, str]]  # (source, target) language codes of the labels


def plot_alignment(
    weights: np.ndarray,
    source_labels: list[str],
    target_labels: list[str],
    path: Path,
    title: Optional[str] = None,
    languages: Languages = None,
) -> None:
    """Figure 3 for one sentence pair: weights (T x S, target x source) to ``path`` (.png/.svg)."""
    plot_alignment_grid([(weights, source_labels, target_labels, title)], path, columns=1, languages=languages)


def plot_alignment_grid(items: list[Panel], path: Path, columns: int = 2, languages: Languages = None) -> None:
    """Several heatmaps in one figure, ``columns`` to a row, in the order given (as Figure 3's
    four panels (a)-(d)); each item is (weights T x S, source labels, target labels, title);
    ``languages``: the (source, target) languages of every panel's labels."""
    if not items:
        raise ValueError("no alignment to plot")
    format_ = image_format(path)
    panels = [checked(*item) for item in items]
    columns = min(columns, len(panels))
    sizes = [panel_size(weights, title) for weights, _, _, title in panels]
    widths = [max(size[0] for size in sizes[column::columns]) for column in range(columns)]
    heights = [max(size[1] for size in sizes[row * columns : (row + 1) * columns]) for row in range(math.ceil(len(panels) / columns))]
    figure = Figure(figsize=(sum(widths), sum(heights)), dpi=DPI)
    FigureCanvasAgg(figure)
    families = label_families()
    for index, panel in enumerate(panels):
        row, column = divmod(index, columns)
        place(figure, panel, sum(widths[:column]), sum(heights[:row]), families, languages or (None, None))
    with warnings.catch_warnings():
        if note_missing((label for _, source, target, _ in panels for label in source + target), families):
            warnings.filterwarnings("ignore", message=MISSING_GLYPH)  # the note names them all at once
        save_atomic(figure, path, format_)


def image_format(path: Path) -> str:
    """'png' or 'svg' from the path's suffix."""
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: cannot tell the image format, name it .png or .svg")
    return FORMATS[path.suffix.lower()]


def checked(weights: np.ndarray, source_labels: list[str], target_labels: list[str], title: Optional[str]) -> Panel:
    """The panel with its weights as a float array, once its shape matches its labels."""
    weights = np.asarray(weights, dtype=float)  # T x S
    if weights.ndim != 2 or weights.size == 0:
        raise ValueError(f"weights must be a non-empty target x source matrix, got shape {weights.shape}")
    if weights.shape != (len(target_labels), len(source_labels)):
        raise ValueError(f"weights are {weights.shape} but there are {len(target_labels)} target and {len(source_labels)} source labels")
    return weights, source_labels, target_labels, title


def panel_size(weights: np.ndarray, title: Optional[str]) -> tuple[float, float]:
    """(width, height) in inches of one heatmap (the module docstring's formula)."""
    rows, columns = weights.shape  # T, S
    return LABELS + CELL * columns + EDGE, (TITLE if title else 0.0) + LABELS + CELL * rows + EDGE


def place(
    figure: Figure, panel: Panel, left: float, top: float, families: tuple[str, ...], languages: tuple[Optional[str], Optional[str]]
) -> None:
    """Draw ``panel`` with its top-left corner ``left``, ``top`` inches from the figure's, its
    labels in the font ``families`` and (source, target) ``languages``."""
    weights, source_labels, target_labels, title = panel
    figure_width, figure_height = figure.get_size_inches()
    rows, columns = weights.shape  # T, S
    matrix_left, matrix_top = left + LABELS, top + (TITLE if title else 0.0) + LABELS
    axes = figure.add_axes(
        (
            matrix_left / figure_width,
            1 - (matrix_top + CELL * rows) / figure_height,
            CELL * columns / figure_width,
            CELL * rows / figure_height,
        )
    )
    draw(axes, weights, source_labels, target_labels, families, languages)
    if title:
        figure.text(
            (matrix_left + CELL * columns / 2) / figure_width,
            1 - (top + TITLE / 2) / figure_height,
            title,
            ha="center",
            va="center",
            fontsize=FONT_SIZE + 1,
        )


def draw(
    axes: Axes,
    weights: np.ndarray,
    source_labels: list[str],
    target_labels: list[str],
    families: tuple[str, ...],
    languages: tuple[Optional[str], Optional[str]],
) -> None:
    """The heatmap itself: one cell per (target word, source word), 0 black and 1 white."""
    axes.imshow(weights, cmap="gray", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    axes.xaxis.tick_top()
    source_language, target_language = languages
    axes.set_xticks(
        range(len(source_labels)), source_labels, rotation=90, fontsize=FONT_SIZE, family=list(families), language=source_language
    )
    axes.set_yticks(range(len(target_labels)), target_labels, fontsize=FONT_SIZE, family=list(families), language=target_language)
    axes.tick_params(length=0)


def save_atomic(figure: Figure, path: Path, format_: str) -> None:
    """Write under a temporary name in the same folder, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".part")
    try:
        figure.savefig(temporary, format=format_, dpi=DPI)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
