"""Reading and writing parallel text without ever losing or misaligning a line."""

import errno
import gzip
import json
import os
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Optional

from ..errors import UserInputError


class DataError(UserInputError):
    """Bad input data: reported in one line naming the file and what to do."""


GZIP_MAGIC = b"\x1f\x8b"
BLOCK = 1 << 20  # bytes read at a time
BOM = "\ufeff"  # the byte-order mark some editors (Windows Notepad) write at the start of a UTF-8 file


def without_bom(start: str) -> str:
    """``start``, the beginning of a file's text, without the byte-order mark it may begin with, which is
    no part of the text."""
    return start.removeprefix(BOM)


def not_utf8(where: str, line: int, error: UnicodeDecodeError, offset: int = 0) -> DataError:
    """The error for bytes that are not UTF-8 on ``line`` (1-based) of ``where``, ``error`` raised by
    decoding the bytes from ``offset`` of the file on."""
    return DataError(f"{where} is not valid UTF-8 on line {line} ({error.reason} at byte {offset + error.start}); re-encode it as UTF-8")


def decode_lines(raw: bytes, where: str) -> list[str]:
    """The UTF-8 lines of ``raw`` (gzip-compressed when it starts with gzip's magic number),
    without line ends; ``where`` names the file in the error. A line ends at a line feed only
    (a carriage return before it is dropped), as fairseq and sacreBLEU read text: a form feed or
    U+2028 inside a sentence leaves it one line; a leading byte-order mark is dropped. Empty ``raw``
    has no lines."""
    if raw[:2] == GZIP_MAGIC:
        raw = gzip.decompress(raw)
    try:
        text = without_bom(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise not_utf8(where, raw[: error.start].count(b"\n") + 1, error) from None
    lines = text.removesuffix("\n").split("\n") if text else []
    return [line.rstrip("\r") for line in lines]


def stream_lines(path: Path) -> Iterator[str]:
    """The lines of a (possibly gzipped) UTF-8 file as ``read_lines`` gives them, one at a time
    (for files too large to hold)."""
    with open(input_file(path), "rb") as handle:
        yield from lines_of(handle, str(path))


def lines_of(handle: IO[bytes], where: str) -> Iterator[str]:
    """The lines of a binary stream as ``decode_lines`` gives them, one at a time (read and decoded
    ``BLOCK`` bytes at a time), gzip-decompressed when it starts with gzip's magic number; ``where``
    names it in the errors. Bytes that are not UTF-8 are a DataError naming their line; a corrupt or
    truncated compressed stream one naming the last line read."""
    number = 0
    try:
        stream = gzip.GzipFile(fileobj=handle) if handle.peek(2)[:2] == GZIP_MAGIC else handle  # type: ignore[attr-defined]
        compressed = stream if stream is not handle else None
        offset = 0
        for raw in whole_lines(stream):
            lines, error = decoded(raw, compressed, where, number, offset)
            if number == 0 and lines:
                lines[0] = without_bom(lines[0])
            yield from lines  # those before bytes that are not UTF-8, too
            if error is not None:
                raise error
            number, offset = number + len(lines), offset + len(raw)
    except (EOFError, OSError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
        raise DataError(
            f"{where} is corrupt or truncated after line {number:,} ({error}): download it again, or delete it and rerun"
        ) from None


def whole_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """The bytes of ``stream``, read ``BLOCK`` bytes at a time, in pieces of whole lines, each piece
    ending in a line feed (one given to a last line without it)."""
    rest = b""
    for block in iter(lambda: stream.read(BLOCK), b""):
        block = rest + block
        end = block.rfind(b"\n") + 1  # after the last whole line
        if end:
            yield block[:end]
        rest = block[end:]
    if rest:
        yield rest + b"\n"


def decoded(raw: bytes, compressed: Optional[IO[bytes]], where: str, number: int, offset: int) -> tuple[list[str], Optional[DataError]]:
    """The lines of ``raw``, whole lines each ending in a line feed that start on line ``number + 1``
    at byte ``offset`` of ``where``, without their line ends (nor a carriage return before one). Bytes
    that are not UTF-8: the lines before theirs, and a DataError naming their line, once a
    ``compressed`` stream is read to its end (damaged compressed data decodes to garbage before its
    checksum fails)."""
    try:
        return [line.rstrip("\r") for line in raw.decode("utf-8").split("\n")[:-1]], None
    except UnicodeDecodeError as error:
        if compressed is not None:
            deque(compressed, maxlen=0)
        before = raw[: raw.rfind(b"\n", 0, error.start) + 1].decode("utf-8")
        return [line.rstrip("\r") for line in before.split("\n")[:-1]], not_utf8(
            where, number + raw.count(b"\n", 0, error.start) + 1, error, offset
        )


def counted(lines: int) -> str:
    """How many lines a file has, in words: "is empty", "has 1 line", "has 2 lines"."""
    return "is empty" if lines == 0 else f"has {lines:,} line{'' if lines == 1 else 's'}"


def input_file(path: Path) -> Path:
    """``path``, a file the user gave to be read; DataError (one line) when there is nothing there or a folder."""
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a file: give a file in its place")
    if not path.exists():
        raise DataError(f"{path} does not exist")
    return path


def read_lines(path: Path) -> list[str]:
    """The lines of a (possibly gzipped) UTF-8 file, without line ends."""
    return decode_lines(input_file(path).read_bytes(), str(path))


def write_atomic(path: Path, lines: list[str]) -> None:
    """Write under a temporary name and rename when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)
    os.replace(temporary, path)


class AtomicFiles:
    """Line-aligned files written together under ``NAME.part`` and renamed to ``NAME`` only when all
    are complete (``with AtomicFiles(paths) as files: files.write(row)``); an error, a full disk
    among them, removes the ``.part`` files, so that nothing half-written looks complete."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.parts = [path.with_name(path.name + ".part") for path in paths]
        self.handles: list[IO[str]] = []

    def __enter__(self) -> "AtomicFiles":
        for part in self.parts:
            part.parent.mkdir(parents=True, exist_ok=True)
            self.handles.append(open(part, "w", encoding="utf-8", newline="\n"))
        return self

    def write(self, row: Iterable[str]) -> None:
        """One line in each file."""
        for handle, line in zip(self.handles, row):
            handle.write(line + "\n")

    def write_column(self, column: int, lines: Iterable[str]) -> None:
        """Every line of one file, the ``column``-th (the files must end with as many lines)."""
        self.handles[column].writelines(line + "\n" for line in lines)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            for handle in self.handles:
                handle.close()
        except OSError as closing:
            error = error or closing
        if error is None:
            for part, path in zip(self.parts, self.paths):
                os.replace(part, path)
            return
        for part in self.parts:
            part.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise out_of_space(self.paths[0].parent, error) from None


def out_of_space(folder: Path, error: OSError) -> DataError:
    """The error for a write into ``folder`` that failed: a full disk, or a folder that cannot be written."""
    what = "free some space there" if error.errno in (errno.ENOSPC, errno.EDQUOT) else "check that it can be written to"
    return DataError(f"cannot write into {folder} ({error.strerror or error}): {what}, or give another --out")


def truncate_to_lines(path: Path, lines: int) -> None:
    """Cut ``path`` after its ``lines``-th line end (it must hold at least that many)."""
    with open(path, "r+b") as handle:
        position = 0
        while lines:
            block = handle.read(1 << 20)
            if block.count(b"\n") < lines:
                position, lines = position + len(block), lines - block.count(b"\n")
                continue
            end = -1
            for _ in range(lines):
                end = block.index(b"\n", end + 1)
            position, lines = position + end + 1, 0
        handle.truncate(position)


def complete_lines(path: Path) -> int:
    """How many line ends ``path`` holds (a last line without one is not complete)."""
    with open(path, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


class ResumableLines:
    """Files written line by line under ``NAME.part`` and renamed to ``NAME`` only when complete,
    so that no half-written file looks complete. ``NAME.part.json`` (beside the first file) records
    what the run was given (``signature``); a run with the same signature resumes after the last
    line that every file completed, any other starts afresh."""

    def __init__(self, paths: list[Path], signature: dict) -> None:
        self.paths = paths
        self.parts = [path.with_name(path.name + ".part") for path in paths]
        self.state = self.parts[0].with_name(self.parts[0].name + ".json")
        self.signature = signature
        self.handles: list = []

    def open(self) -> int:
        """Open the files; the number of lines an earlier run of the same signature completed."""
        done = 0
        if self.state.exists() and all(part.exists() for part in self.parts) and json.loads(self.state.read_text()) == self.signature:
            done = min(complete_lines(part) for part in self.parts)
            for part in self.parts:
                truncate_to_lines(part, done)
        else:
            for part in self.parts:
                part.parent.mkdir(parents=True, exist_ok=True)
                part.write_bytes(b"")
            self.state.write_text(json.dumps(self.signature))
        self.handles = [open(part, "a", encoding="utf-8", newline="\n") for part in self.parts]
        return done

    def write(self, rows: list[list[str]]) -> None:
        """One line per file for each row, flushed to disk before returning."""
        for handle, lines in zip(self.handles, zip(*rows)):
            handle.writelines(line + "\n" for line in lines)
            handle.flush()
            os.fsync(handle.fileno())

    def close(self) -> None:
        for handle in self.handles:
            handle.close()

    def finish(self) -> None:
        """Close and rename every ``.part`` to its name; the resume state goes."""
        self.close()
        for part, path in zip(self.parts, self.paths):
            os.replace(part, path)
        self.state.unlink()
