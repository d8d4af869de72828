"""OUT/bin: fairseq's dictionaries and binarized splits, written in this process a line at a time and
the same bytes as fairseq-preprocess writes from the same files (tests/data/test_binarise.py runs both).
Memory holds a language's dictionary and 4 bytes per sentence, whatever the corpus's size.

Per language (``binarise_language``; the pipeline runs the two languages in two processes where it
has the cores), as fairseq-preprocess does it:
- the dictionary (``dict.{lang}.txt``) counts the training text's tokens, split at white space, in
  fairseq's ``Dictionary``, finalised the same way: most frequent first, ties in code-point order,
  the ``nwords`` most frequent (a shortlist) or all padded to a multiple of ``padding_factor``;
- each split becomes its sentences' token indices with ``</s>`` appended, every token outside the
  dictionary ``<unk>``, in fairseq's mmap format: ``{split}.{src}-{tgt}.{lang}.bin`` the indices in
  the smallest integer type that holds the vocabulary, ``.idx`` a header, the sentences' lengths
  (int32) and their byte offsets (int64).
"""

import struct
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
from fairseq.data import Dictionary
from fairseq.data.indexed_dataset import MMapIndexedDataset, _dtype_header_code, best_fitting_int_dtype

FLUSH = 1 << 16  # token indices held before they are written, and sentences whose offsets are computed at a time
TYPECODES = {np.uint16: "H", np.uint32: "I", np.int64: "q"}  # best_fitting_int_dtype's types as array's


@dataclass
class Counts:
    """What a binarised file holds: sentences, tokens (without the </s> of each) and how many of
    those are outside the dictionary."""

    sentences: int = 0
    tokens: int = 0
    unknown: int = 0


def text_lines(path: Path) -> Iterator[str]:
    """The lines of ``path`` as fairseq-preprocess reads them (text mode, UTF-8)."""
    with open(path, encoding="utf-8") as text:
        yield from text


def dictionary(train: Path, nwords: int, padding_factor: int) -> Dictionary:
    """The dictionary of the tokens of ``train`` (``nwords`` < 1: every token), as fairseq-preprocess
    builds it (``Dictionary.finalize`` orders it by count alone, so the counts may be added in any order)."""
    counts: Counter[str] = Counter()
    for line in text_lines(train):
        counts.update(line.split())
    words = Dictionary()
    for word, count in sorted(counts.items()):
        words.add_symbol(word, count)
    words.finalize(threshold=0, nwords=nwords, padding_factor=padding_factor)
    return words


def binarise(text: Path, words: Dictionary, prefix: Path) -> Counts:
    """``prefix``.bin and .idx: ``text``'s lines as token indices in ``words``, with </s> appended."""
    dtype = best_fitting_int_dtype(len(words))
    indices, unk, eos = words.indices, words.unk(), words.eos()
    sizes, pending, counts = array("i"), array(TYPECODES[dtype]), Counts()
    with open(f"{prefix}.bin", "wb") as data:
        for line in text_lines(text):
            sentence = [indices.get(word, unk) for word in line.split()]
            sentence.append(eos)
            pending.extend(sentence)
            sizes.append(len(sentence))
            if len(pending) >= FLUSH:
                counts.unknown += write_indices(pending, dtype, words.nspecial, data)
                pending = array(pending.typecode)
        counts.unknown += write_indices(pending, dtype, words.nspecial, data)
    counts.sentences = len(sizes)
    counts.tokens = sum(sizes) - counts.sentences
    counts.unknown -= counts.sentences  # the </s> of each sentence is a special symbol
    write_index(Path(f"{prefix}.idx"), sizes, dtype)
    return counts


def binarise_language(text: Path, lang: str, splits: list[str], out: Path, pair: str, shortlist: int) -> dict[str, Counts]:
    """``out``/dict.{lang}.txt of ``text``/train.{lang} (a ``shortlist`` of words, else all) and each
    split's ``out``/{split}.{pair}.{lang}.bin and .idx, from ``text``/{split}.{lang}."""
    words = dictionary(text / f"train.{lang}", shortlist + 4 if shortlist else 0, 1 if shortlist else 8)
    words.save(str(out / f"dict.{lang}.txt"))
    return {split: binarise(text / f"{split}.{lang}", words, out / f"{split}.{pair}.{lang}") for split in splits}


def write_indices(indices: array, dtype: type, nspecial: int, data: IO[bytes]) -> int:
    """Write ``indices``; how many of them are special symbols (<unk>, or a special symbol's word in
    the text, which is no word of the dictionary's file either)."""
    indices.tofile(data)
    return int(np.count_nonzero(np.frombuffer(indices, dtype=dtype) < nspecial))


def write_index(path: Path, sizes: array, dtype: type) -> None:
    """fairseq's ``MMapIndexedDataset.Index`` of sentences of ``sizes`` indices of ``dtype``, the
    offsets computed a block at a time."""
    itemsize = np.dtype(dtype).itemsize
    with open(path, "wb") as index:
        index.write(MMapIndexedDataset.Index._HDR_MAGIC + struct.pack("<Q", 1) + struct.pack("<B", _dtype_header_code(dtype)))
        index.write(struct.pack("<Q", len(sizes)))
        sizes.tofile(index)
        lengths, start = np.frombuffer(sizes, dtype=np.int32), 0
        for block in range(0, len(lengths), FLUSH):
            nbytes = lengths[block : block + FLUSH].astype(np.int64) * itemsize
            ends = np.cumsum(nbytes) + start
            index.write((ends - nbytes).tobytes())
            start = int(ends[-1])
