"""The pipeline's binariser against fairseq-preprocess: the same files, byte for byte, from the same text."""

import errno
import random
from pathlib import Path

import pytest
from conftest import run

from rnnsearch_plugin.data import binarise
from rnnsearch_plugin.data.pipeline import binarize, prepare, preprocess_equivalent
from rnnsearch_plugin.data.schemes import WordScheme
from rnnsearch_plugin.data.textio import DataError

SPLITS = ["train", "valid", "test", "test1"]
LANGS = ("en", "fr")


def corpus(out: Path, types: int) -> None:
    """OUT/word/{split}.{en,fr}: sentences over ``types`` English words (training holds each) and 40
    French ones, with ties in the counts, the special symbols' own words, other white space and an empty line."""
    generator = random.Random(types)
    english = [f"w{index}" for index in range(types)] + ["<unk>", "</s>", "<s>", "<pad>", "madeupword0000", "é", "ß"]
    french = [f"m{index}" for index in range(40)] + ["<unk>", "à"]
    (out / "word").mkdir(parents=True)
    for split, pairs in zip(SPLITS, (3000, 50, 40, 30)):
        for lang, words in zip(LANGS, (english, french)):
            every = [" ".join(words[start : start + 25]) for start in range(0, len(words), 25)] if split == "train" else []
            lines = every + [" ".join(generator.choices(words, k=generator.randint(1, 30))) for _ in range(pairs - 2 - len(every))]
            lines += ["", "w1\tw2  \u00a0w3 \u2003w4 "]  # fairseq splits at any white space
            (out / "word" / f"{split}.{lang}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@pytest.mark.parametrize(
    ("types", "shortlist", "workers"),
    [(70_000, 0, 2), (300, 25, 1)],  # more than 65,500 types: 4-byte indices; a shortlist without padding
)
def test_the_same_files_as_fairseq_preprocess(tmp_path, monkeypatch, types, shortlist, workers):
    """Also when written a few indices at a time, the languages in a process each or in turn; the <unk>
    counted are the words outside the dictionary file."""
    corpus(tmp_path, types)
    command = preprocess_equivalent(tmp_path, "word", SPLITS, LANGS, shortlist, workers=2)
    run(*command)  # fairseq-preprocess writes OUT/bin
    (tmp_path / "bin").rename(tmp_path / "fairseq")
    monkeypatch.setattr(binarise, "FLUSH", 7)
    counts = binarize(tmp_path, "word", SPLITS, LANGS, shortlist, workers)
    written = sorted(path.name for path in (tmp_path / "fairseq").iterdir() if path.suffix in (".bin", ".idx", ".txt"))
    assert len(written) == len(SPLITS) * 2 * 2 + 2
    for name in written:
        assert (tmp_path / "bin" / name).read_bytes() == (tmp_path / "fairseq" / name).read_bytes(), name
    for lang in LANGS:
        words = {line.rsplit(" ", 1)[0] for line in (tmp_path / "bin" / f"dict.{lang}.txt").read_text(encoding="utf-8").splitlines()}
        for split in SPLITS:
            tokens = [
                word for line in (tmp_path / "word" / f"{split}.{lang}").read_text(encoding="utf-8").splitlines() for word in line.split()
            ]
            assert counts[split][lang] == {"tokens": len(tokens), "unk": sum(word not in words for word in tokens)}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_full_disk_while_binarising_is_one_line_and_leaves_no_binarized_data(tmp_path, monkeypatch, workers):
    """The disk fills up half-way through the training split's indices, in this process or in a
    language's own: one line naming the folder and what to do, and no OUT/bin (the part written
    stays OUT/bin.part, which a rerun replaces)."""
    corpus(tmp_path / "text", 300)

    def full(*arguments):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(binarise, "write_indices", full)
    out = tmp_path / "out"
    with pytest.raises(
        DataError, match=rf"^cannot write into {out} \(No space left on device\): free some space there, or give another --out$"
    ):
        prepare("text", WordScheme(workers=1), out, train=str(tmp_path / "text" / "word" / "train"), held_out=20, workers=workers)
    assert (out / "bin.part").exists() and not (out / "bin").exists() and not (out / "manifest.json").exists()
