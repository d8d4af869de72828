"""rnnsearch-heatmaps from a model: Figure 3, one cell per word."""

from conftest import run
from matplotlib.image import imread

from rnnsearch_plugin.analysis.alignment import merge_pieces
from rnnsearch_plugin.data.textio import read_lines


def test_heatmaps_from_a_model_have_one_cell_per_word(hub, multi30k, checkpoint, tmp_path):
    heatmaps = [
        "rnnsearch-heatmaps",
        "--path",
        str(checkpoint),
        "--data",
        str(multi30k / "bin"),
        "--input",
        str(multi30k / "raw" / "test.en"),
    ]
    single = run(*heatmaps, "--ids", "0,4", "--out", str(tmp_path / "single"))
    assert "| INFO |" in single.stderr and "DEBUG" not in single.stderr  # fairseq's import asks for DEBUG
    run(*heatmaps, "--ids", "0,4", "--grid", "--format", "svg", "--out", str(tmp_path / "grid"))
    alignment = hub.align(read_lines(multi30k / "raw" / "test.en")[4])
    weights, source, target = merge_pieces(alignment.weights, alignment.source_tokens, alignment.target_tokens, "spm")
    height, width = imread(tmp_path / "single" / "alignment_4.png").shape[:2]
    assert (width, height) == (round(100 * (1.7 + 0.3 * len(source))), round(100 * (2.1 + 0.3 * len(target))))
    assert "<svg" in (tmp_path / "grid" / "alignments.svg").read_text()
    refused = run(*heatmaps, "--ids", "5000", "--out", str(tmp_path / "x"), check=False)
    assert refused.returncode != 0 and "--ids 5000" in refused.stderr and "Traceback" not in refused.stderr
