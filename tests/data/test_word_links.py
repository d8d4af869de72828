"""Word links of the training pairs by eflomal, on any scheme's pieces (``data/word_links.py``,
``prepare_data.py --eflomal``): the projection onto pieces and back, and the prepared folder an
alignment head then trains on."""

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA, fairseq_train, run, tiny_training

from rnnsearch_plugin.analysis.alignment import word_groups
from rnnsearch_plugin.analysis.links import parse_pharaoh_line
from rnnsearch_plugin.data.textio import read_lines
from rnnsearch_plugin.data.word_links import to_pieces, to_words, words

PAIRS = {  # (source pieces, target pieces, scheme)
    "spm": ("▁A ▁black ▁dog ▁runs ▁through ▁the ▁snow .", "▁Un ▁chien ▁noir ▁court ▁dans ▁la ▁neige .", "spm"),
    "spm-split": ("▁Two ▁kit ten s ▁play , ▁he - ▁said", "▁Deux ▁chat ons ▁jou ent ▁", "spm"),
    "bpe": ("Two kit@@ ten@@ s play , he said", "Deux chat@@ ons jou@@ ent", "bpe"),
    "word": ("Two kittens play .", "Deux chatons jouent .", "word"),
}


@pytest.mark.parametrize("case", list(PAIRS))
def test_links_projected_onto_pieces_and_back_are_the_same_words(case):
    source, target, scheme = PAIRS[case]
    source_groups, target_groups = word_groups(source.split(), scheme), word_groups(target.split(), scheme)
    every = {(i, j) for i in range(source_groups[-1] + 1) for j in range(target_groups[-1] + 1)}
    for links in ({(0, 0)}, {(i, j) for i, j in every if (i * 7 + j * 3) % 4 == 0}, every, set()):
        pieces = to_pieces(links, source_groups, target_groups)
        assert to_words(pieces, source_groups, target_groups) == links
        # a word of n source pieces and m target pieces makes n x m piece links
        assert len(pieces) == sum(source_groups.count(i) * target_groups.count(j) for i, j in links)
    assert len(words(source, scheme)) == source_groups[-1] + 1


@pytest.fixture(scope="module")
def linked(tmp_path_factory) -> Path:
    """Multi30k's first 300 training pairs as sentencepiece pieces, linked by --eflomal."""
    out = tmp_path_factory.mktemp("linked")
    options = ("--scheme", "spm", "--train-lines", "300", "--vocab-size", "500", "--local-dir", os.path.join(SHARED_DATA, "multi30k"))
    run(sys.executable, "scripts/prepare_data.py", "multi30k", *options, "--out", str(out), "--eflomal")
    return out


def test_eflomal_links_every_training_pair_within_its_pieces_and_binarises_them(linked):
    links, sources, targets = (read_lines(linked / "spm" / name) for name in ("train.align", "train.en", "train.fr"))
    assert len(links) == len(sources) == 300
    for number, (line, source, target) in enumerate(zip(links, sources, targets), 1):
        found = {link for link, _ in parse_pharaoh_line(line, f"pair {number}", len(source.split()), len(target.split()))}
        source_groups, target_groups = word_groups(source.split(), "spm"), word_groups(target.split(), "spm")
        assert found == to_pieces(to_words(found, source_groups, target_groups), source_groups, target_groups)  # whole words
    assert sum(1 for line in links if line) > 290
    manifest = json.loads((linked / "manifest.json").read_text())
    assert manifest["train_alignments"]["file"] == "spm/train.align"
    assert manifest["train_alignments"]["links"] == sum(len(line.split()) for line in links)
    assert (linked / "bin" / "train.align.en-fr.bin").stat().st_size > 0


def test_a_rerun_links_nothing_again_and_a_head_trains_toward_the_links(linked, tmp_path):
    before = (linked / "spm" / "train.align").stat().st_mtime_ns
    options = ("--scheme", "spm", "--train-lines", "300", "--vocab-size", "500", "--local-dir", os.path.join(SHARED_DATA, "multi30k"))
    result = run(sys.executable, "scripts/prepare_data.py", "multi30k", *options, "--out", str(linked), "--eflomal")
    assert "eflomal" not in result.stdout.replace("--eflomal", "") and (linked / "spm" / "train.align").stat().st_mtime_ns == before
    head = ("--alignment-head", "--alignment-head-size", "16", "--load-alignments", "--alignment-lambda", "1", "--log-interval", "1")
    log = run(*fairseq_train(linked / "bin"), *tiny_training(tmp_path, 3), *head, "--criterion", "chunked_cross_entropy")
    assert "alignment_loss" in log.stdout + log.stderr
