"""Reading and writing parallel text without ever losing or misaligning a line."""
import gzip
import os
from pathlib import Path


class DataError(ValueError):
    """Bad input data: reported in one line naming the file and what to do."""


def decode_lines(raw: bytes, where: str) -> list[str]:
    """The UTF-8 lines of ``raw`` (gzip-compressed when it starts with gzip's magic number),
    without line ends; ``where`` names the file in the error."""
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise DataError(f"{where} is not valid UTF-8 on line {line} ({error.reason} at byte {error.start}); "
                        "re-encode it as UTF-8") from None
    lines = text.split("\n")
    return [line.rstrip("\r") for line in (lines[:-1] if text.endswith("\n") else lines)]


def read_lines(path: Path) -> list[str]:
    """The lines of a (possibly gzipped) UTF-8 file, without line ends."""
    if not path.exists():
        raise DataError(f"{path} does not exist")
    return decode_lines(path.read_bytes(), str(path))


def write_atomic(path: Path, lines: list[str]) -> None:
    """Write under a temporary name and rename when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)
    os.replace(temporary, path)
