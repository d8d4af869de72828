"""Word alignments of the prepared training pairs for guided alignment (``--alignment-lambda`` of
``criterions/chunked_cross_entropy.py``; not the paper's), checked and binarised where fairseq's
``--load-alignments`` reads them:

    OUT/word/train.align               the checked alignments (Pharaoh format)
    OUT/bin/train.align.{src}-{tgt}.*  fairseq-preprocess --align-suffix's binarisation of it

(``--eflomal`` links any scheme's pieces itself, ``word_links.py``: OUT/{scheme}/train.align.)

The file aligns the pipeline's own output, ``OUT/word/train.{src,tgt}``: the training pairs after
cleaning and the ``--max-len`` filter, line for line, so that no filtering can put the two out of
step. Each line holds links ``i-j``, 0-based positions of a source and a target word of its pair
(as fast_align and eflomal write them); a line may be empty (a pair without links). Only the word
scheme is served: its tokens are the words the links count (the ``--shortlist`` turns rare ones
into ``<unk>``, one token still), where a subword scheme would need the links projected to pieces.
"""

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any, Optional

from .commands import run_shown
from .schemes import WORD
from .textio import DataError, counted, read_lines, write_atomic

LINK = re.compile(r"(\d+)-(\d+)")


def checked_alignments(path: Path, out: Path, scheme: str, langs: tuple[str, str]) -> list[str]:
    """The lines of ``path``, each link in range of its prepared training pair, links separated by
    one space; DataError naming the first problem otherwise."""
    if scheme != WORD:
        raise DataError(
            f"--train-alignments needs --scheme word: its links are word positions, and the {scheme} scheme's pieces are not words"
        )
    prepared = [out / WORD / f"train.{lang}" for lang in langs]
    if not all(side.exists() for side in prepared):
        raise DataError(
            f"{prepared[0]} is not prepared yet: run this command without --train-alignments first, "
            f"align {prepared[0]} with {prepared[1]}, then add --train-alignments"
        )
    lines = read_lines(path)
    sources, targets = (read_lines(side) for side in prepared)
    if len(lines) != len(sources):
        raise DataError(
            f"{path} {counted(len(lines))} and {prepared[0]} {counted(len(sources))}: align the prepared "
            f"training pairs ({prepared[0]} and {prepared[1]}), line for line"
        )
    for number, (line, source, target) in enumerate(zip(lines, sources, targets), 1):
        check_line(line, len(source.split()), len(target.split()), f"{path}, line {number}")
    return [" ".join(line.split()) for line in lines]  # no stray whitespace, such as a carriage return, for fairseq to read


def check_line(line: str, source_words: int, target_words: int, where: str) -> None:
    """One Pharaoh line: links i-j, each once, i < source_words, j < target_words."""
    links = line.split()
    for link in links:
        match = LINK.fullmatch(link)
        if match is None:
            raise DataError(f"{where}: {link!r} is not a link i-j (Pharaoh format: 0-based source-target word positions)")
        if int(match[1]) >= source_words or int(match[2]) >= target_words:
            raise DataError(
                f"{where}: link {link} is outside the pair ({source_words} source and {target_words} target words; positions count from 0)"
            )
    if len(set(links)) != len(links):
        raise DataError(f"{where}: a link is given twice; give each once")


def binarize_alignments(lines: list[str], out: Path, scheme: str, langs: tuple[str, str], preprocess: list[str]) -> dict[str, Any]:
    """OUT/{scheme}/train.align (links of the scheme's tokens) and OUT/bin/train.align.{src}-{tgt}.{bin,idx}:
    ``preprocess`` (fairseq-preprocess and its languages) on the training pairs only, with the dictionaries of
    OUT/bin and ``--align-suffix``, into a scratch folder from which the two files are moved;
    skipped when they hold ``lines`` already. Returns the manifest's entry."""
    source, target = langs
    checked, bin_dir = out / scheme / "train.align", out / "bin"
    binaries = [bin_dir / f"train.align.{source}-{target}.{suffix}" for suffix in ("idx", "bin")]
    if all(path.exists() for path in binaries) and checked.exists() and read_lines(checked) == lines:
        return manifest_entry(lines, scheme, langs)
    for path in binaries:  # the index first: fairseq finds no half-replaced pair
        path.unlink(missing_ok=True)
    write_atomic(checked, lines)
    scratch = out / "align.part"
    shutil.rmtree(scratch, ignore_errors=True)
    command = [
        *preprocess,
        "--trainpref",
        str(out / scheme / "train"),
        "--destdir",
        str(scratch),
        "--srcdict",
        str(bin_dir / f"dict.{source}.txt"),
        "--tgtdict",
        str(bin_dir / f"dict.{target}.txt"),
        "--align-suffix",
        "align",
    ]
    run_shown(command)
    for path in reversed(binaries):
        os.replace(scratch / path.name, path)
    shutil.rmtree(scratch)
    return manifest_entry(lines, scheme, langs)


def manifest_entry(lines: list[str], scheme: str, langs: tuple[str, str]) -> dict[str, Any]:
    """What the manifest records of the binarised alignments ``lines``."""
    return {
        "file": f"{scheme}/train.align",
        "sha256": hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest(),
        "links": sum(len(line.split()) for line in lines),
        "pairs_with_links": sum(1 for line in lines if line),
        "fairseq_split": f"bin/train.align.{langs[0]}-{langs[1]}",
    }


def binarised_entry(out: Path, scheme: str, langs: tuple[str, str]) -> Optional[dict[str, Any]]:
    """``manifest_entry`` of alignments an earlier run binarised into OUT/bin, None without them."""
    if not (out / "bin" / f"train.align.{langs[0]}-{langs[1]}.idx").exists():
        return None
    return manifest_entry(read_lines(out / scheme / "train.align"), scheme, langs)
